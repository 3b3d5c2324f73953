#!/usr/bin/env bash
# Installs code-server 4.100.3 (VS Code's server build, served to a browser) under
# .cache/code-server/ of the checkout, for tests/e2e-vscode-real.sh. Only the npm registry and
# Debian packages are used: the package's own postinstall fetches ripgrep and argon2 binaries
# from elsewhere, so scripts are skipped and its steps are done here with Debian's ripgrep and
# native modules rebuilt against Debian's Node headers (npm_config_nodedir=/usr; kerberos
# needs libkrb5-dev). Newer code-server versions need Node 22. Idempotent: a stamp file marks
# a finished install, so a CI run installs once (2 minutes measured with an empty npm cache
# on 2 busy cores, up to ~6 minutes reported elsewhere; 317 MB).
set -euo pipefail
cd "$(dirname "$0")/../.."
VERSION=4.100.3
PREFIX="$PWD/.cache/code-server"
STAMP="$PREFIX/installed-$VERSION"
if [ -e "$STAMP" ]; then
  exit 0
fi
for tool in node npm rg g++ make; do
  command -v "$tool" >/dev/null 2>&1 || { echo "install-code-server: $tool is missing" >&2; exit 1; }
done
start=$(date +%s)
mkdir -p "$PREFIX"
cd "$PREFIX"
[ -e package.json ] || echo '{"name": "code-server-cache", "private": true}' >package.json
export npm_config_nodedir=/usr npm_config_audit=false npm_config_fund=false npm_config_loglevel=error
npm install --ignore-scripts "code-server@$VERSION"
npm rebuild argon2 --build-from-source

cd node_modules/code-server/lib/vscode
npm install --omit=dev --ignore-scripts
# What postinstall would download: ripgrep (Debian's), and VS Code's native modules.
mkdir -p node_modules/@vscode/ripgrep/bin
ln -sf "$(command -v rg)" node_modules/@vscode/ripgrep/bin/rg
npm rebuild @vscode/spdlog kerberos @vscode/deviceid @parcel/watcher native-watchdog
# The links code-server's postinstall.sh makes.
rm -rf node_modules.asar && ln -s node_modules node_modules.asar
(cd bin/remote-cli && ln -sf code-linux.sh code-server)
(cd bin/helpers && ln -sf browser-linux.sh browser.sh)
(cd extensions && npm install --omit=dev --ignore-scripts)

touch "$STAMP"
echo "install-code-server: code-server $VERSION in $PREFIX ($(($(date +%s) - start)) s)"
