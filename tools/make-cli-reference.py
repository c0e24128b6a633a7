#!/usr/bin/env python3
"""Write the option reference of docs/cli.md from the built tool's own help.

    tools/make-cli-reference.py [RPE] [--write]

Runs `rpe --help`, then `rpe CMD [SUB] --help-all` for every command and subcommand, and prints a
Markdown section: one table per command with every option, its argument, its help text and the
subcommands that take it.  With --write, replaces the section between the markers
`<!-- cli-reference -->` and `<!-- /cli-reference -->` of docs/cli.md.  The `docs-options` test
checks that docs/cli.md names every option the tool lists."""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN = "<!-- cli-reference -->"
END = "<!-- /cli-reference -->"
OPTION = re.compile(r"^  (?:(-[A-Za-z]), )?(--[a-z0-9][a-z0-9-]*)(=\S+)?\s{2,}(.*)$")


def run(rpe, *args):
    p = subprocess.run([rpe, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit(f"rpe {' '.join(args)} exited {p.returncode}: {p.stderr}")
    return p.stdout


def listed(text, header_re):
    """Names listed two-space indented under the first header matching header_re."""
    names = []
    on = False
    for line in text.split("\n"):
        if re.match(header_re, line):
            on = True
            continue
        if on:
            m = re.match(r"^  ([a-z][a-z0-9-]*)\s{2,}", line)
            if m:
                names.append(m.group(1))
            elif line.strip() == "" and names:
                break
    return names


def options(text):
    """(section, short, long, arg, help) of every option of a --help-all text but the help ones."""
    out = []
    section = None
    for line in text.split("\n"):
        if line and not line.startswith(" ") and line.endswith(":"):
            section = line[:-1]
            continue
        m = OPTION.match(line)
        if not m or section in (None, "Help Options"):
            continue
        short, name, arg, desc = m.groups()
        out.append((section, short, name, arg or "", desc.strip()))
    return out


def escape(s):
    return s.replace("|", "\\|")


def reference(rpe):
    top = run(rpe, "--help")
    commands = [c for c in listed(top, r"^Commands:") if c != "help"]
    lines = [BEGIN, "", "## Option reference", "",
             "Generated from `rpe CMD [SUB] --help-all` by `tools/make-cli-reference.py`; "
             "`rpe COMMAND --help` says the same with an example.", ""]
    global_opts = {}
    for cmd in commands:
        text = run(rpe, cmd, "--help")
        subs = listed(text, r"^(WHAT|VIEW|KIND):")
        table = {}
        order = []
        for sub in subs or [None]:
            args = [cmd] + ([sub] if sub else []) + ["--help-all"]
            for section, short, name, arg, desc in options(run(rpe, *args)):
                if section.startswith("Global"):
                    global_opts[name] = (arg, desc)
                    continue
                if name not in table:
                    table[name] = (short, arg, desc, [])
                    order.append(name)
                if sub:
                    table[name][3].append(sub)
        lines.append(f"### rpe {cmd}")
        lines.append("")
        if not order:
            lines.append("No options besides the global ones.")
            lines.append("")
            continue
        if subs:
            lines.append(f"Subcommands: {', '.join('`' + s + '`' for s in subs)}.")
            lines.append("")
            lines.append("| option | what it sets | taken by |")
            lines.append("|---|---|---|")
        else:
            lines.append("| option | what it sets |")
            lines.append("|---|---|")
        for name in order:
            short, arg, desc, takers = table[name]
            shown = (f"{short}, " if short else "") + name + arg
            row = f"| `{escape(shown)}` | {escape(desc)} |"
            if subs:
                row += " all |" if len(takers) == len(subs) else f" {', '.join(takers)} |"
            lines.append(row)
        lines.append("")
    lines.append("### Global options")
    lines.append("")
    lines.append("Before or after the command (`rpe --threads 2 compute ...` or `rpe compute ... --threads 2`):")
    lines.append("")
    lines.append("| option | what it sets |")
    lines.append("|---|---|")
    for name, (arg, desc) in global_opts.items():
        lines.append(f"| `{escape(name + arg)}` | {escape(desc)} |")
    lines.append("")
    lines.append(END)
    return "\n".join(lines) + "\n"


def main():
    args = [a for a in sys.argv[1:] if a != "--write"]
    rpe = args[0] if args else os.path.join(ROOT, "build", "app", "rpe")
    text = reference(rpe)
    if "--write" not in sys.argv:
        sys.stdout.write(text)
        return
    path = os.path.join(ROOT, "docs", "cli.md")
    doc = open(path, encoding="utf-8").read()
    if BEGIN in doc and END in doc:
        head, rest = doc.split(BEGIN, 1)
        tail = rest.split(END, 1)[1].lstrip("\n")
        doc = head + text + ("\n" + tail if tail else "")
    else:
        doc = doc.rstrip("\n") + "\n\n" + text
    open(path, "w", encoding="utf-8").write(doc)


if __name__ == "__main__":
    main()
