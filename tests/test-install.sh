#!/bin/sh
# test-install.sh MESON BUILD_DIR MANDIR COMPLETIONS_DIR GUI
# `DESTDIR=... meson install` puts rpe(1), rpe-studio(1) and the bash completion of rpe where
# man and bash-completion look (MANDIR, COMPLETIONS_DIR: the absolute install paths); man renders
# both pages without a warning; bash, given only the installed completion, completes
# `rpe ex<TAB>` to `export` and `rpe export --pre<TAB>` to `--preset`.  TAP output.
set -u
meson=$1
build=$2
mandir=$3
compdir=$4
gui=$5
n=0
failed=0

result () {
  n=$((n + 1))
  if [ "$1" = 0 ]; then
    echo "ok $n - $2"
  else
    echo "not ok $n - $2"
    failed=1
  fi
}

dest=$(mktemp -d) || exit 1
trap 'rm -rf "$dest"' EXIT INT TERM

DESTDIR=$dest "$meson" install -C "$build" --no-rebuild --quiet >"$dest/install.log" 2>&1
rc=$?
[ $rc = 0 ] || cat "$dest/install.log" >&2
result $rc "DESTDIR=... meson install"

pages="rpe"
[ "$gui" = true ] && pages="rpe rpe-studio"
for page in $pages; do
  file=$dest$mandir/man1/$page.1
  test -s "$file"
  result $? "installs $mandir/man1/$page.1"
  case "$mandir" in
    */share/man) result 0 "$page.1 is under share/man/man1" ;;
    *) result 1 "$page.1 is under share/man/man1 (mandir $mandir)" ;;
  esac
  if command -v man >/dev/null 2>&1; then
    MANWIDTH=80 man --warnings -l "$file" >"$dest/out" 2>"$dest/err"
    rc=$?
    if [ $rc = 0 ] && [ ! -s "$dest/err" ] && grep -q "^NAME" "$dest/out" && grep -q "SYNOPSIS" "$dest/out"; then
      result 0 "man -l renders $page.1"
    else
      cat "$dest/err" >&2
      result 1 "man -l renders $page.1"
    fi
  else
    n=$((n + 1))
    echo "ok $n - man -l renders $page.1 # SKIP no man (Debian: man-db)"
  fi
done

completion=$dest$compdir/rpe
test -s "$completion"
result $? "installs $compdir/rpe"
case "$compdir" in
  */share/bash-completion/completions) result 0 "the completion is under share/bash-completion/completions" ;;
  *) result 1 "the completion is under share/bash-completion/completions ($compdir)" ;;
esac

complete () {
  bash --norc --noprofile -c '
    . "$1" || exit 1
    shift
    COMP_WORDS=("$@")
    COMP_CWORD=$(($# - 1))
    COMP_LINE="$*"
    COMP_POINT=${#COMP_LINE}
    _rpe
    printf "%s\n" "${COMPREPLY[@]}"' sh "$completion" "$@"
}
got=$(complete rpe ex)
[ "$got" = export ]
result $? "rpe ex<TAB> completes to export (got: $got)"
got=$(complete rpe export --pre)
[ "$got" = --preset ]
result $? "rpe export --pre<TAB> completes to --preset (got: $got)"
got=$(complete rpe export at)
[ "$got" = attention ]
result $? "rpe export at<TAB> completes to the view attention (got: $got)"
got=$(complete rpe compute template --method '')
[ "$(echo $got)" = "sine conv" ]
result $? "rpe compute template --method <TAB> offers sine conv (got: $(echo $got))"

echo "1..$n"
exit $failed
