#!/bin/sh
# RPE Studio quick start for Debian bookworm.
#
#   ./quickstart.sh run    install what is missing, build, and launch the app on its embedded demo
#   ./quickstart.sh test   install what is missing, build, and run every test headless (Xvfb)
#
# Packages are installed with apt-get (through sudo when not run as root) only if missing.
set -eu

cd "$(dirname "$0")"
BUILD_DIR=${RPE_BUILD_DIR:-build}

PACKAGES="build-essential pkg-config meson ninja-build python3
libglib2.0-dev libgtk-4-dev libadwaita-1-dev libjson-glib-dev libcairo2-dev libpango1.0-dev
libopenblas-dev libfftw3-dev libzip-dev libmsgpack-dev libgif-dev libgsl-dev
xvfb xauth desktop-file-utils appstream libxml2-dev libxml2-utils poppler-utils gettext
man-db bash-completion"

install_missing () {
  missing=""
  for p in $PACKAGES; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      missing="$missing $p"
    fi
  done
  if [ -n "$missing" ]; then
    echo "quickstart: installing:$missing"
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then sudo=sudo; fi
    $sudo apt-get update
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing
  fi
}

build () {
  if [ ! -f "$BUILD_DIR/build.ninja" ]; then
    meson setup "$BUILD_DIR"
  fi
  meson compile -C "$BUILD_DIR"
}

case "${1:-}" in
  run)
    install_missing
    build
    # Run uninstalled: the compiled GSettings schema lives in the build tree.
    GSETTINGS_SCHEMA_DIR="$BUILD_DIR/resources" exec "$BUILD_DIR/app/rpe-studio"
    ;;
  test)
    install_missing
    build
    # -noreset: Xvfb otherwise resets when its last client leaves, and a test connecting during
    # the reset fails with "cannot open display" (xorg/xserver#1102).
    GTK_A11Y=none GSK_RENDERER=cairo GDK_BACKEND=x11 GSETTINGS_BACKEND=memory NO_AT_BRIDGE=1 \
      xvfb-run -a -s '-screen 0 1280x800x24 -noreset' meson test -C "$BUILD_DIR" --print-errorlogs
    ;;
  *)
    echo "usage: $0 run|test" >&2
    exit 2
    ;;
esac
