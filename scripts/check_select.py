#!/usr/bin/python3
"""scripts/check_select.py [BASE] — which CTest labels a change touches, for `make check`.

The change is the files that differ between BASE and the working tree (`git diff --name-only BASE`,
untracked files included); with no BASE, the uncommitted work, or the last commit when nothing is
uncommitted. Each file maps to labels by the table below: a chapter's folder to its own label, a
module of src/ to the chapters whose tests exercise it directly (its unit tests and the chapter
that teaches it), a folder of tests/ to the chapters its cases carry. A file the table does not
know (the build files, tests/support, an unknown folder) selects every chapter, so nothing is
skipped by omission. Files that only the docs checks read (Markdown, docs/, notebooks/, the
checkers) select no chapter: `make check` always runs the docs and layout checks.

Prints two lines: the chapter numbers selected (space-separated; empty when none), then the
changed files, for the record. This is a contributor's quick loop, not a proof: a change can
break a chapter outside its map, which `make test` runs in full.
"""
import os
import re
import subprocess
import sys

ALL = list(range(1, 17))

# path prefix -> the chapters whose tests to run (longest prefix wins)
TABLE = {
    "src/fp/": [1, 2],
    "src/core/": [1, 2, 4, 5],
    "src/data/": [2],
    "src/kernels/": [2, 11, 13],
    "src/model/": [2, 10, 11, 13],
    "src/optim/": [2],
    "src/step/": [2, 6, 13],
    "src/train/": [2, 3, 6, 7, 8, 9, 13],
    "src/memory/": [3],
    "src/plan/": [3, 6, 7, 8, 9],
    "src/predict/": [3, 6, 7, 8, 9],
    "src/reduce/": [4, 6, 13],
    "src/collective/": [4, 5, 11, 13],
    "src/launch/": [5],
    "src/store/": [5],
    "src/zero/": [6, 7, 8, 9, 11, 12, 14, 15],
    "src/schedule/": [6, 7, 8, 9, 15],
    "src/zero_r/": [10, 12],
    "src/device/": [13],
    "src/gemm/": [13],
    "src/step_device/": [13],
    "src/checkpoint/": [14],
    "src/offload/": [14],
    "src/pipeline/": [15],
    "src/apps/zero-train/": [2, 6],
    "src/apps/zero-plan/": [3, 6],
    "src/apps/zero-launch/": [5],
    "src/apps/zero-collbench/": [4],
    "src/apps/zero-memreplay/": [12],
    "src/apps/zero-ckpt/": [14],
    "tests/fp/": [1],
    "tests/core/": [1],
    "tests/chapter01/": [1],
    "tests/chapter02/": [2],
    "tests/data/": [2],
    "tests/optim/": [2],
    "tests/kernels/": [2, 11, 13],
    "tests/model/": [2, 10, 11, 13],
    "tests/train/": [2, 3, 6, 7, 8, 9, 13],
    "tests/chapter03/": [3],
    "tests/memory/": [3],
    "tests/plan/": [3, 6, 7, 8, 9],
    "tests/chapter04/": [4, 5],
    "tests/chapter05/": [5],
    "tests/collective/": [4, 5, 11, 13],
    "tests/launch/": [5],
    "tests/reduce/": [4, 13],
    "tests/chapter06/": [6, 7, 8, 9],
    "tests/zero/": [6, 7, 8, 9, 11, 12, 13, 14, 15],
    "tests/device/": [13],
    "tests/gemm/": [13],
    "tests/gpu/": [13],
    "tests/step/": [13],
    "tests/checkpoint/": [14],
    "tests/resume/": [14],
    "tests/schedule/": [15],
    "tests/pipeline/": [15],
    "tests/chapter16/": [16],
    "bench/": [],
}
# read only by the docs and layout checks, which make check always runs
DOCS_ONLY = re.compile(r"(\.md$|^docs/|^notebooks/|^tests/docs/|^tests/setup/|^tests/fuzz/|^scripts/figures/"
                       r"|^scripts/check_deps\.py$|^scripts/test_report\.py$|^scripts/check_select\.py$|^scripts/cli_doc\.py$)")
CHAPTER = re.compile(r"^chapters/(\d\d)-")


def changed_files(base):
    def git(*args):
        return subprocess.run(["git", *args], capture_output=True, text=True, check=True).stdout.split()

    untracked = git("ls-files", "--others", "--exclude-standard")
    if base:
        return sorted(set(git("diff", "--name-only", base) + untracked))
    files = set(git("diff", "--name-only", "HEAD") + untracked)
    if not files:
        files = set(git("diff", "--name-only", "HEAD~1", "HEAD"))
    return sorted(files)


def chapters_of(path):
    m = CHAPTER.match(path)
    if m:  # its text, program, quotes or exercises: the chapter's tests and its replay
        return [int(m.group(1))]
    if DOCS_ONLY.search(path):
        return []
    best = None
    for prefix in TABLE:
        if path.startswith(prefix) and (best is None or len(prefix) > len(best)):
            best = prefix
    return TABLE[best] if best is not None else ALL


def main():
    base = sys.argv[1] if len(sys.argv) > 1 else ""
    try:
        files = changed_files(base)
    except subprocess.CalledProcessError as e:
        said = (e.stderr or "").strip().splitlines()
        sys.exit("check_select: git %s: %s" % (" ".join(e.cmd[1:]), said[0] if said else "failed"))
    chosen = sorted({ch for f in files for ch in chapters_of(f)})
    print(" ".join(str(c) for c in chosen))
    print(" ".join(files))


if __name__ == "__main__":
    main()
