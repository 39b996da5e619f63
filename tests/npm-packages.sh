#!/usr/bin/env bash
# Makes DIR/node_modules exactly what DIR/package-lock.json pins (`npm ci`
# from the npm registry), unless it is so already: npm writes the lock it
# installed to node_modules/.package-lock.json, and an unchanged lock file
# means nothing to do. The CTest fixtures npm_contract and npm_browser run
# it before the tests that use those packages, so `ctest` in any build
# tree (a packager's Release build too) has them without a step by hand;
# when the registry cannot be reached the fixture fails saying so, and
# CTest names the tests it then did not run.
# Usage: tests/npm-packages.sh DIR
set -euo pipefail
dir=${1:?usage: tests/npm-packages.sh DIR}
cd "$dir"
[ -f package-lock.json ] || { echo "npm-packages: no package-lock.json in $dir" >&2; exit 1; }
if [ -f node_modules/.package-lock.json ] &&
  node -e '
    const fs = require("node:fs");
    const want = JSON.parse(fs.readFileSync("package-lock.json", "utf8")).packages ?? {};
    const have = JSON.parse(fs.readFileSync("node_modules/.package-lock.json", "utf8")).packages ?? {};
    for (const [path, p] of Object.entries(want)) {
      if (path === "") continue;
      if (have[path]?.version !== p.version) process.exit(1);
    }' 2>/dev/null; then
  echo "npm-packages: $dir/node_modules matches its lock file"
  exit 0
fi
echo "npm-packages: npm ci in $dir"
npm ci --no-audit --no-fund --prefer-offline --loglevel=error ||
  { echo "npm-packages: npm ci failed in $dir (is the npm registry reachable?)" >&2; exit 1; }
