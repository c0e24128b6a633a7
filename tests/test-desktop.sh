#!/bin/sh
# test-desktop.sh DESKTOP MIME_XML INTRO_INSTALLED_JSON
# The desktop integration files: the .desktop file is valid and opens files
# (%F) of the types the shared-mime-info file defines; update-mime-database
# compiles that file without a complaint and recognises each type by name
# (and .npy by content); `meson install` installs both where the desktop
# looks for them.  TAP output.
set -u
desktop=$1
mime=$2
installed=$3
n=0
failed=0

check () {
  n=$((n + 1))
  desc=$1
  shift
  if "$@" >/dev/null 2>&1; then
    echo "ok $n - $desc"
  else
    echo "not ok $n - $desc"
    failed=1
  fi
}

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

check "desktop-file-validate accepts the .desktop file" desktop-file-validate "$desktop"
check "Exec passes the files (%F)" grep -qx 'Exec=rpe-studio %F' "$desktop"
check "xmllint: the mime file is well-formed" xmllint --noout "$mime"

mkdir -p "$tmp/mime/packages"
cp "$mime" "$tmp/mime/packages/"
XDG_DATA_HOME="$tmp" XDG_DATA_DIRS="$tmp" update-mime-database "$tmp/mime" >"$tmp/umd.log" 2>&1
status=$?
check "update-mime-database compiles it" test "$status" -eq 0
check "update-mime-database has nothing to complain about" test ! -s "$tmp/umd.log"

types=$(sed -n 's/^MimeType=//p' "$desktop" | tr ';' ' ')
check "the .desktop file names MIME types" test -n "$types"
for t in $types; do
  check "$t is defined by the mime file" test -f "$tmp/mime/$t.xml"
done
for pair in safetensors:application/x-safetensors pt:application/x-pytorch pth:application/x-pytorch \
            npz:application/x-npz npy:application/x-npy rpe-session:application/x-rpe-session; do
  ext=${pair%%:*}
  t=${pair#*:}
  check "*.$ext is $t" grep -q ":$t:\*\.$ext\$" "$tmp/mime/globs2"
  check "the .desktop file lists $t" sh -c "sed -n 's/^MimeType=//p' '$desktop' | tr ';' '\n' | grep -qx '$t'"
done
check "a .npy is also known by its magic" grep -q 'application/x-npy' "$tmp/mime/magic"

for f in "share/applications/io.github.rpestudio.RpeStudio.desktop" \
         "share/mime/packages/io.github.rpestudio.RpeStudio.mime.xml"; do
  check "meson install installs $f" grep -q "$f" "$installed"
done

echo "1..$n"
exit $failed
