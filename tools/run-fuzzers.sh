#!/bin/sh
# Runs the libFuzzer targets of fuzz/ for SECONDS_PER_TARGET each (default 60).
#   tools/run-fuzzers.sh [SECONDS_PER_TARGET] [TARGET...]
# Targets: npy npz safetensors pt checkpoint msgpack options capture session (default: all).
# Configures build-fuzz (clang, ASan+UBSan, -Dfuzz=true) if needed.  Seeds come
# from fuzz/corpus/<target>/ (never modified); new inputs go to
# build-fuzz/corpus/<target>/; crashes are saved under fuzz/crashes/ and make
# the script exit non-zero.  Turn each crash into a regression test under
# tests/fixtures/regress/.
set -u

SECONDS_PER_TARGET=${1:-60}
[ $# -gt 0 ] && shift
TARGETS=${*:-npy npz safetensors pt checkpoint msgpack options capture session}

SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD="$SRC/build-fuzz"
CRASHES="$SRC/fuzz/crashes"

if [ ! -f "$BUILD/build.ninja" ]; then
  CC=clang meson setup "$BUILD" "$SRC" -Dgui=false -Dfuzz=true \
    -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debugoptimized || exit 2
fi
for t in $TARGETS; do
  ninja -C "$BUILD" "fuzz/fuzz-$t" || exit 2
done

mkdir -p "$CRASHES"
status=0
for t in $TARGETS; do
  work="$BUILD/corpus/$t"
  mkdir -p "$work"
  echo "== fuzz-$t for ${SECONDS_PER_TARGET}s"
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
  OPENBLAS_NUM_THREADS=1 \
    "$BUILD/fuzz/fuzz-$t" -max_total_time="$SECONDS_PER_TARGET" -timeout=10 -rss_limit_mb=2048 \
      -max_len=65536 -print_final_stats=1 -close_fd_mask=2 -artifact_prefix="$CRASHES/$t-" \
      "$work" "$SRC/fuzz/corpus/$t" 2>&1 | grep -E "^(#[0-9]+ *DONE|stat::number_of_executed_units|==[0-9]+==ERROR|SUMMARY|INFO: Running with)|artifact"
  rc=$?
  if ls "$CRASHES/$t-"* >/dev/null 2>&1; then
    echo "!! fuzz-$t: crash inputs in $CRASHES" >&2
    status=1
  fi
done
exit $status
