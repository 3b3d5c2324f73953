#!/usr/bin/env bash
# The VS Code suite: compiles the extension, runs it under `node --test` with a fake `vscode`
# module while the real vscode-languageclient spawns the real `distdebug lsp`
# (editors/vscode/test/), then packages it as a .vsix with vsce and checks what the package
# holds. Needs `npm ci` in editors/vscode (.ci/install); without it the suite is skipped,
# except on CI where a missing tool is a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
export DISTDEBUG_BIN="${DISTDEBUG_BIN:-$PWD/target/debug/distdebug}"
cd editors/vscode

if [ ! -x node_modules/.bin/tsc ] || [ ! -x node_modules/.bin/vsce ]; then
  if [ -n "${CI:-}" ]; then
    echo "e2e-vscode: editors/vscode/node_modules is missing; .ci/install should have run npm ci" >&2
    exit 1
  fi
  echo "e2e-vscode: skipped (run: cd editors/vscode && npm ci)"
  exit 0
fi

rm -rf out
node_modules/.bin/tsc -p .
# Test files are listed one by one: helpers in test/ must not run as tests.
node --test --test-reporter=spec test/binary.test.js test/units.test.js test/extension.test.js

# The package a user installs with `code --install-extension editors/vscode/distdebug.vsix`.
rm -f distdebug.vsix
node_modules/.bin/vsce package --skip-license --allow-missing-repository --out distdebug.vsix >/dev/null
python3 - <<'PY'
import sys, zipfile
names = set(zipfile.ZipFile("distdebug.vsix").namelist())
need = ["extension/package.json", "extension/out/extension.js",
        "extension/node_modules/vscode-languageclient/lib/node/main.js"]
missing = [n for n in need if n not in names]
leaked = sorted(n for n in names if n.startswith(("extension/src/", "extension/test/")))
if missing or leaked:
    sys.exit(f"distdebug.vsix: missing {missing}, should not hold {leaked[:5]}")
print(f"e2e-vscode: packaged editors/vscode/distdebug.vsix ({len(names)} files)")
PY
