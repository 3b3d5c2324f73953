#!/usr/bin/env bash
# Coverage-guided fuzzing of distdebug's parsers (cargo fuzz, libFuzzer + AddressSanitizer):
#   tests/fuzz.sh [SECONDS] [TARGET...]
# runs each target (default: all) for SECONDS (default 20) from the committed seeds in
# fuzz/seeds/<target>/, growing a working corpus in fuzz/corpus/<target>/ (not committed).
# A crash stops the script with status 1 and leaves the input in fuzz/artifacts/<target>/;
# reproduce it with `cargo fuzz run <target> <file>` in fuzz/. Needs cargo-fuzz
# (`cargo install cargo-fuzz`, .ci/install does it); it uses nightly flags, which the stable
# toolchain accepts with RUSTC_BOOTSTRAP=1.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"

SECONDS_EACH="${1:-20}"
shift || true
TARGETS=("$@")
if [ "${#TARGETS[@]}" -eq 0 ]; then
  TARGETS=(transport incident_files attempt_files evidence code_model)
fi
export RUSTC_BOOTSTRAP=1
# FUZZ_DEV=1 builds the targets without optimisation: a few minutes less to build, fewer runs
# per second; what CI's brief smoke run wants.
PROFILE=()
[ -n "${FUZZ_DEV:-}" ] && PROFILE=(--dev)

if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "fuzz: cargo-fuzz is missing; run: cargo install cargo-fuzz (or .ci/install)" >&2
  exit 1
fi
cargo fuzz build "${PROFILE[@]}" >/dev/null 2>&1 || { cargo fuzz build "${PROFILE[@]}" 2>&1 | tail -n 30 >&2; exit 1; }

total_runs=0
for t in "${TARGETS[@]}"; do
  mkdir -p "corpus/$t"
  log="$(mktemp)"
  # -rss_limit_mb: the code model of a large input is allowed its memory, a leak is not.
  if ! cargo fuzz run "${PROFILE[@]}" "$t" "corpus/$t" "seeds/$t" -- \
      -max_total_time="$SECONDS_EACH" -max_len=65536 -rss_limit_mb=2048 -timeout=10 \
      -print_final_stats=1 >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "fuzz: $t FAILED; the input is in fuzz/artifacts/$t/" >&2
    exit 1
  fi
  runs="$(grep -m1 'stat::number_of_executed_units' "$log" | awk '{print $2}')"
  cov="$(grep -E '^#[0-9]+.*(DONE|cov:)' "$log" | tail -n 1 | grep -oE 'cov: [0-9]+' || true)"
  echo "fuzz: $t: ${runs:-?} runs in ${SECONDS_EACH} s, ${cov:-cov: ?}, corpus $(ls "corpus/$t" | wc -l) inputs"
  total_runs=$((total_runs + ${runs:-0}))
  rm -f "$log"
done
echo "fuzz: ${#TARGETS[@]} target(s), ${total_runs} runs, $((SECONDS_EACH * ${#TARGETS[@]})) s of fuzzing, no crash"
