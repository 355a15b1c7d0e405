#!/usr/bin/python3
"""tests/docs/check_excerpts.py ROOT — every code excerpt a chapter or README quotes from the
source still appears in that source, so the book cannot drift from the code it explains.

An excerpt is a fenced code block whose first line names its file:

    ```cpp
    // excerpt: src/zero/step_program.cc
      case Kind::grad_done:  // S_g = 1: the rest of the unit reduced now; else kept for the step's sync
        b_.op(OpKind::grad_done, c.unit);
    ...
      b_.op(OpKind::update, static_cast<int>(u));
    ```

Each run of lines between `...` lines must appear in the file as consecutive lines, and the runs
in the order written (comparison ignores indentation and runs of spaces, so reformatting a file
does not break its excerpts; changing a line does). Exit 0 when every excerpt is found, else one
line per missing run and exit 1. A file with no excerpts is fine; a Markdown file naming a file
that does not exist is an error.
"""
import glob
import os
import re
import sys


def norm(line):
    return " ".join(line.split())


def excerpts(md_text):
    """(file, [runs of normalised lines]) for each excerpt block."""
    for block in re.findall(r"^```[a-z+]*\n(.*?)^```", md_text, re.S | re.M):
        lines = block.splitlines()
        m = re.match(r"^\s*(?://|#)\s*excerpt:\s*(\S+)\s*$", lines[0]) if lines else None
        if not m:
            continue
        runs, run = [], []
        for line in lines[1:]:
            if norm(line) == "...":
                if run:
                    runs.append(run)
                run = []
            elif norm(line):
                run.append(norm(line))
        if run:
            runs.append(run)
        yield m.group(1), runs


def find_run(source, run, start):
    for i in range(start, len(source) - len(run) + 1):
        if source[i:i + len(run)] == run:
            return i + len(run)
    return -1


def main(root):
    docs = sorted(glob.glob(os.path.join(root, "chapters/*/*.md")) + glob.glob(os.path.join(root, "src/*/README.md"))
                  + glob.glob(os.path.join(root, "docs/*.md")) + [os.path.join(root, "README.md")])
    failures, count = [], 0
    for md in docs:
        rel_md = os.path.relpath(md, root)
        for path, runs in excerpts(open(md).read()):
            count += 1
            full = os.path.join(root, path)
            if not os.path.exists(full):
                failures.append(f"{rel_md}: excerpt of {path}, which does not exist")
                continue
            source = [norm(l) for l in open(full).read().splitlines()]
            source = [l for l in source if l]
            at = 0
            for run in runs:
                found = find_run(source, run, at)
                if found < 0:
                    failures.append(f"{rel_md}: excerpt of {path} no longer matches the source at: {run[0]}")
                    break
                at = found
    for f in failures:
        print("check_excerpts:", f)
    print(f"check_excerpts: {count} excerpts checked, {len(failures)} stale")
    return 1 if failures or count == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.getcwd()))
