#!/usr/bin/env bash
# The HTML report in a real browser: builds a results tree (the synthetic one of
# `bench score`, plus a configuration with hostile text in its files), writes the report,
# renders it in headless Chromium, checks the rendered DOM against `score --json` for the
# same folders (tests/e2e-report/check_dom.py) and keeps a screenshot as an artifact in
# target/e2e-report/. Needs chromium and python3 (.ci/install installs chromium).
set -euo pipefail
cd "$(dirname "$0")/.."

BIN="${DISTDEBUG_BIN:-$PWD/target/debug/distdebug}"
CHROMIUM="$(command -v chromium || command -v chromium-browser || true)"
if [ -z "$CHROMIUM" ]; then
  if [ "${CI:-}" = "true" ]; then
    echo "e2e-report: chromium is not installed (.ci/install should have installed it)" >&2
    exit 1
  fi
  echo "e2e-report: skipped (no chromium; apt-get install -y --no-install-recommends chromium)"
  exit 0
fi

ART="$PWD/target/e2e-report"
mkdir -p "$ART"
T="$(mktemp -d)"
trap 'rm -rf "$T"' EXIT
# Chromium writes its profile and caches under HOME and XDG folders: keep them in the temp dir.
export HOME="$T/home" XDG_CONFIG_HOME="$T/config" XDG_CACHE_HOME="$T/cache"
mkdir -p "$HOME" "$XDG_CONFIG_HOME" "$XDG_CACHE_HOME"

# Two synthetic configurations with invalid, leaking and flaky attempts.
"$BIN" bench score --keep "$T/tree" --configs 2 --incidents 16 --attempts 3 --repeat 0 --bootstrap 100 >"$T/bench.log" 2>&1 \
  || { cat "$T/bench.log" >&2; exit 1; }
R="$T/tree/results"

# A third configuration whose files hold markup: run.json's model, a diagnosis path that ends
# up in a schema error. The report must show it as text.
EVIL='<img src=x onerror="document.title=1"><script>document.title=2</script>'
cp -r "$R/config-01" "$R/hostile"
python3 - "$R/hostile" "$EVIL" <<'PY'
import json, sys, os
cfg, evil = sys.argv[1], sys.argv[2]
run = json.load(open(os.path.join(cfg, "run.json")))
run["model"] = evil
json.dump(run, open(os.path.join(cfg, "run.json"), "w"))
d = os.path.join(cfg, "bench-0003", "attempt-1", "diagnosis.json")
json.dump({"blocks": [{"path": "/" + evil, "start_line": 1, "end_line": 2}]}, open(d, "w"))
PY

CONFIGS=("$R/config-00" "$R/config-01" "$R/hostile")
"$BIN" score "${CONFIGS[@]}" --dir "$T/tree/incidents" --bootstrap 2000 --seed 7 --json >"$T/scores.json"
mkdir -p "$T/out" # report --out writes into an existing folder only
"$BIN" report "${CONFIGS[@]}" --dir "$T/tree/incidents" --bootstrap 2000 --seed 7 --out "$T/out/report.html"

chrome() {
  "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --disable-sync --no-first-run --disable-quic \
    --user-data-dir="$T/profile" --window-size=1280,2400 "$@" 2>/dev/null
}
chrome --dump-dom "file://$T/out/report.html" >"$T/dom.html"
chrome --screenshot="$ART/report.png" "file://$T/out/report.html" >/dev/null
cp "$T/out/report.html" "$ART/report.html"
[ -s "$ART/report.png" ] || { echo "e2e-report: no screenshot was written" >&2; exit 1; }

python3 tests/e2e-report/check_dom.py "$T/dom.html" "$T/scores.json" "$T/out" "$EVIL"

# Bad input: a folder that does not exist is an error and writes no report.
if "$BIN" report "$R/nope" --dir "$T/tree/incidents" --out "$T/out/bad.html" 2>"$T/err"; then
  echo "e2e-report: a missing results folder was accepted" >&2
  exit 1
fi
grep -q "no such results folder" "$T/err"
[ ! -e "$T/out/bad.html" ]
echo "e2e-report: ok (screenshot: $ART/report.png)"
