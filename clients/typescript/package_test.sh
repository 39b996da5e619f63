#!/usr/bin/env bash
# Packs @leasehold/client as npm would publish it, installs the tarball into
# a fresh folder and runs the README's quick start (the block between the
# `quickstart` markers) against a server of its own (LEASEHOLD_BINARY), then
# type-checks a TypeScript use of the installed package. Non-zero on failure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
binary=${LEASEHOLD_BINARY:?set LEASEHOLD_BINARY to a built leasehold executable}
work=$(mktemp -d)
server_pid=
cleanup() {
  if [[ -n $server_pid ]]; then kill -9 "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null; fi || true
  rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/pack" "$work/app"
(cd "$here" && npm pack --silent --pack-destination "$work/pack" >/dev/null)
tarball=$(ls "$work"/pack/*.tgz)
echo "packed $(basename "$tarball"): $(tar -tzf "$tarball" | wc -l) files"
if tar -tzf "$tarball" | grep -qE '^package/(src|test|node_modules)/'; then
  echo "the tarball carries sources or tests" >&2
  exit 1
fi

cd "$work/app"
npm init -y >/dev/null
npm pkg set type=module >/dev/null
npm install --silent --no-audit --no-fund "$tarball"
awk '/<!-- quickstart:begin -->/{on=1; next} /<!-- quickstart:end -->/{on=0} on && !/^```/' \
  "$here/README.md" >quickstart.mjs
[[ -s quickstart.mjs ]] || { echo "no quick start found in README.md" >&2; exit 1; }

"$binary" serve --listen 127.0.0.1:0 --port-file "$work/port" --data "$work/data" --log-level warn &
server_pid=$!
for _ in $(seq 1 200); do [[ -s $work/port ]] && break; sleep 0.05; done
url="http://127.0.0.1:$(cat "$work/port")"
node -e "
  const until = Date.now() + 10000;
  (async () => { for (;;) { try { if ((await fetch('$url/healthz')).ok) return; } catch {} 
    if (Date.now() > until) process.exit(1); await new Promise(r => setTimeout(r, 50)); } })();"

echo "running the quick start against $url"
LEASEHOLD_URL=$url node quickstart.mjs

# The published types resolve and compile (exports.types, await using).
cat >use.ts <<'TS'
import { Client, LockTimeoutError, type Lock } from "@leasehold/client";
export async function run(url: string): Promise<number> {
  const client = new Client({ url });
  await using s = await client.session("typed", { ttlMs: 10_000 });
  try {
    await using lk: Lock = await s.lock("app", "typed", { mode: "Exclusive", timeoutMs: 1_000 });
    return lk.fence;
  } catch (e) {
    if (e instanceof LockTimeoutError) return -1;
    throw e;
  }
}
TS
"$here/node_modules/.bin/tsc" --strict --noEmit --target ES2022 --module NodeNext --moduleResolution NodeNext \
  --lib ES2023,esnext.disposable --types node --typeRoots "$here/node_modules/@types" use.ts
echo "package test passed"
