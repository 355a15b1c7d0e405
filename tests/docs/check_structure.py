#!/usr/bin/python3
"""tests/docs/check_structure.py ROOT — the source tree keeps the shape docs/architecture.md
describes, so a reader can trust the folders and the file headers:

1. no source file in src/ is longer than 500 lines (one concept per file);
2. the layering: step/ (the pieces every loop shares) includes none of train/, zero/, offload/,
   predict/; offload/ includes neither train/ nor zero/ nor predict/; the engine (zero/) never
   includes predict/, which predicts it from outside;
3. the reference loop (src/train/single_rank.cc), the oracle every ZeRO run is compared with,
   stays independent of the engine: it includes nothing from zero/, collective/ or schedule/;
4. no function is longer than 80 lines (a reader sees one in a screen or two), except the
   declarative tables in TABLES (tests/docs/cpp_functions.py finds the bodies).

Exit 0 when all hold, else one line per violation and exit 1.
"""
import glob
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cpp_functions  # noqa: E402

MAX_LINES = 500
MAX_FUNCTION_LINES = 80
# functions that are one declarative table, one entry per line: (file, a text on its first line)
TABLES = [("src/train/train_flags.cc", "void declare_train_flags(")]
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
        for first, length in cpp_functions.functions("\n".join(lines)):
            table = any(rel == f and text in lines[first - 1] for f, text in TABLES)
            if length > MAX_FUNCTION_LINES and not table:
                problems.append(f"{rel}:{first}: a function of {length} lines, more than {MAX_FUNCTION_LINES}")
        module = rel.split(os.sep)[1]
        for n, line in enumerate(lines, 1):
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if m and m.group(1).startswith(FORBIDDEN.get(module, ())):
                problems.append(f"{rel}:{n}: {module}/ includes {m.group(1)}")

    reference = os.path.join(root, "src", "train", "single_rank.cc")
    with open(reference, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if m and m.group(1).startswith(("zero/", "collective/", "schedule/")):
                problems.append(f"src/train/single_rank.cc:{n}: the reference loop includes {m.group(1)}")
    for p in problems:
        print("check_structure: " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
