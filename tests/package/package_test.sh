#!/usr/bin/env bash
# The Debian package as a user gets it: built by scripts/package, accepted
# by lintian (no errors) and systemd-analyze verify, unpacked with dpkg-deb
# into a throwaway root, and its binary started with its config (on a free
# loopback port, data in a temp dir): GET /healthz answers 200 with the
# version --version prints, which is also the package's version, and
# SIGTERM stops it cleanly. CTest `debian_package`; scripts/test builds
# the package before CTest runs, so here it is only checked to be current.
set -euo pipefail
cd "$(dirname "$0")/../.."

fail() {
  echo "package_test: FAILED: $*" >&2
  exit 1
}

package=$(scripts/package | tail -1)
[ -f "$package" ] || fail "scripts/package made no package ($package)"
echo "package: $package"

work=$(mktemp -d)
server=""
cleanup() {
  if [ -n "$server" ]; then kill -KILL "$server" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# lintian: errors fail, warnings are printed.
lintian --fail-on error --tag-display-limit 0 "$package" >"$work/lintian" 2>&1 ||
  { cat "$work/lintian" >&2; fail "lintian reports errors"; }
echo "lintian: $(grep -c '^E:' "$work/lintian" || true) errors, $(grep -c '^W:' "$work/lintian" || true) warnings"
sed 's/^/  /' "$work/lintian"

# The contents.
root=$work/root
dpkg-deb -x "$package" "$root"
for f in usr/bin/leasehold usr/lib/systemd/system/leasehold.service \
  usr/lib/sysusers.d/leasehold.conf etc/leasehold/leasehold.json \
  usr/share/man/man1/leasehold.1.gz usr/share/doc/leasehold/copyright \
  usr/share/doc/leasehold/changelog.gz usr/share/doc/leasehold/README.md \
  usr/share/doc/leasehold/api.md usr/share/doc/leasehold/configuration.md \
  usr/share/doc/leasehold/operations.md; do
  [ -f "$root/$f" ] || fail "the package has no /$f"
done
dpkg-deb --info "$package" conffiles | grep -qx /etc/leasehold/leasehold.json ||
  fail "/etc/leasehold/leasehold.json is not a conffile"
depends=$(dpkg-deb -f "$package" Depends)
for lib in libjemalloc2 libsqlite3-0 libpq5; do
  grep -q "$lib" <<<"$depends" || fail "Depends lacks $lib: $depends"
done
zcat "$root/usr/share/man/man1/leasehold.1.gz" | grep -q '^\.TH LEASEHOLD "1"' ||
  fail "the man page has no .TH LEASEHOLD 1 header"

# The unit, as systemd would load it from this root.
unit=$root/usr/lib/systemd/system/leasehold.service
# (A copy whose ExecStart names the unpacked binary: verify checks that
# the command exists, and a --root lacks the system's own units.)
mkdir -p "$work/units"
sed "s|^ExecStart=/usr/bin/leasehold|ExecStart=$root/usr/bin/leasehold|" "$unit" \
  >"$work/units/leasehold.service"
systemd-analyze verify --man=no "$work/units/leasehold.service" >"$work/verify" 2>&1 ||
  { cat "$work/verify" >&2; fail "systemd-analyze verify rejects the unit"; }
[ ! -s "$work/verify" ] || { cat "$work/verify" >&2; fail "systemd-analyze verify warns"; }
grep -qx 'ExecStart=/usr/bin/leasehold serve --config /etc/leasehold/leasehold.json --data /var/lib/leasehold' "$unit" ||
  fail "the unit's ExecStart is not the documented one"
echo "systemd-analyze verify: accepted"

# The version: --version, the package's and /healthz's agree.
printed=$("$root/usr/bin/leasehold" --version)
version=${printed#leasehold }
[[ "$printed" =~ ^leasehold\ [0-9][0-9A-Za-z.+~-]*$ ]] ||
  fail "--version printed \"$printed\""
[ "$(dpkg-deb -f "$package" Version)" = "${version//-/+}" ] ||
  fail "package version $(dpkg-deb -f "$package" Version), binary $version"

# The packaged binary with the packaged config, on a free loopback port.
"$root/usr/bin/leasehold" serve --config "$root/etc/leasehold/leasehold.json" \
  --data "$work/data" --listen 127.0.0.1:0 --port-file "$work/port" \
  2>"$work/serve.err" &
server=$!
for _ in $(seq 1 200); do
  [ -s "$work/port" ] && break
  kill -0 "$server" 2>/dev/null || { cat "$work/serve.err" >&2; fail "the server exited"; }
  sleep 0.05
done
[ -s "$work/port" ] || { cat "$work/serve.err" >&2; fail "the server wrote no port file"; }
port=$(cat "$work/port")
answer=$(curl -sS --max-time 10 -w '\n%{http_code}' "http://127.0.0.1:$port/healthz")
[ "$(tail -1 <<<"$answer")" = 200 ] || fail "GET /healthz answered $answer"
grep -qF "\"version\":\"$version\"" <<<"$answer" ||
  fail "GET /healthz does not carry version $version: $answer"
echo "GET /healthz: $(head -1 <<<"$answer")"
kill -TERM "$server"
status=0
wait "$server" || status=$?
server=""
[ "$status" -eq 0 ] || { cat "$work/serve.err" >&2; fail "SIGTERM: exit $status"; }
[ -n "$(ls -A "$work/data")" ] || fail "nothing in --data $work/data"
echo "package_test: ok ($version)"
