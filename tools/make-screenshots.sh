#!/bin/sh
# make-screenshots.sh: renders the README screenshots from the app itself.
#
# The window is drawn through gtk_widget_paintable -> GskRenderNode -> cairo
# (test /ui/explorer/screenshots in tests/test-ui-explorer.c) at 1280x800 under
# Xvfb, on the embedded demo, and saved as docs/screenshots/<view>.png (the Outputs view by
# /ui/outputs/screenshot in tests/test-ui-outputs.c).
#
# Usage: tools/make-screenshots.sh [BUILD_DIR]   (default: build; GUI enabled)
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
case "$build" in /*) ;; *) build="$src/$build" ;; esac
ninja -C "$build" tests/test-ui-explorer resources/gschemas.compiled
mkdir -p "$src/docs/screenshots"
cd "$build"
env GTK_A11Y=none GSK_RENDERER=cairo GDK_BACKEND=x11 GSETTINGS_BACKEND=memory \
    GSETTINGS_SCHEMA_DIR="$build/resources" OPENBLAS_NUM_THREADS=1 \
    RPE_SCREENSHOT_DIR="$src/docs/screenshots" \
    xvfb-run -a -s '-screen 0 1280x800x24 -noreset' \
    ./tests/test-ui-explorer -p /ui/explorer/screenshots
ninja -C "$build" tests/test-ui-outputs
env GTK_A11Y=none GSK_RENDERER=cairo GDK_BACKEND=x11 GSETTINGS_BACKEND=memory \
    GSETTINGS_SCHEMA_DIR="$build/resources" OPENBLAS_NUM_THREADS=1 \
    RPE_SCREENSHOT_DIR="$src/docs/screenshots" \
    xvfb-run -a -s '-screen 0 1280x800x24 -noreset' \
    ./tests/test-ui-outputs -p /ui/outputs/screenshot
ninja -C "$build" tests/test-ui-compare
env GTK_A11Y=none GSK_RENDERER=cairo GDK_BACKEND=x11 GSETTINGS_BACKEND=memory \
    GSETTINGS_SCHEMA_DIR="$build/resources" OPENBLAS_NUM_THREADS=1 \
    RPE_SCREENSHOT_DIR="$src/docs/screenshots" G_TEST_SRCDIR="$src/tests" \
    xvfb-run -a -s '-screen 0 1280x800x24 -noreset' \
    ./tests/test-ui-compare -p /ui/compare/screenshots
ls -l "$src/docs/screenshots"
