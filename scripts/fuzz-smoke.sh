#!/usr/bin/env bash
# Builds the libFuzzer targets (every src/*/*_fuzz.cc) with clang in build-fuzz/ and runs each for
# a few seconds. CI runs it briefly; before landing fuzz-relevant changes run it longer:
#   scripts/fuzz-smoke.sh                       # every target, FUZZ_SECONDS (default 10) each
#   FUZZ_SECONDS=60 scripts/fuzz-smoke.sh json_patch_fuzz strategic_merge_patch_fuzz
# Per target, if present: src/<dir>/<target>.dict is passed as -dict, src/<dir>/<target>_seeds/ as
# read-only seed inputs. A crash, leak, timeout or sanitizer report fails the script; the input is
# kept in build-fuzz/findings/ and the log in build-fuzz/logs/.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${FUZZ_SECONDS:-10}"
build="${FUZZ_BUILD_DIR:-build-fuzz}"
jobs="${FUZZ_JOBS:-2}"

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for source in src/*/*_fuzz.cc; do targets+=("$(basename "$source" .cc)"); done
fi

CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCONVERGE_FUZZ=ON \
  -DCONVERGE_BUILD_TESTS=OFF -DCONVERGE_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  > /dev/null
cmake --build "$build" -j "$jobs" --target "${targets[@]}"

# UBSan only reports by default; make it fatal so that libFuzzer records the input.
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
mkdir -p "$build/findings"

# One target's run: its log in build-fuzz/logs/, the input that failed it in build-fuzz/findings/.
run_target() {
  local target="$1" source dir binary corpus log
  source="$(ls src/*/"$target".cc)"
  dir="$(dirname "$source")"
  binary="$(find "$build" -type f -name "$target" -perm -u+x | head -n 1)"
  corpus="$build/corpus/$target"
  mkdir -p "$corpus"
  local args=(-max_total_time="$seconds" -timeout=10 -max_len=16384 -print_final_stats=1
              -artifact_prefix="$build/findings/$target-")
  [ -f "$dir/$target.dict" ] && args+=(-dict="$dir/$target.dict")
  local inputs=("$corpus")
  [ -d "$dir/${target}_seeds" ] && inputs+=("$dir/${target}_seeds")
  log="$build/logs/$target.log"
  rm -f "$build/findings/$target-"*
  echo "== $target: ${seconds}s"
  if ! "$binary" "${args[@]}" "${inputs[@]}" > "$log" 2>&1; then
    tail -n 60 "$log" >&2
    echo "FAILED: $target (log: $log; inputs: $build/findings/)" >&2
    return 1
  fi
  echo "== $target done: $(grep -E "^#[0-9]+[[:space:]]+DONE" "$log" || true)" \
    "$(grep -E "stat::(number_of_executed_units|peak_rss_mb)" "$log" | tr -s ' \n' ' ' || true)"
}

# FUZZ_JOBS targets at a time: each runs for its wall-clock seconds, whatever CPU it gets.
mkdir -p "$build/logs"
pids=()
for target in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do sleep 0.2; done
  run_target "$target" &
  pids+=("$!")
done
failed=0
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
[ "$failed" -eq 0 ] || exit 1
echo "fuzz smoke: all ${#targets[@]} targets ran ${seconds}s each without findings"
