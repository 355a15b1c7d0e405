#!/usr/bin/python3
"""tests/docs/check_lesson.py ROOT [--chapter N] — every chapter README has the shape of a lesson.

An instructor picking up a chapter should find, in the same places every time, what it teaches,
what it assumes, how long it takes and what the reader will run; at the end, what to keep, how the
frameworks people train with do the same thing, the exercises, and where the code is. So each
chapters/NN-*/README.md must have:

1. `# Chapter N — title` on its first line, N the folder's number;
2. right under the title (blank lines only between), the header box: a two-column table whose
   rows are, in this order, **You will learn**, **Before this**, **Time** and **You will run**,
   each with text; the Time row says "N minutes to read" and "... to run";
3. as its last four `## ` sections, in this order: `## Key takeaways` (3 to 8 bullets),
   `## How the frameworks do it` (naming DeepSpeed, FSDP, Megatron or PyTorch, with at least
   one version the statement holds for, e.g. "PyTorch 2.5"), `## Exercises` (a link to the
   chapter's exercises.md, which exists and holds at least three `### Exercise` headings) and
   `## Where the code is` (the chapter's `ctest -L chN`; every `src/`, `tests/`, `bench/`,
   `notebooks/`, `scripts/` or `chapters/` path it names in backticks exists).

Exit 0 when every chapter holds all of it, else one line per failure (file: what is wrong) and
exit 1. `--self-test` plants each fault in a good lesson and checks that each is reported and
that the good lesson passes.
"""
import glob
import os
import re
import sys
import tempfile

BOX_ROWS = ["You will learn", "Before this", "Time", "You will run"]
CLOSING = ["Key takeaways", "How the frameworks do it", "Exercises", "Where the code is"]
MIN_TAKEAWAYS, MAX_TAKEAWAYS = 3, 8
MIN_EXERCISES = 3
FRAMEWORK = re.compile(r"\b(DeepSpeed|FSDP2?|Megatron|PyTorch)\b")
VERSIONED = re.compile(
    r"\b(DeepSpeed|PyTorch|torch|Megatron(?:-LM|-Core| Core)?|NCCL|Transformer Engine|Apex)"
    r"\s+v?\d+\.\d+")
TIME_CELL = re.compile(r"\d+ minutes to read.*\bto run\b")
NAMED_PATH = re.compile(r"`((?:src|tests|bench|notebooks|scripts|chapters)/[^`\s]*)`")
TITLE = re.compile(r"^# Chapter (\d+) — \S")


def sections(lines):
    """The `## ` sections: a list of (title, first line index, body lines)."""
    out = []
    for i, line in enumerate(lines):
        if line.startswith("## "):
            out.append([line[3:].strip(), i, []])
        elif out:
            out[-1][2].append(line)
    return [tuple(s) for s in out]


def box_rows(head):
    """The header box's rows as (label, text), from the lines before the first section."""
    rows = []
    for line in head:
        m = re.match(r"^\|\s*\*\*(.+?)\*\*\s*\|(.*)\|\s*$", line)
        if m:
            rows.append((m.group(1).strip(), m.group(2).strip()))
    return rows


def check_readme(root, path):
    """The failures of one chapter README: a list of strings."""
    rel = os.path.relpath(path, root)
    fail = []
    folder = os.path.basename(os.path.dirname(path))
    number = int(folder.split("-", 1)[0])
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")

    m = TITLE.match(lines[0]) if lines else None
    if not m:
        fail.append(f"{rel}: the first line is not '# Chapter {number} — title'")
    elif int(m.group(1)) != number:
        fail.append(f"{rel}: the title says chapter {m.group(1)}, the folder {number}")

    first_section = next((i for i, l in enumerate(lines) if l.startswith("## ")), len(lines))
    head = lines[1:first_section]
    table_start = next((i for i, l in enumerate(head) if l.startswith("|")), None)
    if table_start is None:
        fail.append(f"{rel}: no header box (a table) before the first section")
    else:
        if any(l.strip() for l in head[:table_start]):
            fail.append(f"{rel}: text between the title and the header box (the box comes first; "
                        f"the file list goes to 'Where the code is')")
        rows = box_rows(head[table_start:])
        labels = [r[0] for r in rows]
        if labels != BOX_ROWS:
            fail.append(f"{rel}: the header box's rows are {labels}, not {BOX_ROWS}")
        for label, text in rows:
            if not text:
                fail.append(f"{rel}: the header box's row '{label}' is empty")
            if label == "Time" and not TIME_CELL.search(text):
                fail.append(f"{rel}: the Time row does not say 'N minutes to read' and '... to run'")

    secs = sections(lines)
    last = [s[0] for s in secs[-len(CLOSING):]]
    if last != CLOSING:
        fail.append(f"{rel}: the last sections are {last}, not {CLOSING}")
        return fail
    body = {title: text for title, _, text in secs[-len(CLOSING):]}

    bullets = [l for l in body["Key takeaways"] if l.startswith("- ")]
    if not MIN_TAKEAWAYS <= len(bullets) <= MAX_TAKEAWAYS:
        fail.append(f"{rel}: 'Key takeaways' has {len(bullets)} bullets, not "
                    f"{MIN_TAKEAWAYS}-{MAX_TAKEAWAYS}")

    frameworks = "\n".join(body["How the frameworks do it"])
    if not FRAMEWORK.search(frameworks):
        fail.append(f"{rel}: 'How the frameworks do it' names none of DeepSpeed, FSDP, Megatron, "
                    f"PyTorch")
    if not VERSIONED.search(frameworks):
        fail.append(f"{rel}: 'How the frameworks do it' gives no version its statements hold for "
                    f"(e.g. 'PyTorch 2.5')")

    exercises = "\n".join(body["Exercises"])
    if "(exercises.md" not in exercises:
        fail.append(f"{rel}: 'Exercises' does not link to exercises.md")
    ex_path = os.path.join(os.path.dirname(path), "exercises.md")
    if not os.path.exists(ex_path):
        fail.append(f"{rel}: the chapter has no exercises.md")
    else:
        with open(ex_path, encoding="utf-8") as f:
            count = sum(1 for l in f if l.startswith("### Exercise "))
        if count < MIN_EXERCISES:
            fail.append(f"{rel}: exercises.md has {count} exercises, fewer than {MIN_EXERCISES}")

    code = "\n".join(body["Where the code is"])
    if f"ctest -L ch{number}`" not in code and f"ctest -L ch{number} " not in code:
        fail.append(f"{rel}: 'Where the code is' does not name `ctest -L ch{number}`")
    for named in NAMED_PATH.findall(code):
        target = named.split(":", 1)[0].rstrip(".,;")
        if not glob.glob(os.path.join(root, target)):
            fail.append(f"{rel}: 'Where the code is' names {named}, which does not exist")
    return fail


