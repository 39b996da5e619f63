#!/bin/sh
# Formatting and lint: gofmt prints nothing, go vet and staticcheck are clean
# (the client and the conformance driver). Run setup.sh first.
set -eu
cd "$(dirname "$0")"
out=$(gofmt -l . ../conformance/drivers/go ../../bench/clients/go 2>/dev/null || true)
if [ -n "$out" ]; then echo "gofmt: $out"; exit 1; fi
go vet ./...
.bin/staticcheck ./...
(cd ../conformance/drivers/go && go vet ./... && ../../../go/.bin/staticcheck ./...)
if [ -d ../../bench/clients/go ]; then
  (cd ../../bench/clients/go && go vet ./... && ../../../clients/go/.bin/staticcheck ./...)
fi
echo "check.sh: clean"
