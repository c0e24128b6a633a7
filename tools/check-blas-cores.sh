#!/bin/sh
# Runs the numeric test suites (core, cli, render, explore) once per OpenBLAS core type and prints
# a table, so that a result holding only with the kernels OpenBLAS picks on this CPU shows up.
# A check to run by hand (it takes a while); CI never sets OPENBLAS_CORETYPE.
#
#   tools/check-blas-cores.sh [BUILD_DIR] [CORE...]
#
# BUILD_DIR defaults to build (configured and compiled if needed); CORE defaults to
# Prescott Nehalem Sandybridge Haswell SkylakeX Zen (OpenBLAS's DYNAMIC_ARCH names; a core this
# CPU cannot run is reported as such by OpenBLAS and its row says which core actually ran).
# Exit status 0 when every row passed.
set -u

SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-build}
[ $# -gt 0 ] && shift
CORES=${*:-Prescott Nehalem Sandybridge Haswell SkylakeX Zen}

cd "$SRC" || exit 2
if [ ! -f "$BUILD/build.ninja" ]; then
  meson setup "$BUILD" >/dev/null || exit 2
fi
meson compile -C "$BUILD" >/dev/null || { echo "check-blas-cores: the build failed" >&2; exit 2; }
RPE="$BUILD/app/rpe"

status=0
rows=""
for core in $CORES; do
  # the core OpenBLAS actually runs (it falls back when the CPU lacks a core's instructions)
  ran=$(OPENBLAS_CORETYPE=$core "$RPE" bench --blas-info 2>/dev/null | sed -n 's/^OpenBLAS core: //p')
  start=$(date +%s)
  OPENBLAS_CORETYPE=$core meson test -C "$BUILD" --no-rebuild --logbase "testlog-blas-$core" \
    --suite core --suite cli --suite render --suite explore >/dev/null 2>&1
  rc=$?
  secs=$(( $(date +%s) - start ))
  counts=$(python3 .ci/count-tap.py "$BUILD/meson-logs/testlog-blas-$core.json" 2>&1 | tail -n 1)
  if [ "$rc" -eq 0 ]; then
    result=pass
  else
    result=FAIL
    status=1
    python3 .ci/count-tap.py "$BUILD/meson-logs/testlog-blas-$core.json" 2>&1 | sed '$d' | sed 's/^/  /' >&2
  fi
  rows="$rows$(printf '%-12s %-12s %-5s %5ss  %s' "$core" "${ran:-?}" "$result" "$secs" "$counts")
"
  printf '%-12s %-12s %-5s %5ss  %s\n' "$core" "${ran:-?}" "$result" "$secs" "$counts" >&2
done

echo
printf '%-12s %-12s %-5s %6s  %s\n' "asked" "ran" "result" "time" "subtests"
printf '%s' "$rows"
exit $status
