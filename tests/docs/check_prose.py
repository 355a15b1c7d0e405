#!/usr/bin/python3
"""tests/docs/check_prose.py ROOT [--chapter N ...] | --self-test — the chapters read as lessons.

A chapter is read in one sitting, in short sentences, about what the code does today. This script
measures that and prints one table row per chapter README (and one for README.md):

  prose words   words outside fenced and indented code blocks, tables, headings, HTML comments and
                image lines (a `code span` is one word, a link counts its text);
  sentences     the prose split at . ! ? followed by a space and a capital, a digit, a quote or a
                bracket, and at every paragraph or list-item end (so a list item is one sentence);
                e.g., i.e., etc., vs., cf. and § do not end a sentence;
  mean, median  words per sentence;
  tables, figs  Markdown tables other than the header box, and images;
  stated        the N of "N minutes to read" in the header box's Time row;
  computed      prose words / 150 + 0.5 per table + 1 per figure (minutes).

A chapter README fails when it has more than 3,500 prose words, a mean sentence over 22 words, a
stated reading time more than 25% away from the computed one, no citation of docs/references.md
(a link to references.md#KEY whose KEY is a heading there), or more than one "Measured on" line
(all of a chapter's timings are from one machine, named once). README.md fails on a mean sentence
over 22 words or more than 120 lines.

History belongs in CHANGELOG.md, so every text file under chapters/ and README.md fails on a
history phrase: "used to", "found and fixed", "lent to/for", "was lent", "now ... instead of" in
one sentence, "before ... was/were changed", a commit named by its hash, or a date
(2025-03-14, March 2025). And chapters/, docs/, notebooks/ and README.md fail on a reference to
documents a reader does not have: "seed 001", "seed notes".

docs/references.md stays true to the chapters: every entry is cited by some chapter, and the
"Chapter(s) ..." list that ends its "Used:" line names exactly the chapters that cite it.

docs/course.md must add up: a "## Week 0" section and weeks 1 to 10, numbered in order, each with
a **Reading**, a **Lecture outline**, a **Lab** and **Graded exercises** line; and a rubric (a
table with a "points" column whose points sum to 100).

Exit 0 when all holds, else one line per failure after the table, exit 1. --self-test plants each
fault in a good lesson and checks that each is reported and that the good lesson, with look-alikes
of the history phrases, passes.
"""
import glob
import os
import re
import statistics
import sys
import tempfile

MAX_WORDS = 3500
MAX_MEAN = 22.0
TIME_TOLERANCE = 0.25
WORDS_PER_MINUTE = 150.0
MIN_PER_TABLE, MIN_PER_FIGURE = 0.5, 1.0
README_MAX_LINES = 120

MONTHS = ("January|February|March|April|May|June|July|August|September|October|November|"
          "December")
