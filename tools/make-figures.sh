#!/bin/sh
# Regenerates the example figures of README.md (docs/figures/) with `rpe export`.
# Usage: tools/make-figures.sh [BUILD_DIR]   (default: build)
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
case $build in /*) ;; *) build=$here/$build ;; esac
rpe=$build/app/rpe
demo=$build/tools/demo.safetensors
out=$here/docs/figures
[ -x "$rpe" ] || { echo "make-figures: $rpe not found (build first: ninja -C $build)" >&2; exit 2; }
[ -f "$demo" ] || ninja -C "$build" tools/demo.safetensors
mkdir -p "$out"
set -x
"$rpe" export templates --checkpoint "$demo" --method sine --head 0 --length 64 \
  --width 900 --dpi 150 -o "$out/templates.png"
"$rpe" export attention --checkpoint "$demo" --method sine --head 1 --length 128 --causal \
  --train-length 64 --attention-transform --width 700 --dpi 150 -o "$out/attention.png"
"$rpe" export spe-vs-rpe --checkpoint "$demo" --method conv --head 0 --length 96 --realizations 64 \
  --width 1100 --dpi 150 -o "$out/spe-vs-rpe.png"
"$rpe" export error --checkpoint "$demo" --length 32 --width 900 --dpi 150 -o "$out/error.png"
"$rpe" export error --checkpoint "$demo" --length 32 --realizations-list 4,8,16,32,64,128,256 --seeds 8 --noise-scheme iid,orthogonal,antithetic,sobol --width 900 --dpi 150 -o "$out/noise-error.png"
"$rpe" export profile --checkpoint "$demo" --head 0 --length 64 --width 900 --dpi 150 -o "$out/profile.png"
"$rpe" export extrapolation --checkpoint "$demo" --train-length 32 --max-length 128 \
  --width 1000 --dpi 150 -o "$out/extrapolation.png"
"$rpe" export spe-vs-rpe --checkpoint "$demo" --method conv --head 0 --length 96 -o "$out/spe-vs-rpe.pdf"
