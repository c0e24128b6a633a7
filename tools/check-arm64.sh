#!/bin/sh
# Cross-builds the numeric core and `rpe` for arm64 (aarch64) with Debian's multiarch toolchain and
# runs the core and cli test suites under qemu-user.  Works from a clean clone on Debian bookworm
# (amd64): installs what is missing with apt-get (through sudo when not root), registers qemu's
# binfmt handler for aarch64 if needed (the tests spawn `rpe` and re-run themselves), writes a meson
# cross file and builds in BUILD_DIR (default build-arm64) with -Dgui=false.
#
#   tools/check-arm64.sh [BUILD_DIR]
#
# On arm64 the core runs its generic kernels (vector extensions on NEON) where the x86 ones do not
# apply.  Exit status: 0 when both suites pass, 1 when a test fails, 2 when setup or the build fails.
set -eu

SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-build-arm64}
cd "$SRC"
start=$(date +%s)

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  sudo=sudo
fi

# Only packages that install beside their amd64 twins (Multi-Arch: same): libgsl-dev is not, and
# installing libgsl-dev:arm64 would remove the native one, so GSL for arm64 comes from its runtime
# packages and a link directory of this build (below), next to the native headers.
NATIVE="crossbuild-essential-arm64 qemu-user-static binfmt-support meson ninja-build pkg-config python3
libglib2.0-dev-bin gettext libgsl-dev"
ARM64="libc6-dev libglib2.0-dev libjson-glib-dev libzip-dev libmsgpack-dev libopenblas-dev libfftw3-dev
libgsl27 libgslcblas0 libcairo2-dev libpango1.0-dev libgif-dev libxml2-dev"

missing=""
for p in $NATIVE; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
for p in $ARM64; do
  dpkg-query -W -f='${Status}' "$p:arm64" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p:arm64"
done
if [ -n "$missing" ]; then
  echo "check-arm64: installing:$missing"
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    $sudo dpkg --add-architecture arm64
  fi
  $sudo apt-get update >/dev/null || { echo "check-arm64: apt-get update failed" >&2; exit 2; }
  # shellcheck disable=SC2086
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing \
    || { echo "check-arm64: apt-get install failed (see above)" >&2; exit 2; }
fi
echo "check-arm64: packages ready after $(( $(date +%s) - start )) s"

# aarch64 executables run through qemu: the kernel's binfmt_misc handler (in a container it may
# need mounting first)
if [ ! -e /proc/sys/fs/binfmt_misc/register ]; then
  $sudo mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc || true
fi
if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
  $sudo update-binfmts --import qemu-aarch64 >/dev/null 2>&1 || true
  $sudo update-binfmts --enable qemu-aarch64 >/dev/null 2>&1 || true
fi
if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
  echo "check-arm64: cannot register qemu's aarch64 handler in /proc/sys/fs/binfmt_misc" >&2
  exit 2
fi

mkdir -p "$BUILD"
# GSL for arm64: the runtime libraries under their development names, and a gsl.pc for them
extra="$(cd "$BUILD" && pwd)/arm64-gsl"
mkdir -p "$extra/lib" "$extra/pkgconfig"
ln -sf /usr/lib/aarch64-linux-gnu/libgsl.so.27 "$extra/lib/libgsl.so"
ln -sf /usr/lib/aarch64-linux-gnu/libgslcblas.so.0 "$extra/lib/libgslcblas.so"
gsl_version=$(dpkg-query -W -f='${Version}' libgsl27:arm64 | sed 's/+.*//')
cat > "$extra/pkgconfig/gsl.pc" <<EOF
Name: GSL
Description: GNU Scientific Library (arm64 runtime, headers of the native libgsl-dev)
Version: $gsl_version
Libs: -L$extra/lib -lgsl -lgslcblas -lm
Cflags: -I/usr/include
EOF
cross="$BUILD/arm64.cross"
if [ ! -f "$BUILD/build.ninja" ]; then
  cat > "$cross.tmp" <<'EOF'
[binaries]
c = 'aarch64-linux-gnu-gcc'
ar = 'aarch64-linux-gnu-ar'
strip = 'aarch64-linux-gnu-strip'
pkgconfig = 'pkg-config'
exe_wrapper = 'qemu-aarch64-static'

[properties]
pkg_config_libdir = ['@EXTRA@/pkgconfig', '/usr/lib/aarch64-linux-gnu/pkgconfig', '/usr/share/pkgconfig']

[host_machine]
system = 'linux'
cpu_family = 'aarch64'
cpu = 'aarch64'
endian = 'little'
EOF
  sed "s|@EXTRA@|$extra|" "$cross.tmp" > "$cross"
  rm -f "$cross.tmp"
  meson setup "$BUILD" --cross-file "$cross" -Dgui=false >/dev/null \
    || { echo "check-arm64: meson setup failed" >&2; exit 2; }
fi
meson compile -C "$BUILD" || { echo "check-arm64: the arm64 build failed" >&2; exit 2; }
echo "check-arm64: built after $(( $(date +%s) - start )) s"
file "$BUILD/app/rpe" 2>/dev/null || true
"$BUILD/app/rpe" bench --kernels || true

status=0
meson test -C "$BUILD" --suite core --suite cli --print-errorlogs --timeout-multiplier 10 || status=1
echo "check-arm64: $( [ $status -eq 0 ] && echo passed || echo FAILED ) after $(( $(date +%s) - start )) s"
exit $status
