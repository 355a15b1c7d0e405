#!/usr/bin/python3
"""tests/docs/check_structure.py ROOT — the source tree keeps the shape docs/architecture.md
describes, so a reader can trust the folders and the file headers:

1. no source file in src/ is longer than 500 lines (one concept per file);
2. the layering: step/ (the pieces every loop shares) includes none of train/, zero/, offload/,
   predict/; offload/ includes neither train/ nor zero/ nor predict/; the engine (zero/) never
   includes predict/, which predicts it from outside;
3. `diff src/train/single_rank.cc src/zero/train_zero.cc` — the ZeRO delta the two headers tell
   the reader to run — has fewer changed lines than train_zero.cc's header says.

Exit 0 when all hold, else one line per violation and exit 1. Needs GNU diff (diffutils, part of
every Debian system).
"""
import glob
import os
import re
import subprocess
import sys

MAX_LINES = 500
# folder -> folders it must not include from
FORBIDDEN = {
    "step": ("train/", "zero/", "offload/", "predict/"),
    "offload": ("train/", "zero/", "predict/"),
    "zero": ("predict/",),
}


def sources(root):
    for ext in ("h", "cc", "cu", "cuh"):
        yield from glob.glob(os.path.join(root, "src", "**", "*." + ext), recursive=True)


def main(root):
    problems = []
    for path in sorted(sources(root)):
        rel = os.path.relpath(path, root)
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
        if len(lines) > MAX_LINES:
            problems.append(f"{rel}: {len(lines)} lines, more than {MAX_LINES}")
        module = rel.split(os.sep)[1]
        for n, line in enumerate(lines, 1):
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if m and m.group(1).startswith(FORBIDDEN.get(module, ())):
                problems.append(f"{rel}:{n}: {module}/ includes {m.group(1)}")

    reference = os.path.join(root, "src", "train", "single_rank.cc")
    engine = os.path.join(root, "src", "zero", "train_zero.cc")
    with open(engine, encoding="utf-8") as f:
        stated = re.search(r"fewer than (\d+)\s+(?://\s*)?changed lines", f.read())
    if not stated:
        problems.append("src/zero/train_zero.cc: its header states no 'fewer than N changed lines' against the reference")
    else:
        out = subprocess.run(["diff", reference, engine], capture_output=True, text=True).stdout
        changed = sum(1 for line in out.splitlines() if line.startswith(("<", ">")))
        if changed >= int(stated.group(1)):
            problems.append(f"diff single_rank.cc train_zero.cc: {changed} changed lines, the header says fewer "
                            f"than {stated.group(1)}")
        else:
            print(f"check_structure: the ZeRO delta is {changed} changed lines (stated: fewer than {stated.group(1)})")
    for p in problems:
        print("check_structure: " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
