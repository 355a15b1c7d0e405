#!/usr/bin/python3
"""tests/docs/check_labels.py ROOT — the project speaks only of itself.

A reader of a chapter, a README, a notebook or a source comment meets chapters, sections,
modules and programs, never the labels under which the work was planned: a milestone code such
as "P4" or "(P9)", a page marked "draft", or "session" in the sense of a stint of work ("this
part's session"). Those words mean nothing to a student and go stale the day they are written.

Scanned: every text file under chapters/, docs/, notebooks/, src/, tests/, bench/, scripts/, and
README.md, Makefile, CMakeLists.txt (build folders, hidden folders and the fuzz corpora skipped).
Exit 0 when none is found, else one line per finding (file:line: the label, the line) and exit 1.

`--self-test` runs the matcher on planted lines, each of which must be reported, and on lines
that look close but are the project's own vocabulary (P_a, FP16, H100, PCIe), which must not.
"""
import os
import re
import sys

SCANNED_DIRS = ("chapters", "docs", "notebooks", "src", "tests", "bench", "scripts")
SCANNED_FILES = ("README.md", "Makefile", "CMakeLists.txt")
SKIPPED_DIRS = {"corpus", "__pycache__"}
TEXT_SUFFIXES = (".md", ".h", ".cc", ".cu", ".cuh", ".py", ".sh", ".ipynb", ".json", ".txt", ".cmake", ".in")

# a milestone code (P1 .. P99 as a word: "P4", "(P9)", "P8's"), a draft mark, a work session
LABELS = [
    ("milestone label", re.compile(r"(?<![A-Za-z0-9_])P[0-9]{1,2}(?![0-9A-Za-z_])")),
    ("draft mark", re.compile(r"\bdrafts?\b", re.IGNORECASE)),
    ("work session", re.compile(r"\bsessions?\b", re.IGNORECASE)),
]

# this file names the labels it looks for
SELF = os.path.join("tests", "docs", "check_labels.py")


def findings(line):
    """The labels on one line: a list of (kind, matched text)."""
    return [(kind, m.group(0)) for kind, pattern in LABELS for m in pattern.finditer(line)]


def files(root):
    for name in SCANNED_FILES:
        path = os.path.join(root, name)
        if os.path.isfile(path):
            yield name
    for top in SCANNED_DIRS:
        for folder, subdirs, names in os.walk(os.path.join(root, top)):
            subdirs[:] = sorted(d for d in subdirs if not d.startswith(".") and d not in SKIPPED_DIRS)
            for name in sorted(names):
                if name.endswith(TEXT_SUFFIXES) or name in ("CMakeLists.txt", "Makefile"):
                    yield os.path.relpath(os.path.join(folder, name), root)


def scan(root):
    problems = []
    for rel in files(root):
        if rel == SELF:
            continue
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                for kind, text in findings(line):
                    problems.append(f"{rel}:{number}: {kind} '{text}': {line.strip()[:120]}")
    return problems


def self_test():
    planted = [
        "// the copy engine of P8 (offload)",
        "see (P4) for the stores",
        "P9's kernels",
        "*A section of chapter 12 (draft).*",
        "no GPU was lent to this part's session",
        "Sessions before this one measured",
    ]
    clean = [
        "ZeRO-R's P_a and P_a+cpu partition the checkpoints",
        "FP16 and BF16 on an H100 over PCIe 4.0",
        "the paper's P_os+g+p, stage 3",
        "`zero-train --stage 3 --mp-size 2`",
        "P100 is a GPU; p4 is lower case",
    ]
    bad = [line for line in planted if not findings(line)] + [line for line in clean if findings(line)]
    for line in bad:
        print(f"check_labels self-test: wrong answer for: {line}")
    print(f"check_labels self-test: {len(planted)} planted labels reported, {len(clean)} look-alikes passed"
          if not bad else "check_labels self-test: FAILED")
    return 1 if bad else 0


def main(argv):
    if len(argv) == 2 and argv[1] == "--self-test":
        return self_test()
    if len(argv) != 2:
        print("usage: check_labels.py ROOT | --self-test", file=sys.stderr)
        return 2
    problems = scan(argv[1])
    for p in problems:
        print(f"check_labels: {p}")
    print(f"check_labels: {'no' if not problems else len(problems)} planning labels in the project's text")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
