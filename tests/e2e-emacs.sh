#!/usr/bin/env bash
# The Emacs suite: each tests/emacs/*.el (helpers.el aside) runs in a real `emacs --batch` (Debian's Emacs 28 with
# its eglot 1.9, from .ci/install) against the real `distdebug lsp`, through
# editors/emacs/distdebug.el. Without Emacs or eglot the suite is skipped, except on CI where a
# missing tool is a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$PWD"
BIN="${DISTDEBUG_BIN:-$REPO/target/debug/distdebug}"

if ! command -v emacs >/dev/null 2>&1 \
  || ! emacs --batch -q --eval '(progn (package-initialize) (require (quote eglot)))' >/dev/null 2>&1; then
  if [ -n "${CI:-}" ]; then
    echo "e2e-emacs: emacs with eglot is missing; .ci/install should have installed emacs-nox and elpa-eglot" >&2
    exit 1
  fi
  echo "e2e-emacs: skipped (apt-get install -y --no-install-recommends emacs-nox elpa-eglot)"
  exit 0
fi

passed=0
failed=0
# The package byte-compiles without a warning (a copy, so no .elc is left in the checkout).
sandbox="$(mktemp -d)"
cp editors/emacs/distdebug.el "$sandbox/"
if HOME="$sandbox" emacs --batch -q --eval '(progn (package-initialize) (setq byte-compile-error-on-warn t))' \
  -f batch-byte-compile "$sandbox/distdebug.el" >"$sandbox/log" 2>&1; then
  echo "PASS editors/emacs/distdebug.el byte-compiles cleanly"
  passed=$((passed + 1))
else
  echo "FAIL editors/emacs/distdebug.el does not byte-compile cleanly:"
  grep -v '^Loading' "$sandbox/log" | tail -n 20
  failed=$((failed + 1))
fi
rm -rf "$sandbox"
for script in tests/emacs/*.el; do
  [ "$(basename "$script")" = helpers.el ] && continue
  sandbox="$(mktemp -d)"
  # -q: no init file, but Debian's site-start (which puts elpa-eglot on the load path). HOME
  # and TMPDIR in a temp folder: nothing is written to the user's. `timeout` bounds a hung
  # Emacs; the test's own waits have shorter deadlines and fail first.
  if HOME="$sandbox" TMPDIR="$sandbox" timeout 300 emacs --batch -q -l "$script" "$REPO" "$BIN" 2>"$sandbox/stderr"; then
    echo "PASS $script"
    passed=$((passed + 1))
  else
    echo "FAIL $script (its stderr:)"
    tail -n 30 "$sandbox/stderr"
    failed=$((failed + 1))
  fi
  rm -rf "$sandbox"
done
echo "e2e-emacs: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
