#!/usr/bin/env bash
# The Debian packages installed, upgraded, removed and purged with dpkg on
# this machine, as an operator and a developer would: the server's
# maintainer scripts make the system user and give it the config (0640
# root:leasehold, as it may hold tokens); the installed binary, run as that
# user with the installed config and a state directory like the unit's
# StateDirectory=, answers /healthz; examples/client-outside, built against
# the installed leasehold-client-dev by CMake and by pkg-config with no
# paths given, takes and releases a lock on it; reinstalling keeps a
# changed conffile; remove keeps the config and purge deletes it and the
# data.
#
# It changes the machine (a package, a system user), so it runs only as
# root with LEASEHOLD_TEST_INSTALL=1, as .ci/run does on its throwaway
# machine, and never where a leasehold package is installed already.
# Without systemd as PID 1 (containers) the unit itself is not started;
# package_test.sh checks it with systemd-analyze verify.
# Usage: tests/package/install_test.sh [PACKAGE CLIENT_PACKAGE]
# (default: both made by scripts/package).
set -euo pipefail
cd "$(dirname "$0")/../.."

source tests/package/common.sh install_test

if [ "${LEASEHOLD_TEST_INSTALL:-}" != 1 ] || [ "$(id -u)" != 0 ]; then
  echo "install_test: skipped (needs root and LEASEHOLD_TEST_INSTALL=1: it installs a package)"
  exit 0
fi
for name in leasehold leasehold-client-dev; do
  if dpkg-query -W -f '${Status}' "$name" 2>/dev/null | grep -q installed; then
    fail "a $name package is installed already; this test would replace it"
  fi
done

if [ $# -ge 2 ]; then
  package=$1
  client_package=$2
else
  built=$(scripts/package | tail -2)
  package=$(grep '/leasehold_[^/]*\.deb$' <<<"$built" || true)
  client_package=$(grep '/leasehold-client-dev_[^/]*\.deb$' <<<"$built" || true)
fi
[ -f "$package" ] || fail "no package at $package"
[ -f "$client_package" ] || fail "no client package at $client_package"
version=$(dpkg-deb -f "$package" Version)

chmod 711 "$work"  # the service user reaches its run dir inside
# Only from here on (never when skipped): the packages go on exit.
cleanup_also() {
  dpkg --purge leasehold leasehold-client-dev >/dev/null 2>&1 || true
}

dpkg -i "$package" >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log" >&2; fail "dpkg -i"; }
echo "installed: leasehold $version"

# The system user, and the config readable by it and root only.
entry=$(getent passwd leasehold) || fail "postinst made no user leasehold"
IFS=: read -r _ _ uid _ _ home shell <<<"$entry"
[ "$uid" -lt 1000 ] || fail "leasehold is not a system user (uid $uid)"
[[ "$shell" == */nologin ]] || fail "leasehold can log in (shell $shell)"
perms=$(stat -c '%a %U %G' /etc/leasehold/leasehold.json)
[ "$perms" = "640 root leasehold" ] || fail "/etc/leasehold/leasehold.json is $perms"
[ "$(leasehold --version)" = "leasehold ${version//+/-}" ] ||
  fail "leasehold --version printed $(leasehold --version), the package is $version"
man -w leasehold >/dev/null 2>&1 || [ -f /usr/share/man/man1/leasehold.1.gz ] ||
  fail "no man page"
echo "user: $entry; config: $perms"

# The service as the unit runs it: its user, its config, its data.
install -d -o leasehold -g leasehold -m 0750 /var/lib/leasehold
install -d -o leasehold -m 0700 "$work/run"
setpriv --reuid leasehold --regid leasehold --init-groups \
  /usr/bin/leasehold serve --config /etc/leasehold/leasehold.json \
  --data /var/lib/leasehold --listen 127.0.0.1:0 --port-file "$work/run/port" \
  2>"$work/serve.err" &
server=$!
port=$(await_port "$work/run/port" "$work/serve.err")
code=$(curl -sS --max-time 10 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/healthz")
[ "$code" = 200 ] || fail "GET /healthz answered $code"

# The client's package: a program built against it with no paths given,
# by CMake and by pkg-config, locks on the service.
dpkg -i "$client_package" >"$work/dpkg.log" 2>&1 ||
  { cat "$work/dpkg.log" >&2; fail "dpkg -i $client_package"; }
cmake -S examples/client-outside -B "$work/example" -DCMAKE_BUILD_TYPE=Release \
  >"$work/example.log" 2>&1 && cmake --build "$work/example" >>"$work/example.log" 2>&1 ||
  { cat "$work/example.log" >&2; fail "building examples/client-outside with CMake"; }
# shellcheck disable=SC2046
c++ -std=c++23 -O1 -o "$work/hold-lock-pc" examples/client-outside/hold_lock.cc \
  $(pkg-config --cflags --libs leasehold-client) >"$work/example.log" 2>&1 ||
  { cat "$work/example.log" >&2; fail "building examples/client-outside with pkg-config"; }
for program in "$work/example/hold-lock" "$work/hold-lock-pc"; do
  "$program" "http://127.0.0.1:$port" "invoice:$(basename "$program")" \
    >"$work/hold-lock.out" 2>&1 && grep -q '^second session acquired' "$work/hold-lock.out" ||
    { cat "$work/hold-lock.out" >&2; fail "$program against the service"; }
done
dpkg --remove leasehold-client-dev >"$work/dpkg.log" 2>&1 ||
  { cat "$work/dpkg.log" >&2; fail "dpkg --remove leasehold-client-dev"; }
[ ! -e /usr/include/leasehold/client.h ] || fail "remove left the client's header"
echo "leasehold-client-dev: hold-lock built by CMake and pkg-config, locked; removed"

stop_server "$work/serve.err"
[ "$(stat -c %U /var/lib/leasehold/leasehold.db)" = leasehold ] ||
  fail "the data file is not the service's"
echo "serve as leasehold: /healthz 200, clean stop"

# Reinstalled over a changed conffile: the operator's change stays.
echo '{"listen": "127.0.0.1:7171"}' >/etc/leasehold/leasehold.json
dpkg -i --force-confold "$package" >"$work/dpkg.log" 2>&1 ||
  { cat "$work/dpkg.log" >&2; fail "dpkg -i again"; }
grep -q 7171 /etc/leasehold/leasehold.json || fail "reinstalling replaced a changed conffile"
[ "$(stat -c '%a %G' /etc/leasehold/leasehold.json)" = "640 leasehold" ] ||
  fail "reinstalling changed the config's permissions"

# Remove keeps the config and the data; purge deletes both.
dpkg --remove leasehold >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log" >&2; fail "dpkg --remove"; }
[ ! -e /usr/bin/leasehold ] || fail "remove left /usr/bin/leasehold"
[ -f /etc/leasehold/leasehold.json ] || fail "remove deleted the config"
[ -d /var/lib/leasehold ] || fail "remove deleted the data"
dpkg --purge leasehold >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log" >&2; fail "dpkg --purge"; }
[ ! -e /etc/leasehold/leasehold.json ] || fail "purge left the config"
[ ! -e /var/lib/leasehold ] || fail "purge left the data"
! dpkg-statoverride --list /etc/leasehold/leasehold.json >/dev/null ||
  fail "purge left the config's stat override"
echo "remove keeps config and data; purge deletes them"
echo "install_test: ok ($version)"
