#!/usr/bin/env bash
# Installs the pinned dev tools (npm ci from package-lock.json) and builds
# dist/ (types generated from docs/openapi.yaml, then tsc). Safe to run twice.
set -euo pipefail
cd "$(dirname "$0")"
if [[ -f package-lock.json ]]; then
  npm ci --no-audit --no-fund
else
  npm install --no-audit --no-fund
fi
npm run build