HISTORY = [
    ("used to", re.compile(r"\bused to\b", re.I)),
    ("found and fixed", re.compile(r"\bfound and fixed\b", re.I)),
    ("lent to/for", re.compile(r"\blent (?:to|for)\b", re.I)),
    ("was lent", re.compile(r"\b(?:was|were) lent\b", re.I)),
    ("now ... instead of", re.compile(r"\bnow\b(?:(?!\.\s)[^;:\n]){0,80}\binstead of\b", re.I)),
    ("before ... was changed", re.compile(r"\bbefore\b(?:(?!\.\s)[^;:\n]){0,60}\b(?:was|were) changed\b", re.I)),
    ("a commit hash", re.compile(r"\bcommits?\s+`?[0-9a-f]{7,40}\b")),
    ("a date", re.compile(r"\b20[0-9]{2}-[01][0-9]-[0-3][0-9]\b|\b(?:%s) 20[0-9]{2}\b" % MONTHS)),
]
SEED = re.compile(r"(?<!-)\bseed 00[0-9]|\bseed notes\b", re.I)
CITATION = re.compile(r"references\.md#([A-Za-z0-9_-]+)")
TIME_ROW = re.compile(r"^\|\s*\*\*Time\*\*\s*\|.*?(\d+(?:\.\d+)?) minutes to read", re.M)
MEASURED_ON = re.compile(r"^\s*(?:[*_]{0,2})Measured on\b", re.M)
ABBREV = re.compile(r"\b(e\.g|i\.e|etc|vs|cf|Fig|Eq|Sec|approx|resp)\.", re.I)
SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]*_]*\s+(?=[A-Z0-9`\"'(\[*_§ψ])")
LIST_ITEM = re.compile(r"^\s{0,3}(?:[-*+]|\d+\.)\s+")


def prose_blocks(text):
    """The prose paragraphs of a Markdown document (list items apart), and its tables and figures
    (the first table before the first `## ` section is the header box and is not counted)."""
    paragraphs, current = [], []
    tables = figures = 0
    in_fence = in_table = in_comment = False
    prev_blank, in_list = True, False
    seen_section = False
    header_box_skipped = False

    def flush():
        if current:
            paragraphs.append(" ".join(current))
            current.clear()

    for raw in text.split("\n"):
        line = raw.rstrip()
        stripped = line.strip()
        if in_comment:
            if "-->" in line:
                in_comment = False
            continue
        if stripped.startswith("```") or stripped.startswith("~~~"):
            flush()
            in_fence = not in_fence
            prev_blank = False
            continue
        if in_fence:
            continue
        if stripped.startswith("<!--"):
            flush()
            in_comment = "-->" not in stripped
            continue
        if stripped.startswith("|"):
            flush()
            if not in_table:
                in_table = True
                if not seen_section and not header_box_skipped:
                    header_box_skipped = True
                else:
                    tables += 1
            prev_blank = False
            continue
        in_table = False
        if not stripped:
            flush()
            prev_blank, in_list = True, False
            continue
        if stripped.startswith("#"):
            flush()
            seen_section = seen_section or stripped.startswith("## ")
            prev_blank = False
            continue
        if re.fullmatch(r"!\[[^\]]*\]\([^)]*\)", stripped):
            flush()
            figures += 1
            prev_blank = False
            continue
        if LIST_ITEM.match(line):
            flush()
            in_list = True
            current.append(LIST_ITEM.sub("", line, count=1))
            prev_blank = False
            continue
        if line.startswith("    ") and not in_list and (prev_blank or not current):
            flush()  # an indented code block
            prev_blank = False
            continue
        current.append(stripped.lstrip("> ").strip())
        prev_blank = False
    flush()
    return paragraphs, tables, figures


def clean(paragraph):
    p = re.sub(r"`[^`]*`", "CODE", paragraph)
    p = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", p)
    p = re.sub(r"<[^>]+>", " ", p)
    return ABBREV.sub(lambda m: m.group(1), p)


def words_of(s):
    return [w for w in s.split() if re.search(r"[0-9A-Za-zψα-ωΑ-Ω]", w)]


def measure(text):
    paragraphs, tables, figures = prose_blocks(text)
    lengths = []
    for p in paragraphs:
        for sentence in SENTENCE_END.split(clean(p)):
            n = len(words_of(sentence))
            if n:
                lengths.append(n)
    words = sum(lengths)
    return {
        "words": words, "sentences": len(lengths),
        "mean": words / len(lengths) if lengths else 0.0,
        "median": statistics.median(lengths) if lengths else 0.0,
        "tables": tables, "figures": figures,
        "computed": words / WORDS_PER_MINUTE + MIN_PER_TABLE * tables + MIN_PER_FIGURE * figures,
    }


def history_faults(path, text):
    out = []
    for n, line in enumerate(text.split("\n"), 1):
        for name, rx in HISTORY:
            if rx.search(line):
                out.append("%s:%d: history in a lesson (%s): %s" % (path, n, name, line.strip()[:100]))
    return out


def seed_faults(path, text):
    return ["%s:%d: refers to a document the reader does not have: %s" % (path, n, line.strip()[:100])
            for n, line in enumerate(text.split("\n"), 1) if SEED.search(line)]


def reference_keys(root):
    path = os.path.join(root, "docs", "references.md")
    if not os.path.exists(path):
        return set()
    keys = set()
    for line in open(path, encoding="utf-8"):
        m = re.match(r"^#{2,4}\s+(.+?)\s*$", line)
        if m:  # GitHub's anchor of a one-word key heading
            keys.add(re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-"))
    return keys


def check_chapter(path, text, keys, rel):
    m = measure(text)
    faults = []
    if m["words"] > MAX_WORDS:
        faults.append("%s: %d prose words, more than %d: split the chapter or move material to its "
                      "appendix" % (rel, m["words"], MAX_WORDS))
    if m["mean"] > MAX_MEAN:
        faults.append("%s: mean sentence %.1f words, more than %.0f" % (rel, m["mean"], MAX_MEAN))
    t = TIME_ROW.search(text)
    m["stated"] = float(t.group(1)) if t else None
    if t is None:
        faults.append("%s: no \"N minutes to read\" in the header box's Time row" % rel)
    elif abs(m["stated"] - m["computed"]) > TIME_TOLERANCE * m["computed"]:
        faults.append("%s: states %g minutes to read, computed %.1f (%d words / %.0f + tables and "
                      "figures): say %d" % (rel, m["stated"], m["computed"], m["words"],
                                             WORDS_PER_MINUTE, round(m["computed"])))
    cited = [k for k in CITATION.findall(text) if k.lower() in keys]
    if not cited:
        faults.append("%s: cites no entry of docs/references.md (a link to references.md#KEY)" % rel)
    if len(MEASURED_ON.findall(text)) > 1:
        faults.append("%s: %d \"Measured on\" lines: name the machine once" %
                      (rel, len(MEASURED_ON.findall(text))))
    return m, faults


def chapter_list(ns):
    """Chapter numbers as the references write them: 'Chapter 4.' or 'Chapters 2-4, 6, 8.'"""
    ns, parts, i = sorted(ns), [], 0
    while i < len(ns):
        j = i
        while j + 1 < len(ns) and ns[j + 1] == ns[j] + 1:
            j += 1
        parts.append(str(ns[i]) if j == i else
                     "%d, %d" % (ns[i], ns[j]) if j == i + 1 else "%d-%d" % (ns[i], ns[j]))
        i = j + 1
    return ("Chapter %s." if len(ns) == 1 else "Chapters %s.") % ", ".join(parts)


def reference_faults(root):
    path = os.path.join(root, "docs", "references.md")
    if not os.path.exists(path):
        return ["docs/references.md: missing"]
    cited = {}
    for f in glob.glob(os.path.join(root, "chapters", "[0-9][0-9]-*", "*.md")):
        n = int(os.path.basename(os.path.dirname(f))[:2])
        for k in CITATION.findall(open(f, encoding="utf-8").read()):
            cited.setdefault(k.lower(), set()).add(n)
    faults = []
    text = open(path, encoding="utf-8").read()
    for m in re.finditer(r"^### (\S+)\n(.*?)(?=^#{2,3} |\Z)", text, re.M | re.S):
        key = re.sub(r"[^\w\- ]", "", m.group(1).lower())
        ns = cited.get(key)
        if not ns:
            faults.append("docs/references.md: %s is cited by no chapter: cite it or drop it" % m.group(1))
            continue
        said = re.search(r"Chapters? [\d, -]+\.", m.group(2))
        if not said or said.group(0) != chapter_list(ns):
            faults.append("docs/references.md: %s says \"%s\", the chapters that cite it: \"%s\"" %
                          (m.group(1), said.group(0) if said else "", chapter_list(ns)))
    return faults


COURSE_PARTS = ["**Reading**", "**Lecture outline**", "**Lab**", "**Graded"]


def course_faults(root):
    path = os.path.join(root, "docs", "course.md")
    if not os.path.exists(path):
        return ["docs/course.md: missing"]
    text = open(path, encoding="utf-8").read()
    faults = []
    weeks = re.findall(r"^## Week (\d+)\b", text, re.M)
    if [int(w) for w in weeks] != list(range(0, 11)):
        faults.append("docs/course.md: weeks %s, not week 0 then weeks 1 to 10 in order" % " ".join(weeks))
    for m in re.finditer(r"^## Week (\d+)\b.*?(?=^## |\Z)", text, re.M | re.S):
        for part in COURSE_PARTS:
            if part not in m.group(0):
                faults.append("docs/course.md: week %s has no %s line" % (m.group(1), part.strip("*")))
    rubric = re.search(r"^\|[^\n]*\bpoints\b[^\n]*\|\n\|[-| :]+\|\n((?:\|.*\|\n)+)", text, re.M)
    if not rubric:
        faults.append("docs/course.md: no rubric (a table with a points column)")
    else:
        head = [c.strip() for c in rubric.group(0).split("\n")[0].strip("|").split("|")]
        col = head.index("points")
        total = sum(int(r.strip("|").split("|")[col]) for r in rubric.group(1).strip().split("\n"))
        if total != 100:
            faults.append("docs/course.md: the rubric's points sum to %d, not 100" % total)
    return faults


def text_files(root, folder):
    out = []
    for dirpath, _, names in os.walk(os.path.join(root, folder)):
        for name in sorted(names):
            p = os.path.join(dirpath, name)
            try:
                out.append((os.path.relpath(p, root), open(p, encoding="utf-8").read()))
            except (UnicodeDecodeError, OSError):
                pass
    return sorted(out)


def run(root, only=None, quiet=False):
    keys = reference_keys(root)
    rows, faults = [], []
    for readme in sorted(glob.glob(os.path.join(root, "chapters", "[0-9][0-9]-*", "README.md"))):
        n = int(os.path.basename(os.path.dirname(readme))[:2])
        if only and n not in only:
            continue
        rel = os.path.relpath(readme, root)
        m, f = check_chapter(readme, open(readme, encoding="utf-8").read(), keys, rel)
        rows.append(("chapter %d" % n, m))
        faults += f
    front = os.path.join(root, "README.md")
    if os.path.exists(front) and not only:
        text = open(front, encoding="utf-8").read()
        m = measure(text)
        m["stated"] = None
        rows.append(("README.md", m))
        if m["mean"] > MAX_MEAN:
            faults.append("README.md: mean sentence %.1f words, more than %.0f" % (m["mean"], MAX_MEAN))
        lines = text.count("\n")
        if lines > README_MAX_LINES:
            faults.append("README.md: %d lines, more than %d" % (lines, README_MAX_LINES))
    for rel, text in text_files(root, "chapters"):
        if only and not any(rel.startswith("chapters/%02d-" % n) for n in only):
            continue
        faults += history_faults(rel, text)
    if not only and os.path.exists(front):
        faults += history_faults("README.md", open(front, encoding="utf-8").read())
    for folder in ("chapters", "docs", "notebooks"):
        for rel, text in text_files(root, folder):
            faults += seed_faults(rel, text)
    if not only and os.path.exists(front):
        faults += seed_faults("README.md", open(front, encoding="utf-8").read())
    if not only:
        faults += course_faults(root)
        faults += reference_faults(root)
    if not quiet:
        print("%-10s %6s %5s %5s %6s %6s %4s %6s %8s" % ("document", "words", "sent", "mean",
                                                       "median", "tables", "figs", "stated",
                                                       "computed"))
        for name, m in rows:
            print("%-10s %6d %5d %5.1f %6.1f %6d %4d %6s %8.1f" % (
                name, m["words"], m["sentences"], m["mean"], m["median"], m["tables"], m["figures"],
                "-" if m["stated"] is None else "%g" % m["stated"], m["computed"]))
    return faults


GOOD = """# Chapter 1 — A good lesson

| | |
|---|---|
| **You will learn** | How a sum is ordered. |
| **Before this** | Nothing. |
| **Time** | %d minutes to read, 2 to run |
| **You will run** | `chapter-01` |

## The idea

A sum of floats depends on its order. The tree fixes one order, e.g. pairs first, so every rank
gets the same bits. The buffers are used for the next step; the tool is now faster than a loop.
A sum over N ranks can no longer be checked by eye.
Before the step, the shards are gathered. The model was changed by the optimizer, not by hand.
See [ZeRO §7](../../docs/references.md#zero).

%s
| a | b |
|---|---|
| 1 | 2 |

- One item of a list.
- Another item, with `code` in it.

    indented code block with many many words that do not count at all here

Measured on: a laptop.
"""


def self_test():
    filler = " ".join(["This sentence has exactly eight words in it."] * 20)
    with tempfile.TemporaryDirectory() as root:
        def put(rel, text):
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w", encoding="utf-8") as f:
                f.write(text)

        put("docs/references.md", "# References\n\n### ZeRO\nA paper. Used: §7. Chapter 1.\n")
        week = "## Week %d — w\n\n- **Reading**: r.\n- **Lecture outline**: l.\n- **Lab**: b.\n- **Graded exercises**: e.\n\n"
        course = "# Course\n\n" + "".join(week % w for w in range(11)) + (
            "## Project\n\n| criterion | points |\n|---|---|\n| a | 60 |\n| b | 40 |\n")
        put("docs/course.md", course)
        good_words = measure(GOOD % (1, filler))
        minutes = max(1, round(good_words["computed"]))
        good = GOOD % (minutes, filler)
        put("chapters/01-good/README.md", good)
        put("README.md", "# Project\n\nIt trains models. It is small.\n")
        faults = run(root, quiet=True)
        if faults:
            print("self-test: the good lesson fails:\n  " + "\n  ".join(faults))
            return 1
        planted = {
            "prose words": good.replace(filler, " ".join(["Eight words make up this short plain sentence."] * 450)),
            "mean sentence": good.replace(filler, " ".join(["word"] * 160) + "."),
            "minutes to read": good.replace("| %d minutes to read" % minutes, "| %d minutes to read" % (minutes * 3 + 5)),
            "cites no entry": good.replace("references.md#zero", "references.md#nothing"),
            "\"Measured on\" lines": good + "\nMeasured on: another machine.\n",
            "(used to)": good + "\nThe chapter used to quote 1.367074.\n",
            "(found and fixed)": good + "\n## An error (found and fixed)\n",
            "(lent to/for)": good + "\nAn H100 lent for this measurement ran it.\n",
            "(now ... instead of)": good + "\nIt now ends at 34.9% instead of 38.5%.\n",
            "(before ... was changed)": good + "\nBefore the default was changed it printed more.\n",
            "(a commit hash)": good + "\nSince commit 025ee5d the run is faster.\n",
            "(a date)": good + "\nMeasured in March 2025 on a VM.\n",
            "does not have": good + "\nSeed 004 says otherwise.\n",
        }
        failed = 0
        for expect, text in planted.items():
            put("chapters/01-good/README.md", text)
            got = run(root, quiet=True)
            if not any(expect in f for f in got):
                print("self-test: planted fault not reported: %s (got %s)" % (expect, got))
                failed += 1
        put("chapters/01-good/README.md", good)
        put("README.md", "# Project\n\n" + "Line.\n" * 130)
        if not any("lines, more than" in f for f in run(root, quiet=True)):
            print("self-test: a README over 120 lines is not reported")
            failed += 1
        put("README.md", "# Project\n\nIt trains models. It is small.\n")
        for expect, text in {
                "not week 0 then weeks 1 to 10": course.replace("## Week 8 ", "## Week 9 "),
                "week 3 has no Lab line": course.replace("- **Lab**: b.\n", "", 4),
                "sum to 90": course.replace("| b | 40 |", "| b | 30 |"),
                "no rubric": course.replace("| criterion | points |", "| criterion | weight |")}.items():
            put("docs/course.md", text)
            got = run(root, quiet=True)
            if not any(expect in f for f in got):
                print("self-test: planted course fault not reported: %s (got %s)" % (expect, got))
                failed += 1
        put("docs/course.md", course)
        for expect, text in {
                "cited by no chapter": "# References\n\n### ZeRO\nA paper. Used: §7. Chapter 1.\n\n### Adam\nA paper. Chapter 1.\n",
                "the chapters that cite it": "# References\n\n### ZeRO\nA paper. Used: §7. Chapters 1, 2.\n"}.items():
            put("docs/references.md", text)
            got = run(root, quiet=True)
            if not any(expect in f for f in got):
                print("self-test: planted reference fault not reported: %s (got %s)" % (expect, got))
                failed += 1
        if failed:
            return 1
    print("check_prose self-test: the good lesson passes; %d planted faults each reported" %
          (len(planted) + 7))
    return 0


def main(argv):
    if argv[1:2] == ["--self-test"]:
        return self_test()
    if len(argv) < 2:
        print(__doc__.split("\n")[0])
        return 2
    root, only = argv[1], []
    rest = argv[2:]
    while rest:
        if rest[0] == "--chapter" and len(rest) > 1:
            only.append(int(rest[1]))
            rest = rest[2:]
        else:
            print("check_prose: unknown argument %s" % rest[0])
            return 2
    faults = run(root, only)
    for f in faults:
        print(f)
    if faults:
        print("check_prose: %d failures" % len(faults))
        return 1
    print("check_prose: every chapter reads as a lesson")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
