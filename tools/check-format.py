#!/usr/bin/env python3
"""The C formatting check of CI: the lines a change touched must be as .clang-format formats
them (through tools/clang-format-gnome), and g_autoptr/g_auto are written one way.

    tools/check-format.py [--fix] [BASE [HEAD]]

Changed lines are the added or modified lines of `git diff -M BASE HEAD` (renames are followed,
so a moved file counts only its edited lines).  Without HEAD: BASE against the working tree.
Without BASE: the branch against main (origin/main or main, from their merge base) when HEAD
is not on main; on main itself (CI on a fresh clone) the last commit, HEAD~1..HEAD (for a merge,
everything the merge brought).  A clone without HEAD's parent says so and checks the tree-wide
rule only.  --fix rewrites the changed lines in the working tree instead of reporting them.
Exit 0 clean, 1 lines to reformat (a unified diff is printed), 2 cannot run."""
import difflib
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FORMAT = os.path.join(ROOT, 'tools', 'clang-format-gnome')
# generated tables, not written by hand
SKIP = {'ui/render/rpe-colormap-data.h'}
AUTO = re.compile(r'(^|[^A-Za-z0-9_])g_auto(ptr|list|slist|queue)?\(')


def git(*args, check=True):
    p = subprocess.run(['git'] + list(args), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if check and p.returncode != 0:
        sys.stderr.write(p.stderr.decode())
        sys.exit(2)
    return p


def rev(name):
    p = git('rev-parse', '-q', '--verify', name + '^{commit}', check=False)
    return p.stdout.decode().strip() if p.returncode == 0 else None


def default_base():
    head = rev('HEAD')
    if head is None:
        sys.exit('check-format: not a git checkout')
    for ref in ('origin/main', 'main'):
        if rev(ref) is None:
            continue
        mb = git('merge-base', 'HEAD', ref, check=False).stdout.decode().strip()
        if mb and mb != head:
            return mb
        break
    return rev('HEAD~1')


def changed_lines(base, head):
    args = ['diff', '-M', '-U0', '--no-color', '--diff-filter=AMR', base] + ([head] if head else []) + ['--']
    out = git(*args).stdout.decode('utf-8', 'surrogateescape')
    files = {}
    path = None
    for line in out.split('\n'):
        if line.startswith('+++ '):
            path = line[6:] if line.startswith('+++ b/') else None
            if path is not None and (not path.endswith(('.c', '.h')) or path in SKIP):
                path = None
        elif line.startswith('@@ ') and path is not None:
            m = re.match(r'@@ -\S+ \+(\d+)(?:,(\d+))? @@', line)
            start, count = int(m.group(1)), int(m.group(2) or '1')
            if count > 0:
                files.setdefault(path, []).append((start, start + count - 1))
    return files


def content(path, head):
    if head:
        return git('show', '%s:%s' % (head, path)).stdout
    with open(os.path.join(ROOT, path), 'rb') as f:
        return f.read()


def formatted(path, data, ranges):
    args = [FORMAT, '-style=file', '-assume-filename=' + path] + ['-lines=%d:%d' % r for r in ranges]
    p = subprocess.run(args, cwd=ROOT, input=data, stdout=subprocess.PIPE)
    if p.returncode != 0:
        sys.exit('check-format: clang-format failed on ' + path)
    return p.stdout


def main():
    argv = sys.argv[1:]
    fix = '--fix' in argv
    argv = [a for a in argv if a != '--fix']
    status = 0

    bad = git('grep', '-nE', AUTO.pattern.replace('(?:', '('), '--', '*.c', '*.h', check=False).stdout.decode()
    if bad:
        print("check-format: write 'g_autoptr (' and 'g_auto (' with a space:")
        print(bad, end='')
        status = 1

    base = argv[0] if argv else default_base()
    head = argv[1] if len(argv) > 1 else (None if argv else 'HEAD')
    if base is None:
        print('check-format: HEAD has no parent here (a shallow or one-commit clone): no changed lines to check')
        return status
    if rev(base) is None or (head and rev(head) is None):
        print('check-format: %s is not a commit here' % (base if rev(base) is None else head), file=sys.stderr)
        return 2
    if fix and head:
        head = None  # --fix works on the working tree
    print('check-format: lines changed in %s..%s' % (git('rev-parse', '--short', base).stdout.decode().strip(),
                                                    git('rev-parse', '--short', head).stdout.decode().strip()
                                                    if head else 'the working tree'))
    reformat = False
    for path, ranges in sorted(changed_lines(base, head).items()):
        old = content(path, head)
        new = formatted(path, old, ranges)
        if new == old:
            continue
        if fix:
            with open(os.path.join(ROOT, path), 'wb') as f:
                f.write(new)
            print('check-format: reformatted changed lines of ' + path)
            continue
        status = reformat = 1
        diff = difflib.unified_diff(old.decode('utf-8', 'replace').splitlines(True),
                                    new.decode('utf-8', 'replace').splitlines(True),
                                    'a/' + path, 'b/' + path, n=1)
        sys.stdout.writelines(diff)
    if reformat:
        print('check-format: reformat the changed lines with: tools/check-format.py --fix %s' % (argv[0] if argv else ''))
    return status


if __name__ == '__main__':
    sys.exit(main())
