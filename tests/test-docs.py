#!/usr/bin/env python3
"""The documentation against the tool it documents.  TAP output.

test-docs.py links SOURCE_ROOT
    Every relative link and image of README.md and docs/*.md names a file of the repository, and
    every #anchor names a heading of its target (GitHub's rule: lower case, punctuation dropped,
    spaces to hyphens, -1, -2 ... for repeats).

test-docs.py commands SOURCE_ROOT RPE
    Every `rpe` command of the ```sh code blocks of README.md and docs/*.md (and the inline `rpe ...`
    examples of README.md's tables) runs as written against the built RPE and exits 0.  Each file
    runs in its own empty directory, its commands in document order, so the one-liners a page shows
    to make its inputs (`rpe fit ... -o model.safetensors`, `rpe compute ... -o q.npy`) run before
    the commands that read them.  `rpe bench` runs with --quick.  A command preceded by a comment
    line `# not run: REASON` is illustrative (a file of the reader's own, a window to watch) and is
    only listed as skipped; keep those few.

test-docs.py options SOURCE_ROOT RPE
    Every long option `rpe CMD --help-all` lists is named in docs/cli.md, so the reference cannot
    fall behind the tool.

test-docs.py demos SOURCE_ROOT RPE
    The trained demos' accuracy tables of README.md and docs/checkpoints.md (a row whose first cell
    is `demo:NAME` and which holds three accuracies) give, in order, the accuracies at N_train,
    2 N_train and 4 N_train that `rpe info demo:NAME` prints from the demo's own metadata; every
    demo `rpe info` knows has a row in each.
"""

import os
import re
import shlex
import subprocess
import sys
import tempfile
import unicodedata

n = 0
failed = False


def result(ok, what, skip=None):
    global n, failed
    n += 1
    if skip is not None:
        print(f"ok {n} - {what} # SKIP {skip}")
    elif ok:
        print(f"ok {n} - {what}")
    else:
        print(f"not ok {n} - {what}")
        failed = True
    sys.stdout.flush()


def doc_files(root):
    files = [os.path.join(root, "README.md")]
    ddir = os.path.join(root, "docs")
    files += sorted(os.path.join(ddir, f) for f in os.listdir(ddir) if f.endswith(".md"))
    return files


FENCE = re.compile(r"^(\s*)(```|~~~)(.*)$")


def strip_code_blocks(text):
    """The text outside fenced code blocks, lines of code blocks blanked (keeps line numbers)."""
    out = []
    in_block = False
    for line in text.split("\n"):
        if FENCE.match(line):
            in_block = not in_block
            out.append("")
        else:
            out.append("" if in_block else line)
    return "\n".join(out)


def slug(heading):
    """GitHub's anchor of a heading."""
    s = heading.strip().lower()
    s = re.sub(r"<[^>]+>", "", s)          # inline HTML such as <sub>
    s = s.replace("`", "")
    s = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", s)
    kept = []
    for ch in s:
        cat = unicodedata.category(ch)
        if ch in " -_" or cat[0] in "LNM":
            kept.append(ch)
    return "".join(kept).replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        text = strip_code_blocks(open(path, encoding="utf-8").read())
        seen = {}
        found = set()
        for line in text.split("\n"):
            m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
            if not m:
                continue
            base = slug(m.group(1))
            k = seen.get(base, 0)
            found.add(base if k == 0 else f"{base}-{k}")
            seen[base] = k + 1
        cache[path] = found
    return cache[path]


LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HTML_LINK = re.compile(r"""(?:href|src)\s*=\s*["']([^"']+)["']""")

# Files another part of the project adds; listed here so that the link stays in the page while it is
# on its way.  A file listed here is checked like any other as soon as it exists.
PENDING: set = set()