def check(root, only=None):
    """Every chapter's failures, or one chapter's with only = its number."""
    fail = []
    readmes = sorted(glob.glob(os.path.join(root, "chapters", "[0-9][0-9]-*", "README.md")))
    if not readmes:
        return [f"{root}: no chapters/NN-*/README.md"]
    for path in readmes:
        number = int(os.path.basename(os.path.dirname(path)).split("-", 1)[0])
        if only is None or number == only:
            fail += check_readme(root, path)
    return fail


GOOD = """# Chapter 3 — Where the memory goes

| | |
|---|---|
| **You will learn** | what a rank keeps |
| **Before this** | chapter 2 |
| **Time** | about 30 minutes to read, 2 minutes to run `make chapter-3` |
| **You will run** | the chapter program |

Body.

## 1. Model states

Text.

## Key takeaways

- one
- two
- three

## How the frameworks do it

PyTorch 2.5's `torch.cuda.memory_stats` counts what the caching allocator holds.

## Exercises

Five exercises with checked solutions: [exercises.md](exercises.md).

## Where the code is

Program `chapters/03-memory/main.cc`; module `src/memory/`. Tests: `ctest -L ch3`.
"""

EXERCISES = "### Exercise 3.1 — a [paper]\n\n### Exercise 3.2 — b [lab]\n\n### Exercise 3.3 — c [lab]\n"

# (a change to the good lesson, a text its report must contain)
PLANTED = [
    (("# Chapter 3 —", "# Chapter 4 —"), "the title says chapter 4"),
    (("# Chapter 3 — Where", "# Where"), "the first line is not"),
    (("\n| | |", "\n*Program: main.cc*\n\n| | |"), "text between the title and the header box"),
    (("| **Before this** | chapter 2 |\n", ""), "the header box's rows are"),
    (("| **You will run** | the chapter program |", "| **You will run** |  |"), "is empty"),
    (("about 30 minutes to read", "about half an hour"), "the Time row"),
    (("## How the frameworks do it", "## The frameworks"), "the last sections are"),
    (("- three\n", ""), "'Key takeaways' has 2 bullets"),
    (("PyTorch 2.5's", "The caching allocator's"), "names none of"),
    (("PyTorch 2.5's", "PyTorch's"), "gives no version"),
    (("[exercises.md](exercises.md)", "the file beside this one"), "does not link to exercises.md"),
    (("`ctest -L ch3`", "`ctest -L ch33`"), "does not name `ctest -L ch3`"),
    (("`src/memory/`", "`src/no_such_module/`"), "names src/no_such_module/"),
]


def self_test():
    """0 when the good lesson passes and every planted fault is reported."""
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        chapter = os.path.join(tmp, "chapters", "03-memory")
        os.makedirs(chapter)
        os.makedirs(os.path.join(tmp, "src", "memory"))
        with open(os.path.join(chapter, "main.cc"), "w") as f:
            f.write("\n")
        with open(os.path.join(chapter, "exercises.md"), "w") as f:
            f.write(EXERCISES)
        readme = os.path.join(chapter, "README.md")
        for change, expected in [(None, None), *PLANTED]:
            text = GOOD if change is None else GOOD.replace(*change)
            if change is not None and text == GOOD:
                problems.append(f"planting {change[0]!r} changed nothing")
                continue
            with open(readme, "w", encoding="utf-8") as f:
                f.write(text)
            fail = check(tmp)
            if change is None and fail:
                problems.append(f"the good lesson fails: {fail}")
            elif change is not None and not any(expected in line for line in fail):
                problems.append(f"planting {change[1]!r} is not reported as {expected!r}: {fail}")
        with open(readme, "w", encoding="utf-8") as f:
            f.write(GOOD)
        with open(os.path.join(chapter, "exercises.md"), "w") as f:
            f.write(EXERCISES.split("\n\n### Exercise 3.3")[0])
        if not any("fewer than 3" in line for line in check(tmp)):
            problems.append("two exercises are not reported")
    for p in problems:
        print(p)
    if not problems:
        print(f"check_lesson self-test: the good lesson passes, {len(PLANTED) + 1} planted "
              f"faults reported")
    return 1 if problems else 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) not in (2, 4) or (len(argv) == 4 and argv[2] != "--chapter"):
        print("usage: check_lesson.py ROOT [--chapter N] | --self-test")
        return 2
    only = int(argv[3]) if len(argv) == 4 else None
    fail = check(argv[1], only)
    for line in fail:
        print(line)
    if not fail:
        print("every chapter README has the lesson's shape" if only is None
              else f"chapter {only}'s README has the lesson's shape")
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
