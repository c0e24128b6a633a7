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
# PNGs at 150 dpi of the presets' physical sizes: page (6.75 in, 9 pt text), column (3.25 in,
# 8 pt), slide (13.333 x 7.5 in, 20 pt)
"$rpe" export templates --checkpoint "$demo" --method sine --head 0 --length 64 --train-length 48 \
  --preset page --dpi 150 -o "$out/templates.png"
"$rpe" export attention --checkpoint "$demo" --method sine --head 1 --length 128 --causal \
  --train-length 64 --attention-transform --preset column --dpi 150 -o "$out/attention.png"
"$rpe" export spe-vs-rpe --checkpoint "$demo" --method conv --head 0 --length 96 --realizations 64 \
  --train-length 64 --preset page --dpi 150 -o "$out/spe-vs-rpe.png"
"$rpe" export error --checkpoint "$demo" --length 32 --preset column --dpi 150 -o "$out/error.png"
"$rpe" export error --checkpoint "$demo" --length 32 --realizations-list 4,8,16,32,64,128,256 --seeds 8 \
  --noise-scheme iid,orthogonal,antithetic,sobol --preset page --dpi 150 -o "$out/noise-error.png"
"$rpe" export profile --checkpoint "$demo" --head 0 --length 64 --preset page --dpi 150 -o "$out/profile.png"
"$rpe" export extrapolation --checkpoint "$demo" --train-length 32 --max-length 128 \
  --preset page --dpi 150 -o "$out/extrapolation.png"
"$rpe" export curves --panel extrapolation-distance --checkpoint "$demo" --train-length 32 --max-length 128 \
  --preset column --dpi 150 -o "$out/extrapolation-distance.png"
"$rpe" export spe-vs-rpe --checkpoint "$demo" --method sine --head 1 --length 64 --realizations 64 \
  --train-length 48 --preset slide --dpi 72 -o "$out/spe-vs-rpe-slide.png"
"$rpe" export spe-vs-rpe --checkpoint "$demo" --method conv --head 0 --length 96 --preset page \
  -o "$out/spe-vs-rpe.pdf"
# the estimate sharpening as R grows: 11 frames, R = 1, 2, 4, ..., 1024
"$rpe" export spe-vs-rpe --checkpoint "$demo" --method sine --head 1 --length 48 --train-length 32 \
  --preset page --dpi 100 --sweep realizations=1:1024 --frames 11 --frame-delay 70 -o "$out/sharpen.gif"
"$rpe" export outputs --checkpoint "$demo" --method sine --no-gate --length 256 --train-length 64 \
  --realizations 256 --value-source sweep --compare kernel --draws 16 --dpi 150 \
  -o "$out/outputs-kernel.png"
# the Outputs figure at a preset: the three strips on one x axis, the plots beside them on a slide
"$rpe" export outputs --checkpoint "$demo" --method sine --length 128 --train-length 64 \
  --value-source impulse --preset slide --dpi 72 -o "$out/outputs-slide.png"
