#!/usr/bin/env bash
# Lint, format and type checks of the package, its tests and the conformance driver.
set -uo pipefail
cd "$(dirname "$0")"
V=.venv/bin
DRIVER=../conformance/drivers/python
status=0
$V/ruff check src tests "$DRIVER" || status=1
$V/ruff format --check src tests "$DRIVER" || status=1
$V/mypy --strict src tests || status=1
MYPYPATH=src $V/mypy --strict "$DRIVER/driver.py" || status=1
exit $status
