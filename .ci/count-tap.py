#!/usr/bin/env python3
"""Counts TAP results in meson testlog.json files: prints 'N passed, N failed, N skipped'.

A test binary that failed without a failing TAP line (a crash, a sanitizer abort, a timeout) counts as
one failure.  Exit status 1 if anything failed or a log is missing."""
import json
import re
import sys

passed = failed = skipped = 0
missing = False
args = sys.argv[1:]
if args[:1] == ["--extra-failed"]:
    failed += int(args[1])
    args = args[2:]
for path in args:
    label = path.split("/")[0]
    try:
        lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
    except OSError:
        print(f"ci: no test log at {path}")
        failed += 1
        missing = True
        continue
    for line in lines:
        line = line.strip()
        if not line:
            continue
        rec = json.loads(line)
        out = rec.get("stdout") or ""
        p = f = s = 0
        for l in out.splitlines():
            if re.match(r"^ok\b", l):
                if re.search(r"#\s*SKIP", l, re.I):
                    s += 1
                else:
                    p += 1
            elif re.match(r"^not ok\b", l):
                if re.search(r"#\s*TODO", l, re.I):
                    s += 1
                else:
                    f += 1
                    print(f"ci: {label}: {rec.get('name')}: {l}")
        result = rec.get("result")
        if result not in ("OK", "SKIP", "EXPECTEDFAIL") and f == 0:
            f = 1
            print(f"ci: {label}: {rec.get('name')}: {result} without a failing TAP line")
        if result == "OK" and p == 0 and f == 0 and s == 0:
            p = 1   # a plain (non-TAP) test such as desktop-file-validate
        passed += p
        failed += f
        skipped += s
print(f"{passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed or missing else 0)
