#!/bin/sh
# Idempotent: the module's (test-only) dependencies and staticcheck into .bin/.
set -eu
cd "$(dirname "$0")"
go mod download
if [ ! -x .bin/staticcheck ]; then
  GOBIN="$PWD/.bin" go install honnef.co/go/tools/cmd/staticcheck@v0.8.2
fi
(cd ../conformance/drivers/go && go mod download)
# The conformance driver, built once here (scripts/test runs this first).
(cd ../conformance/drivers/go && go build -o ../../../go/.bin/conformance_driver_go .)
