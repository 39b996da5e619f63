#!/usr/bin/env bash
# The C++ client as a program outside the tree gets it: installed from
# BUILD into a temp prefix (`cmake --install --component client`), which
# must hold the header, the archive, the CMake package and the pkg-config
# file and nothing of the server; then examples/client-outside built twice
# against it, by its own CMake project (find_package(leasehold CONFIG)) and
# by hand with `pkg-config --cflags --libs leasehold-client`; and each
# program run against a real `leasehold serve` (BUILD's binary, on a free
# loopback port, data in a temp dir): it takes a lock, sees a second
# session refused, releases it, and sees the second session take it.
# The sanitized build (scripts/test) installs sanitized archives, and its
# package says so: both descriptions link the sanitizers' runtimes.
# CTest `client_install`.
# Usage: tests/package/client_install_test.sh BUILD LEASEHOLD_BINARY CXX
set -euo pipefail
cd "$(dirname "$0")/../.."

source tests/package/common.sh client_install_test
[ $# -eq 3 ] || fail "usage: $0 BUILD LEASEHOLD_BINARY CXX"
build=$1
leasehold=$2
cxx=$3
example=$PWD/examples/client-outside

prefix=$work/prefix

# The install: the client's files, and only those.
cmake --install "$build" --component client --prefix "$prefix" >"$work/install.log" 2>&1 ||
  { cat "$work/install.log" >&2; fail "cmake --install --component client"; }
(cd "$prefix" && find . -type f | sort) >"$work/files"
sed 's/^/  /' "$work/files"
expect_one() {
  local found
  found=$(grep -c -E "$1" "$work/files" || true)
  [ "$found" = 1 ] || fail "the install has $found files matching $1"
}
expect_one '^\./include/leasehold/client\.h$'
expect_one '/libleasehold_client\.a$'
expect_one '/cmake/leasehold/leaseholdConfig\.cmake$'
expect_one '/cmake/leasehold/leaseholdConfigVersion\.cmake$'
expect_one '/cmake/leasehold/leaseholdTargets\.cmake$'
expect_one '/pkgconfig/leasehold-client\.pc$'
[ "$(grep -c '^\./include/' "$work/files")" = 1 ] ||
  fail "the install has headers besides leasehold/client.h"
! grep -q -E '/bin/|/share/' "$work/files" || fail "the install has the server's files"
pcdir=$(dirname "$prefix/$(grep '/pkgconfig/leasehold-client\.pc$' "$work/files")")

# Built by its own CMake project, which finds the package in the prefix.
cmake -S "$example" -B "$work/cmake-build" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$prefix" \
  >"$work/cmake.log" 2>&1 || { cat "$work/cmake.log" >&2; fail "configuring $example"; }
found_dir=$(sed -n 's/^leasehold_DIR:PATH=//p' "$work/cmake-build/CMakeCache.txt")
[[ "$found_dir" == "$prefix"/* ]] || fail "find_package found leasehold in $found_dir, not $prefix"
cmake --build "$work/cmake-build" >"$work/build.log" 2>&1 ||
  { cat "$work/build.log" >&2; fail "building $example with CMake"; }
echo "CMake: find_package(leasehold) in $found_dir, hold-lock built"

# Built by hand with pkg-config (the system's path too, for openssl.pc).
export PKG_CONFIG_PATH=$pcdir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
[ "$(pkg-config --variable=prefix leasehold-client)" = "$prefix" ] ||
  fail "pkg-config's prefix is $(pkg-config --variable=prefix leasehold-client), not $prefix"
flags=$(pkg-config --cflags --libs leasehold-client) || fail "pkg-config leasehold-client"
echo "pkg-config --cflags --libs leasehold-client: $flags"
# shellcheck disable=SC2086
"$cxx" -std=c++23 -O1 -o "$work/hold-lock-pc" "$example/hold_lock.cc" $flags \
  >"$work/pc-build.log" 2>&1 || { cat "$work/pc-build.log" >&2; fail "building with pkg-config"; }
echo "pkg-config: hold-lock built"

# A real server, and each program against it.
"$leasehold" serve --data "$work/data" --listen 127.0.0.1:0 \
  --port-file "$work/port" 2>"$work/serve.err" &
server=$!
url=http://127.0.0.1:$(await_port "$work/port" "$work/serve.err")

run() {  # run NAME PROGRAM RESOURCE
  local out=$work/$1.out status=0
  "$2" "$url" "$3" >"$out" 2>"$work/$1.err" || status=$?
  [ "$status" -eq 0 ] || { cat "$out" "$work/$1.err" >&2; fail "$1: hold-lock exited $status"; }
  sed "s/^/  $1: /" "$out"
  grep -qE "^acquired $3 fence [1-9][0-9]*$" "$out" || fail "$1: no acquire"
  grep -qx "second session refused: timeout" "$out" || fail "$1: the held lock was not refused"
  grep -qx "released $3" "$out" || fail "$1: no release"
  grep -qE "^second session acquired $3 fence [1-9][0-9]*$" "$out" ||
    fail "$1: no acquire after the release"
  [ "$(wc -l <"$out")" = 4 ] || fail "$1: printed more than its four lines"
}
run cmake "$work/cmake-build/hold-lock" invoice:cmake
run pkg-config "$work/hold-lock-pc" invoice:pkg-config

stop_server "$work/serve.err"
echo "client_install_test: ok"