def check_links(root):
    for path in doc_files(root):
        rel_doc = os.path.relpath(path, root)
        text = strip_code_blocks(open(path, encoding="utf-8").read())
        text = re.sub(r"`(?:[^`\n]|\n(?!\s*\n))*`", "", text)   # inline code (may span lines) is no link
        targets = [m.group(1) for m in LINK.finditer(text)]
        targets += [m.group(1) for m in HTML_LINK.finditer(text)]
        for target in targets:
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):     # http:, https:, mailto:
                continue
            file_part, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
            rel_dest = os.path.relpath(dest, root)
            what = f"{rel_doc}: {target}"
            if rel_dest.startswith(".."):
                result(False, f"{what} points outside the repository")
                continue
            if not os.path.exists(dest):
                if rel_dest in PENDING:
                    result(True, what, skip=f"{rel_dest} is not in the tree yet")
                else:
                    result(False, f"{what} (no such file)")
                continue
            if anchor:
                if not dest.endswith(".md"):
                    result(False, f"{what} (an anchor into a file that is not Markdown)")
                    continue
                result(anchor in anchors(dest), f"{what} (anchor)")
            else:
                result(True, what)
    # user-facing text says nothing of internal issue numbers nor of files outside the repository
    for path in doc_files(root):
        rel_doc = os.path.relpath(path, root)
        text = open(path, encoding="utf-8").read()
        bad = re.findall(r"issue[- ]?#?[0-9]+", text, re.IGNORECASE)
        result(not bad, f"{rel_doc} names no internal issue number {bad if bad else ''}")
        bad = re.findall(r"\.\./" + "shared|/work/" + "shared", text)   # split: this file names neither
        result(not bad, f"{rel_doc} points at nothing outside the repository")


def commands(path):
    """(line number, argv, skip reason) of every rpe command of a page, in document order."""
    lines = open(path, encoding="utf-8").read().split("\n")
    found = []
    in_block = False
    runnable = False
    pending_skip = None
    i = 0
    readme = os.path.basename(path) == "README.md"
    while i < len(lines):
        line = lines[i]
        m = FENCE.match(line)
        if m:
            in_block = not in_block
            runnable = in_block and m.group(3).strip() in ("sh", "bash", "shell", "console")
            pending_skip = None
            i += 1
            continue
        if not in_block:
            if readme and line.startswith("|"):
                for span in re.findall(r"`(rpe [^`]* -o [^`]*)`", line):
                    found.append((i + 1, shlex.split(span), None))
            i += 1
            continue
        if not runnable:
            i += 1
            continue
        start = i
        full = line
        while full.endswith("\\") and i + 1 < len(lines):
            i += 1
            full = full[:-1] + " " + lines[i].strip()
        i += 1
        stripped = full.strip()
        m = re.match(r"^#\s*not run:\s*(.*)$", stripped)
        if m:
            pending_skip = m.group(1) or "illustrative"
            continue
        if not stripped or stripped.startswith("#"):
            continue
        try:
            words = shlex.split(stripped, comments=True)
        except ValueError as e:
            found.append((start + 1, None, f"cannot parse: {e}"))
            continue
        if words and (words[0] in ("rpe", "build/app/rpe") or words[:2] == ["python3", "-c"]):
            found.append((start + 1, words, pending_skip))
        pending_skip = None
    return found


