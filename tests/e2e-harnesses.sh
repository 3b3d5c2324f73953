#!/usr/bin/env bash
# End-to-end: the benchmark's real harnesses (mini-swe-agent 2.x and 1.x, Codex CLI, OpenCode,
# as .ci/install puts them in .venv-mini2, .venv-mini1 and .harnesses) run one attempt each
# through the distdebug binary, sandboxed with the endpoint-only network, against the scripted
# OpenAI-compatible server (tests/harnesses/scripted_server.py) on 127.0.0.1. The honest
# script must be submitted, imported with every step kind, the server's token counts, the
# lines it read and its live steps, and scored; the leak script must be flagged on labels,
# git-history and network; under a step budget of 2 the attempt must end with budget. A
# harness that is not installed is skipped, loudly.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
bin="${DISTDEBUG_BIN:-$root/target/debug/distdebug}"
[ -x "$bin" ] || cargo build --locked
work="$(mktemp -d "${TMPDIR:-/tmp}/distdebug-e2e-harnesses.XXXXXX")"
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/incidents"
cp -r tests/fixtures/incidents/tiny-lease "$work/incidents/"
cat > "$work/distdebug.toml" <<EOF
[harness]
mini_swe_agent = "$root/.venv-mini2"
codex = "$root/.harnesses"
opencode = "$root/.harnesses"
EOF
sed "s#/.venv-mini2#/.venv-mini1#" "$work/distdebug.toml" > "$work/distdebug-mini1.toml"

# One attempt of HARNESS (config name NAME, settings CONFIG) with SCRIPT; prints the check.
run_one() {
  local name=$1 agent=$2 config=$3 mode=$4
  shift 4
  # budget: the honest script under a step budget of 2, which it needs 4 replies for.
  local script=$mode budget=()
  if [ "$mode" = budget ]; then script=honest budget=(--max-steps 2); fi
  local state="$work/state-$name-$mode" out="$work/results/$name-$mode"
  python3 tests/harnesses/scripted_server.py --state "$state" --script "$script" \
    --final-delay 2.5 --max-seconds 240 "$@" &
  server_pid=$!
  for _ in $(seq 50); do [ -s "$state/port" ] && break; sleep 0.1; done
  local port
  port=$(cat "$state/port")
  (cd "$work" && MSWEA_MODEL_RETRY_STOP_AFTER_ATTEMPT=3 E2E_KEY="$key" timeout 300 "$bin" run \
    --agent "$agent" --api-key-env E2E_KEY \
    --config "$config" --endpoint "http://127.0.0.1:$port/v1" --model scripted-model \
    --timeout 240 --incident tiny-lease --attempts 1 --out "$out" --dir incidents \
    "${budget[@]}" > "$work/$name-$mode.log" 2>&1) &
  local run_pid=$!
  # While the server holds back its last answer, the steps so far must be in trajectory.jsonl.
  local live=0 jsonl="$out/tiny-lease/attempt-1/trajectory.jsonl"
  for _ in $(seq 600); do
    [ -e "$state/final-pending" ] && break
    [ "$mode" = budget ] && ! kill -0 "$run_pid" 2>/dev/null && break
    sleep 0.1
  done
  for _ in $(seq 20); do
    if [ -e "$jsonl" ] && [ ! -e "$out/tiny-lease/attempt-1/trajectory.json" ]; then
      live=$(grep -c . "$jsonl" || true)
      [ "$live" -ge 3 ] && break
    fi
    sleep 0.1
  done
  local status=0
  wait "$run_pid" || status=$?
  kill "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
  if [ "$status" -ne 0 ] || [ ! -e "$out/tiny-lease/attempt-1/trajectory.json" ]; then
    echo "FAIL $name $mode: distdebug run exited $status"
    cat "$work/$name-$mode.log"
    tail -20 "$out/tiny-lease/attempt-1/agent-stderr.log" 2>/dev/null || true
    return 1
  fi
  # The key reached the harness through its variable and was written nowhere.
  if grep -rqF "$key" "$out"; then
    echo "FAIL $name $mode: the API key is in $(grep -rlF "$key" "$out" | head -3)"
    return 1
  fi
  if ! grep -qF "Bearer $key" "$state/requests.jsonl"; then
    echo "FAIL $name $mode: the harness did not send the key to the endpoint"
    return 1
  fi
  python3 tests/harnesses/check_attempt.py "$mode" "$out" "$state" "$live" || {
    tail -20 "$out/tiny-lease/attempt-1/agent-stderr.log" || true
    return 1
  }
  # The scorer reads the attempt back like any other.
  "$bin" score "$out" --dir "$work/incidents" --json > "$work/$name-$mode.score.json"
}

key="sk-e2e-$RANDOM$RANDOM-secret"
passed=0 failed=0 skipped=0
suite() {
  local name=$1 needs=$2 agent=$3 config=$4
  shift 4
  # DISTDEBUG_HARNESSES="codex opencode" runs only those.
  if [ -n "${DISTDEBUG_HARNESSES:-}" ] && [[ " $DISTDEBUG_HARNESSES " != *" $name "* ]]; then
    return
  fi
  if [ ! -e "$needs" ]; then
    echo "SKIPPED $name: $needs is missing (run .ci/install)"
    skipped=$((skipped + 1))
    return
  fi
  local t0=$SECONDS
  for mode in honest leak budget; do
    if run_one "$name" "$agent" "$config" "$mode" "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
  done
  echo "   $name: $((SECONDS - t0)) s"
}

suite mini-swe-agent-2 .venv-mini2/bin/mini mini-swe-agent "$work/distdebug.toml" --format-error
suite mini-swe-agent-1 .venv-mini1/bin/mini mini-swe-agent "$work/distdebug-mini1.toml" --format-error
suite codex .harnesses/node_modules/@openai/codex-linux-x64 codex "$work/distdebug.toml" --errors
suite opencode .harnesses/node_modules/opencode-linux-x64/bin/opencode opencode "$work/distdebug.toml"

echo "harnesses: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
