#!/usr/bin/env bash
# Lint, format and type checks of the package, its tests, scripts and the conformance
# driver; and that the generated _sync.py matches its source.
set -uo pipefail
cd "$(dirname "$0")"
V=.venv/bin
DRIVER=../conformance/drivers/python
status=0
$V/ruff check src tests scripts "$DRIVER" || status=1
$V/ruff format --check src tests scripts "$DRIVER" || status=1
$V/mypy --strict src tests scripts || status=1
MYPYPATH=src $V/mypy --strict "$DRIVER/driver.py" || status=1
$V/python scripts/unasync.py --check || status=1  # _sync.py is generated from _async.py
exit $status
