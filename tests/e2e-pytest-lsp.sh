#!/usr/bin/env bash
# pytest-lsp: `distdebug lsp` driven through the protocol with the capabilities recorded from
# VS Code and Neovim; the library's specification checks are errors here, not warnings.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv-e2e/bin/python
if [ ! -x "$PY" ] || ! "$PY" -c "import pytest_lsp" 2>/dev/null; then
  echo "skipped: pytest-lsp is not installed (.ci/install installs it)"
  exit 0
fi
export DISTDEBUG_BIN="${DISTDEBUG_BIN:-$PWD/target/debug/distdebug}"
"$PY" -m pytest -q -p no:cacheprovider -W error::pytest_lsp.LspSpecificationWarning \
  -c tests/lsp/pytest.ini --rootdir tests/lsp tests/lsp
