#!/usr/bin/env bash
# Builds the wheel and the sdist, installs each into a fresh venv (httpx pinned as in
# the lock file) and runs the README's quick start against a spawned server.
set -euo pipefail
cd "$(dirname "$0")"
: "${LEASEHOLD_BINARY:?LEASEHOLD_BINARY must name the leasehold executable}"
[[ -x .venv/bin/python ]] || ./setup.sh
tmp="$(mktemp -d)"
server_pid=""
cleanup() { [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

.venv/bin/python -m build --no-isolation --outdir "$tmp/dist" . >/dev/null
# The runtime pins, with hashes, from the dev lock file.
.venv/bin/python - requirements-dev.lock > "$tmp/runtime.lock" <<'PY'
import re, sys
keep = {"httpx", "httpcore", "h11", "anyio", "idna", "certifi", "exceptiongroup", "sniffio",
        "typing-extensions"}
block = []
for line in open(sys.argv[1]).read().splitlines() + [""]:
    if not line or line[0] not in " #":
        if block and re.split(r"[=\s]", block[0])[0] in keep:
            print("\n".join(block))
        block = [line]
    elif line.startswith("    --hash"):
        block.append(line)
PY

"$LEASEHOLD_BINARY" serve --listen 127.0.0.1:0 --port-file "$tmp/port" --data "$tmp/data" \
  --log-level warn 2>"$tmp/server.log" &
server_pid=$!
for _ in $(seq 100); do [[ -s "$tmp/port" ]] && break; sleep 0.1; done
export LEASEHOLD_URL="http://127.0.0.1:$(cat "$tmp/port")"

# The quick start is the README's first ```python block.
awk '/^```python/{f++; next} /^```/{if (f==1) exit} f==1{print}' README.md > "$tmp/quickstart.py"

for artifact in "$tmp"/dist/*.whl "$tmp"/dist/*.tar.gz; do
  venv="$tmp/venv-$(basename "$artifact")"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check --require-hashes -r "$tmp/runtime.lock"
  "$venv/bin/pip" install -q --disable-pip-version-check --no-deps "$artifact"
  (cd "$tmp" && "$venv/bin/python" -c 'import leasehold, sys; assert leasehold.__version__ == "0.1.0"; print(leasehold.__file__)')
  (cd "$tmp" && "$venv/bin/python" quickstart.py)
  echo "ok: $(basename "$artifact")"
done
