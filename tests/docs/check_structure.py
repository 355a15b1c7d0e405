#!/usr/bin/python3
"""tests/docs/check_structure.py ROOT — the source tree keeps the shape docs/architecture.md
describes, so a reader can trust the folders and the file headers:

1. no source file in src/ is longer than 500 lines (one concept per file);
2. the layering of docs/architecture.md's "Layers" table: a folder of src/ includes only folders
   of lower layers and the folders listed before it in its own layer, with no exception; every
   folder is in the table once;
3. the reference loop (src/reference/single_rank.cc), the oracle every ZeRO run is compared with,
   stays independent of the engine: it includes nothing from zero/, collective/, schedule/ or
   device/ (its placement, step_device/placement.h, answers where its tensors live), and only the
   programs (src/apps) include it;
4. no function is longer than 80 lines (a reader sees one in a screen or two), except the
   declarative tables in TABLES (tests/docs/cpp_functions.py finds the bodies).

Exit 0 when all hold, else one line per violation and exit 1. `--self-test` plants one violation
of each rule in a scratch tree and checks that each is reported.
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


def layer_order(root):
    """{folder: (layer, position in it)} from docs/architecture.md's "Layers" table."""
    with open(os.path.join(root, "docs", "architecture.md"), encoding="utf-8") as f:
        text = f.read()
    section = text[text.index("## Layers"):]
    order = {}
    for line in section.splitlines():
        m = re.match(r"\| (\d+) [^|]*\| ([^|]*)\|", line)
        if m:
            for k, folder in enumerate(re.findall(r"`([a-z_]+)`", m.group(2))):
                order[folder] = (int(m.group(1)), k)
    return order


def allowed(order, module, target):
    """Whether src/module may include src/target."""
    if module == target:
        return True
    (lm, km), (lt, kt) = order[module], order[target]
    return lt < lm or (lt == lm and kt < km)


def sources(root):
    for ext in ("h", "cc", "cu", "cuh"):
        yield from glob.glob(os.path.join(root, "src", "**", "*." + ext), recursive=True)


def main(root):
    problems = []
    order = layer_order(root)
    folders = sorted(d for d in os.listdir(os.path.join(root, "src")) if os.path.isdir(os.path.join(root, "src", d)))
    problems += [f"src/{d}/: not in docs/architecture.md's Layers table" for d in folders if d not in order]
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
            m = re.match(r'\s*#\s*include\s+"([^"/]+)/', line)
            if m and m.group(1) == "reference" and module not in ("reference", "apps"):
                problems.append(f"{rel}:{n}: {module}/ includes the reference loop: only the programs include the reference")
            if m and m.group(1) in order and module in order and not allowed(order, module, m.group(1)):
                problems.append(f"{rel}:{n}: {module}/ (layer {order[module][0]}) includes {m.group(1)}/ "
                                f"(layer {order[m.group(1)][0]}), which is not below it")

    reference = os.path.join(root, "src", "reference", "single_rank.cc")
    with open(reference, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if m and m.group(1).startswith(("zero/", "collective/", "schedule/", "device/")):
                problems.append(f"src/reference/single_rank.cc:{n}: the reference loop includes {m.group(1)}")
    for p in problems:
        print("check_structure: " + p)
    return 1 if problems else 0


def self_test(root):
    """One planted violation per rule, each of which must be reported."""
    import io
    import shutil
    import tempfile
    from contextlib import redirect_stdout
    planted = {
        "src/step/bad_include.h": ('#include "zero/zero_plan.h"\n', "step/ (layer 3) includes zero/"),
        "src/zero/too_long.cc": ("void f() {\n" + "  g();\n" * 85 + "}\n", "a function of 87 lines"),
        "src/reference/single_rank.cc": ('#include "collective/collective.h"\n', "the reference loop includes"),
        "src/zero/oracle.h": ('#include "reference/single_rank.h"\n', "only the programs include the reference"),
        "src/zero/huge.h": ("// x\n" * 501, "501 lines, more than 500"),
    }
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(os.path.join(tmp, "docs"))
        shutil.copy(os.path.join(root, "docs", "architecture.md"), os.path.join(tmp, "docs"))
        for rel, (text, _) in planted.items():
            os.makedirs(os.path.dirname(os.path.join(tmp, rel)), exist_ok=True)
            with open(os.path.join(tmp, rel), "w", encoding="utf-8") as f:
                f.write(text)
        out = io.StringIO()
        with redirect_stdout(out):
            main(tmp)
    missed = [want for _, want in planted.values() if want not in out.getvalue()]
    for want in missed:
        print(f"check_structure self-test: the planted fault '{want}' was not reported")
    if not missed:
        print(f"check_structure self-test: all {len(planted)} planted faults reported")
    return 1 if missed else 0


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--self-test"]
    root = args[0] if args else "."
    sys.exit(self_test(root) if "--self-test" in sys.argv else main(root))