def have_numpy():
    p = subprocess.run([sys.executable, "-c", "import numpy"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    return p.returncode == 0


def run_commands(root, rpe):
    env = dict(os.environ)
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    numpy = have_numpy()
    for path in doc_files(root):
        rel_doc = os.path.relpath(path, root)
        no_numpy = False
        with tempfile.TemporaryDirectory(prefix="rpe-docs-") as tmp:
            for lineno, words, skip in commands(path):
                if words is None:
                    result(False, f"{rel_doc}:{lineno}: {skip}")
                    continue
                shown = " ".join(shlex.quote(w) for w in words)
                what = f"{rel_doc}:{lineno}: {shown}"
                if skip is not None:
                    result(True, what, skip=f"not run: {skip}")
                    continue
                if words[0] == "python3":
                    # a one-liner that writes an input (numpy: Debian's python3-numpy)
                    no_numpy = no_numpy or not numpy
                    argv = [sys.executable] + words[1:]
                else:
                    argv = [rpe] + words[1:]
                if no_numpy:
                    result(True, what, skip="python3-numpy is not installed (the page's one-liners need it)")
                    continue
                if len(words) > 1 and words[1] == "bench" and "--quick" not in words:
                    argv.append("--quick")
                p = subprocess.run(argv, cwd=tmp, env=env, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   errors="replace")
                if p.returncode != 0:
                    sys.stderr.write(f"{what}\n  exit {p.returncode}\n{p.stderr}\n")
                result(p.returncode == 0, what)


def check_options(root, rpe):
    cli = open(os.path.join(root, "docs", "cli.md"), encoding="utf-8").read()
    top = subprocess.run([rpe, "--help"], stdout=subprocess.PIPE, text=True).stdout
    cmds = []
    for line in top.split("\n"):
        m = re.match(r"^  ([a-z][a-z-]*)\s{2,}", line)
        if m and m.group(1) != "help":
            cmds.append(m.group(1))
    result(len(cmds) >= 6, f"rpe --help lists commands: {' '.join(cmds)}")
    for cmd in cmds:
        result(f"rpe {cmd}" in cli, f"docs/cli.md documents rpe {cmd}")
        usage = subprocess.run([rpe, cmd, "--help"], stdout=subprocess.PIPE, text=True).stdout
        subs = []
        on = False
        for line in usage.split("\n"):
            if re.match(r"^(WHAT|VIEW|KIND):", line):
                on = True
            elif on:
                m = re.match(r"^  ([a-z][a-z0-9-]*)\s{2,}", line)
                if m:
                    subs.append(m.group(1))
                elif line.strip() == "" and subs:
                    break
        for sub in subs or [None]:
            words = [cmd] + ([sub] if sub else [])
            name = " ".join(words)
            if sub:
                result(re.search(r"`" + re.escape(sub) + r"`", cli) is not None, f"docs/cli.md names rpe {name}")
            p = subprocess.run([rpe, *words, "--help-all"], stdout=subprocess.PIPE, text=True)
            result(p.returncode == 0, f"rpe {name} --help-all exits 0")
            names = sorted(set(re.findall(r"^\s+(?:-[A-Za-z], )?--([a-z0-9][a-z0-9-]*)", p.stdout, re.M)))
            names = [o for o in names if o != "help" and not o.startswith("help-")]
            missing = [o for o in names if not re.search(r"--" + re.escape(o) + r"(?![a-z0-9-])", cli)]
            result(not missing, f"docs/cli.md names every option of rpe {name}"
                   + (f" (missing: {' '.join('--' + o for o in missing)}; tools/make-cli-reference.py --write)"
                      if missing else ""))


DEMO_ROW = re.compile(r"^\|\s*`(demo:[a-z-]+)`\s*\|(.*)$")
ACCURACY = re.compile(r"^\s*([01]\.[0-9]{4})\s*$")


def demo_rows(path):
    """{demo: (acc N_train, acc 2 N_train, acc 4 N_train)} of the Markdown table rows of path."""
    rows = {}
    for line in open(path, encoding="utf-8"):
        m = DEMO_ROW.match(line.strip())
        if not m:
            continue
        cells = [c for c in m.group(2).split("|")]
        acc = [ACCURACY.match(c).group(1) for c in cells if ACCURACY.match(c)]
        if len(acc) == 3:
            rows[m.group(1)] = tuple(acc)
    return rows


def check_demos(root, rpe):
    names = ["demo:sine-spe", "demo:conv-spe", "demo:lrpe", "demo:fastrpb", "demo:ape"]
    keys = ["accuracy_n_train", "accuracy_2n_train", "accuracy_4n_train"]
    meta = {}
    for name in names:
        p = subprocess.run([rpe, "info", name], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        found = dict(re.findall(r"^\s+(accuracy_[0-9a-z_]+)\s+([0-9.]+)\s*$", p.stdout, re.M))
        ok = p.returncode == 0 and all(k in found for k in keys)
        result(ok, f"rpe info {name} prints its three accuracies")
        if ok:
            meta[name] = tuple(found[k] for k in keys)
    for doc in ("README.md", os.path.join("docs", "checkpoints.md")):
        rows = demo_rows(os.path.join(root, doc))
        for name, want in meta.items():
            got = rows.get(name)
            result(got == want, f"{doc} gives {name} the accuracies rpe info prints"
                   + ("" if got == want else f" (table {got}, rpe info {want})"))


def main():
    mode, root = sys.argv[1], sys.argv[2]
    if mode == "links":
        check_links(root)
    elif mode == "commands":
        run_commands(root, sys.argv[3])
    elif mode == "options":
        check_options(root, sys.argv[3])
    elif mode == "demos":
        check_demos(root, sys.argv[3])
    else:
        sys.exit(f"unknown mode {mode}")
    print(f"1..{n}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
