#!/usr/bin/env bash
# The Debian packages as a user gets them: built by scripts/package,
# accepted by lintian (no errors), unpacked with dpkg-deb into a throwaway
# root. The server's, leasehold: its unit accepted by systemd-analyze
# verify, its binary started with its config (on a free loopback port, data
# in a temp dir): GET /healthz answers 200 with the version --version
# prints, which is also the package's version, and SIGTERM stops it
# cleanly. The client's, leasehold-client-dev: the header, the archive, the
# CMake package and the pkg-config file (prefix /usr) and nothing of the
# server, the development packages it needs in Depends; examples/
# client-outside built against the unpacked CMake package and run against
# the unpacked server. CTest `debian_package`; scripts/test builds the
# packages before CTest runs, so here they are only checked to be current.
set -euo pipefail
cd "$(dirname "$0")/../.."

source tests/package/common.sh package_test

built=$(scripts/package | tail -2)
package=$(grep '/leasehold_[^/]*\.deb$' <<<"$built" || true)
client_package=$(grep '/leasehold-client-dev_[^/]*\.deb$' <<<"$built" || true)
[ -f "$package" ] || fail "scripts/package made no server package ($built)"
[ -f "$client_package" ] || fail "scripts/package made no client package ($built)"
echo "packages: $package $client_package"


# lintian: errors fail, warnings are printed.
for deb in "$package" "$client_package"; do
  lintian --fail-on error --tag-display-limit 0 "$deb" >"$work/lintian" 2>&1 ||
    { cat "$work/lintian" >&2; fail "lintian reports errors in $deb"; }
  echo "lintian $(basename "$deb"): $(grep -c '^E:' "$work/lintian" || true) errors, $(grep -c '^W:' "$work/lintian" || true) warnings"
  sed 's/^/  /' "$work/lintian"
done

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

# The client's package: its files, and nothing of the server's.
client_root=$work/client-root
dpkg-deb -x "$client_package" "$client_root"
libdir=usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)
for f in usr/include/leasehold/client.h "$libdir/libleasehold_client.a" \
  "$libdir/cmake/leasehold/leaseholdConfig.cmake" \
  "$libdir/cmake/leasehold/leaseholdConfigVersion.cmake" \
  "$libdir/cmake/leasehold/leaseholdTargets.cmake" \
  "$libdir/pkgconfig/leasehold-client.pc" \
  usr/share/doc/leasehold-client-dev/copyright \
  usr/share/doc/leasehold-client-dev/changelog.gz \
  usr/share/doc/leasehold-client-dev/client.md; do
  [ -f "$client_root/$f" ] || fail "the client package has no /$f"
done
[ "$(find "$client_root/usr/include" -type f | wc -l)" = 1 ] ||
  fail "the client package has headers besides leasehold/client.h"
[ ! -e "$client_root/usr/bin" ] && [ ! -e "$client_root/etc" ] ||
  fail "the client package has the server's files"
[ ! -e "$root/usr/include" ] && [ -z "$(find "$root" -name '*.a')" ] ||
  fail "the server package has the client's files"
grep -qx 'prefix=/usr' "$client_root/$libdir/pkgconfig/leasehold-client.pc" ||
  fail "leasehold-client.pc's prefix is not /usr"
client_depends=$(dpkg-deb -f "$client_package" Depends)
for dev in 'libboost[0-9.]*-dev' 'libboost-json[0-9.]*-dev' libssl-dev; do
  grep -qE "(^|, )$dev(,|$)" <<<"$client_depends" ||
    fail "the client's Depends lacks $dev: $client_depends"
done
[ "$(dpkg-deb -f "$client_package" Section)" = libdevel ] ||
  fail "the client package's section is $(dpkg-deb -f "$client_package" Section)"
[ "$(dpkg-deb -f "$client_package" Version)" = "$(dpkg-deb -f "$package" Version)" ] ||
  fail "the two packages' versions differ"
echo "client package: $(cd "$client_root" && find . -type f | sort | tr '\n' ' ')"
echo "client Depends: $client_depends"

# A program outside the tree, built against the unpacked CMake package
# (the Release archive as shipped); it runs against the server below.
example=$work/example
cmake -S examples/client-outside -B "$example" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$client_root/usr" >"$work/example.log" 2>&1 &&
  cmake --build "$example" >>"$work/example.log" 2>&1 ||
  { cat "$work/example.log" >&2; fail "building examples/client-outside against the package"; }
grep -qx "leasehold_DIR:PATH=$client_root/$libdir/cmake/leasehold" "$example/CMakeCache.txt" ||
  fail "find_package(leasehold) did not find the unpacked package"
echo "examples/client-outside: built against the package"

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
port=$(await_port "$work/port" "$work/serve.err")
answer=$(curl -sS --max-time 10 -w '\n%{http_code}' "http://127.0.0.1:$port/healthz")
[ "$(tail -1 <<<"$answer")" = 200 ] || fail "GET /healthz answered $answer"
grep -qF "\"version\":\"$version\"" <<<"$answer" ||
  fail "GET /healthz does not carry version $version: $answer"
echo "GET /healthz: $(head -1 <<<"$answer")"
"$example/hold-lock" "http://127.0.0.1:$port" invoice:481 >"$work/hold-lock.out" 2>&1 ||
  { cat "$work/hold-lock.out" >&2; fail "hold-lock against the packaged server"; }
grep -qx "second session refused: timeout" "$work/hold-lock.out" &&
  grep -qE "^second session acquired invoice:481 fence [1-9][0-9]*$" "$work/hold-lock.out" ||
  { cat "$work/hold-lock.out" >&2; fail "hold-lock did not lock as it should"; }
echo "hold-lock: $(tr '\n' ';' <"$work/hold-lock.out")"
stop_server "$work/serve.err"
[ -n "$(ls -A "$work/data")" ] || fail "nothing in --data $work/data"
echo "package_test: ok ($version)"
