#!/bin/sh
# The client consumed as a package: a program outside the module, in a temp
# directory with its own go.mod, uses it through a replace directive; it is
# built with `go build ./...` and its quick start run against a spawned server.
# Needs LEASEHOLD_BINARY.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
: "${LEASEHOLD_BINARY:?LEASEHOLD_BINARY must name a leasehold server binary}"
tmp=$(mktemp -d)
pid=""
cleanup() { [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
mkdir -p "$tmp/app"
cat > "$tmp/app/go.mod" <<MOD
module example.com/quickstart

go 1.23

require github.com/leasehold/leasehold/clients/go v0.0.0

replace github.com/leasehold/leasehold/clients/go => $here
MOD
cat > "$tmp/app/main.go" <<'GO'
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	leasehold "github.com/leasehold/leasehold/clients/go"
)

func main() {
	ctx := context.Background()
	c, err := leasehold.New(os.Args[1])
	if err != nil {
		panic(err)
	}
	s, err := c.Session(ctx, "worker", 10*time.Second)
	if err != nil {
		panic(err)
	}
	defer s.Close()
	lk, err := s.Lock(ctx, "app", "invoice:481", leasehold.Exclusive, leasehold.WithTimeout(5*time.Second))
	if err != nil {
		panic(err)
	}
	defer lk.Release(ctx)
	other, err := c.Session(ctx, "other", 10*time.Second)
	if err != nil {
		panic(err)
	}
	defer other.Close()
	_, err = other.Lock(ctx, "app", "invoice:481", leasehold.Exclusive, leasehold.WithTimeout(0))
	if !errors.Is(err, leasehold.ErrTimeout) {
		panic(fmt.Sprintf("want ErrTimeout, got %v", err))
	}
	fmt.Printf("quickstart: fence %d, the other session timed out\n", lk.Fence())
}
GO
cd "$tmp/app"
GOFLAGS=-mod=mod go build ./...
"$LEASEHOLD_BINARY" serve --listen 127.0.0.1:0 --port-file "$tmp/port" --data "$tmp/data" 2>"$tmp/server.log" &
pid=$!
i=0
while [ ! -s "$tmp/port" ]; do
  i=$((i + 1)); [ $i -gt 200 ] && { cat "$tmp/server.log"; exit 1; }
  sleep 0.05
done
./quickstart "http://127.0.0.1:$(cat "$tmp/port")"
echo "package_test.sh: ok"
