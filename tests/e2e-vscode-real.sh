#!/usr/bin/env bash
# Real VS Code: code-server 4.100.3 (VS Code 1.100's server build, installed by
# tests/vscode-real/install-code-server.sh under .cache/code-server/) serving a prepared
# workspace of the tiny-lease fixture, with the packaged distdebug.vsix installed, driven in
# headless Chromium by playwright-core (tests/vscode-real/drive.js) through the command
# palette: run the offline agent, score, and check what the page shows. Screenshots are kept in
# target/e2e-artifacts/vscode-real/. Needs code-server, chromium, editors/vscode/node_modules and
# tests/vscode-real/node_modules (.ci/install installs all four); without them the suite is
# skipped, except on CI where a missing tool is a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$PWD"
BIN="${DISTDEBUG_BIN:-$REPO/target/debug/distdebug}"
CODE_SERVER="$REPO/.cache/code-server/node_modules/.bin/code-server"
ART="$REPO/target/e2e-artifacts/vscode-real"

missing=""
[ -e "$REPO/.cache/code-server/installed-4.100.3" ] || missing="code-server (tests/vscode-real/install-code-server.sh)"
command -v chromium >/dev/null 2>&1 || missing="chromium"
[ -x editors/vscode/node_modules/.bin/vsce ] || missing="editors/vscode/node_modules (npm ci)"
[ -d tests/vscode-real/node_modules/playwright-core ] || missing="tests/vscode-real/node_modules (npm ci)"
if [ -n "$missing" ]; then
  if [ -n "${CI:-}" ]; then
    echo "e2e-vscode-real: $missing is missing; .ci/install should have installed it" >&2
    exit 1
  fi
  echo "e2e-vscode-real: skipped (no $missing; run .ci/install)"
  exit 0
fi

start=$(date +%s)
T="$(mktemp -d)"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then
    kill -- "-$server_pid" 2>/dev/null || kill "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$T"
}
trap cleanup EXIT
# code-server, VS Code and Chromium write config, caches and logs under HOME and XDG folders.
export HOME="$T/home" XDG_CONFIG_HOME="$T/home/.config" XDG_DATA_HOME="$T/home/.local/share" XDG_CACHE_HOME="$T/home/.cache"
mkdir -p "$HOME" "$T/user/User" "$T/extensions"
rm -rf "$ART"
mkdir -p "$ART"

# The package a user installs, built from this checkout.
(cd editors/vscode && rm -rf out && node_modules/.bin/tsc -p . \
  && node_modules/.bin/vsce package --skip-license --allow-missing-repository --out "$T/distdebug.vsix" >/dev/null)
"$CODE_SERVER" --user-data-dir "$T/user" --extensions-dir "$T/extensions" --install-extension "$T/distdebug.vsix" >"$T/install.log" 2>&1 \
  || { cat "$T/install.log" >&2; exit 1; }

# The workspace and the labels (a copy: nothing here writes to the fixture).
mkdir -p "$T/incidents" && cp -r tests/fixtures/incidents/tiny-lease "$T/incidents/tiny-lease"
"$BIN" prepare "$T/incidents/tiny-lease" --out "$T/ws" >/dev/null
cat >"$T/user/User/settings.json" <<JSON
{
  "distdebug.path": "$BIN",
  "distdebug.incident": "$T/incidents/tiny-lease",
  "distdebug.results": "$T/results",
  "distdebug.annotator": "vscode-real",
  "workbench.startupEditor": "none",
  "security.workspace.trust.enabled": false,
  "telemetry.telemetryLevel": "off",
  "extensions.autoUpdate": false,
  "extensions.autoCheckUpdates": false,
  "update.mode": "none",
  "workbench.tips.enabled": false
}
JSON

# Port 0: code-server picks a free one and says which in its log.
setsid "$CODE_SERVER" --bind-addr 127.0.0.1:0 --auth none --user-data-dir "$T/user" --extensions-dir "$T/extensions" \
  --disable-telemetry --disable-update-check --disable-workspace-trust --disable-getting-started-override \
  "$T/ws" >"$T/code-server.log" 2>&1 &
server_pid=$!
url=""
for _ in $(seq 1 300); do
  url="$(sed -n 's|.*HTTP server listening on \(http://127.0.0.1:[0-9]*\)/.*|\1|p' "$T/code-server.log" | head -1)"
  [ -n "$url" ] && break
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$url" ]; then
  echo "e2e-vscode-real: code-server did not start:" >&2
  cat "$T/code-server.log" >&2
  exit 1
fi

if ! NODE_PATH="$REPO/tests/vscode-real/node_modules" timeout 600 node tests/vscode-real/drive.js "$url" "$T/ws" "$T/results" "$T/incidents/tiny-lease" "$ART"; then
  echo "e2e-vscode-real: failed; screenshots in $ART; code-server's log:" >&2
  tail -n 40 "$T/code-server.log" >&2
  exit 1
fi
echo "e2e-vscode-real: ok in $(($(date +%s) - start)) s (screenshots: $ART)"
