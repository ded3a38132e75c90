#!/usr/bin/env bash
# "Done when" on a newcomer's machine: a clone of HEAD with nothing beside it (no ../shared), no
# `temporal` on PATH, runs `npm ci`, `npm test`, then `npm start`; one approved payment with the demo
# key; SIGTERM to the npm process must then leave every port it used free. The clone is deleted.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
npm_pid=""
cleanup() {
  if [ -n "$npm_pid" ] && kill -0 "$npm_pid" 2>/dev/null; then kill -TERM "$npm_pid"; wait "$npm_pid" || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# A PATH without any Temporal CLI: no pyenv entries (their shims include one) and no folder holding `temporal`.
clean_path=""
IFS=: read -ra path_dirs <<< "$PATH"
for dir in "${path_dirs[@]}"; do
  case "$dir" in *pyenv*) continue ;; esac
  [ -e "$dir/temporal" ] && continue
  clean_path="${clean_path:+$clean_path:}$dir"
done
export PATH="$clean_path"
if command -v temporal >/dev/null 2>&1; then echo "temporal still on PATH: $(command -v temporal)"; exit 1; fi
unset TEMPORAL_CLI_PATH DATABASE_URL TEMPORAL_ADDRESS SANDBOX_PROCESSOR_URL OPERATOR_TOKEN DATA_ENCRYPTION_KEY DATA_DIR NODE_ENV \
  TEST_DATABASE_URL TEST_TEMPORAL_ADDRESS PUBLIC_BASE_URL

git clone --quiet --no-hardlinks "$repo" "$work/repo"
cd "$work/repo"
echo "== fresh clone of $(git rev-parse --short HEAD) in $work/repo (node $(node --version))"

echo "== npm ci"
npm ci --no-audit --no-fund

echo "== npm test"
npm test

# Ports below Linux's ephemeral range (32768-60999), as test/support/free-port.ts picks them: a port that
# `listen(0)` found free is one the kernel hands to the next `listen(0)` too, and the Temporal CLI picks its
# HTTP API port that way before it binds `--port` (a CI run once failed on exactly that collision).
ports=()
pick_port() { # pick_port NAME: exports NAME as a free port no earlier pick took
  local port tries
  for tries in $(seq 200); do
    port=$((20000 + RANDOM % 12000))
    case " ${ports[*]-} " in *" $port "*) continue ;; esac
    if node -e 'require("net").createServer().once("error", () => process.exit(1)).listen(+process.argv[1], "127.0.0.1", function () { this.close(); })' "$port"; then
      ports+=("$port"); export "$1=$port"; return
    fi
  done
  echo "no free port found between 20000 and 32000 for $1"; exit 1
}
for name in PORT SANDBOX_PROCESSOR_PORT TEMPORAL_DEV_PORT TEMPORAL_UI_PORT EMBEDDED_POSTGRES_PORT DEV_WEBHOOK_RECEIVER_PORT \
  DEV_INBOX_SMTP_PORT DEV_INBOX_WEB_PORT; do pick_port "$name"; done

echo "== npm start (ports ${ports[*]})"
npm start > "$work/start.log" 2>&1 &
npm_pid=$!
fail() { echo "$1"; echo "--- npm start output:"; cat "$work/start.log"; exit 1; }
deadline=$((SECONDS + 300))
until curl -fsS "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1; do
  kill -0 "$npm_pid" 2>/dev/null || fail "npm start exited before the gateway was ready"
  [ "$SECONDS" -lt "$deadline" ] || fail "the gateway was not ready within 300 s"
  sleep 1
done

echo "== one approved payment with the demo key"
read -r api_key product_id < <(npm run -s credentials -- --json | node -e '
  const demo = JSON.parse(require("fs").readFileSync(0, "utf8")).demo[0];
  console.log(demo.apiKeys[0].key, demo.products.find((p) => p.slug === "ebook").id);')
answer="$(curl -sS -X POST "http://127.0.0.1:$PORT/api/$product_id" -H "Authorization: $api_key" -H 'content-type: application/json' \
  -d '{"card":{"pan":"4242424242424242","expiryMonth":12,"expiryYear":2030,"cvv":"123"},"email":"newcomer@example.com","partnerSession":"fresh-clone-1"}')"
echo "$answer" | grep -q '"info":"Success"' || fail "payment not approved: $answer"

echo "== SIGTERM to npm"
kill -TERM "$npm_pid"
wait "$npm_pid" || true
npm_pid=""
open=()
for port in "${ports[@]}"; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then open+=("$port"); fi
done
[ "${#open[@]}" -eq 0 ] || fail "ports still open after SIGTERM: ${open[*]}"
echo "== fresh clone check passed: every port is free"
