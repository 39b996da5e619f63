#!/usr/bin/env bash
# Creates clients/python/.venv with the locked dev tools and the package (editable).
# Idempotent: a venv whose lock file did not change since the last run is left as it is.
set -euo pipefail
cd "$(dirname "$0")"
PY="${PYTHON:-python3}"
if ! "$PY" -c 'import venv, ensurepip' 2>/dev/null; then
  if command -v apt-get >/dev/null; then
    apt-get update -qq && apt-get install -y -qq python3-venv
  fi
fi
if [[ ! -x .venv/bin/python ]]; then
  "$PY" -m venv .venv
fi
stamp=.venv/.lock-installed
want="$(sha256sum requirements-dev.lock pyproject.toml | sha256sum | cut -d' ' -f1)"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
  exit 0
fi
.venv/bin/python -m pip install -q --disable-pip-version-check --require-hashes -r requirements-dev.lock
.venv/bin/python -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e .
echo "$want" > "$stamp"
