#!/usr/bin/python3
"""tests/docs/check_numbers.py ROOT [--list] | --self-test — every number a program prints that the
book shows in a code block or a table is pinned to a run, or is on record as something else.

tests/docs/check_quotes.py checks the quotes a chapter registers in its quotes.json; a number typed
into a README without a quote is never checked and goes stale silently. This script finds those.

Documents: README.md and chapters/*/README.md, chapters/*/device.md, chapters/*/offload.md, and
the chapters' appendices chapters/*/appendix-*.md (a benchmark's full history, which its chapter
sums up in one table: its timings keep their "timing" entries there, under the machine the
appendix names). The quote templates of a document are the "text" of every quote in
chapters/*/quotes.json and docs/quotes.json that pins it: the quotes of a file whose "document" it
is, and a quote that names it in its own "document" key.

Scanned regions of a document (everything else, prose included, is not scanned):
  - fenced code blocks: the lines between a line starting with ``` and the next such line, except
    excerpt blocks (first line `// excerpt: FILE` or `# excerpt: FILE`), which are source text
    that check_excerpts.py holds to the source;
  - indented blocks: lines indented by 4 or more spaces, outside fenced blocks, after a blank line
    or another line of the same block, and not part of a list item (from a line starting with
    `- `, `* `, `+ ` or `1. ` (at most 3 spaces in) up to the next line that is not indented);
  - table rows: lines whose first non-blank character is `|`, except separator rows (`|---|:-:|`).

Numbers: a token that does not follow a letter, a digit, `_`, `.`, `/` or a letter and a hyphen
(so fp16, H100, sha256, x86_64, GPT-2, step-00000100 and path parts are not numbers), and is one of
  - an integer of 4 or more digits (4096), also grouped by commas (1,880,064) or by single spaces,
    thin spaces or no-break spaces (102 976): a group of 1-3 digits, then groups of exactly 3,
    read as one number;
  - a decimal with 3 or more digits after the point (1.367130, 0.2945), with its exponent if it
    has one (1.67772e+07; 6.1e-5 has one digit after the point and is out);
  - a hexadecimal string of 8 or more characters with at least one letter a-f and one digit, or
    one written 0x... (md5 and sha256 prefixes, CRCs).
A letter right after a number is its unit (4096B is 4096). Dotted versions with three or more
parts (12.4.1) are not numbers. Out of scope, on purpose: integers of 1-3 digits and decimals with
1 or 2 digits after the point (flag values such as 64 or 0.25, step counts, percentages such as
91.3%, most timings); too many of them are inputs or round figures to be told apart.

A scanned number is registered when
  - quote: it lies, whole, in the text a hole of one of the document's quote templates matches.
    A template matches with its literal pieces verbatim and each {} as a wildcard: between two
    literal pieces the shortest text on one line that holds no `|` (a table cell or less); at the
    start or the end of a template one run of non-blank characters. check_quotes.py proves that
    the values it fills in are what the runs print, so a number in a template's literal text is
    not proved and does not count. A template that matches differing texts in several places is
    ambiguous (which one does check_quotes.py see?) and registers nothing: the number is reported
    with the template, to be made longer;
  - command: it is an input on a command line: a scanned line whose first word, after an optional
    `$ ` prompt and `VAR=value` assignments, is a program of build/bin (zero-*, chapter-NN,
    bench-*, test_*, zt-*, bare or under `build/bin/` or `./build/bin/`), one of make, ctest,
    cmake, python3, python, bash, sh, env, time, cd, git, md5sum, sha256sum, nvidia-smi, torchrun,
    deepspeed, nsys, ncu, gdb, valgrind, perf, or a `./` or `scripts/` script; and each line a
    trailing backslash continues. The command ends at a ` #` comment: a number in the comment
    (`# loss 1.367128`) is output like any other. A program's message (`zero-train: error: ...`,
    the name followed by a colon) is output, not a command. On any scanned line, a number in an
    inline code span (`...`) that starts with a flag or holds a command (`--loss-scale-init 65536`)
    is an input too;
  - allowed: tests/docs/numbers_allowed.json lists it, as written, under its document:
        {"chapters/06-zero-1/README.md": [
           {"text": "1 647 616", "why": "closed form", "note": "the paper's 4ψ + 12ψ/N at ψ = 102 976"}]}
    "why" is one of "input" (a flag or parameter the reader chooses), "closed form" (computed in
    the text from a formula or from numbers beside it; the note says which), "paper" (a figure of
    the ZeRO paper or another cited source, such as a framework's documented default), "timing"
    (a wall-clock measurement of a machine the table or its paragraph names, which no run can
    reproduce exactly) or "history" (an older value quoted as such); "note" says what the number
    is. An optional "where" (a piece of the line) limits the entry to lines holding that piece.
    An entry is stale, and an error, when no number of its document that quotes and command lines
    leave unregistered matches it.

Exit 0 when every scanned number is registered and the allow-list is clean; else one line per
problem (file:line: the number: the line) and exit 1. `--list` also prints every scanned number
with its status (quote, command, allowed:WHY or UNREGISTERED). `--self-test` runs the scanner on a
small document held in this file: a planted md5 with no quote, a number in a template's literal
text and numbers under an ambiguous template must be reported; quoted, command-line, flag, allowed,
excerpt, prose and out-of-scope numbers must not; stale, unexplained and badly reasoned allow-list
entries must be reported.
"""
import glob
import json
import os
import re
import sys

REASONS = ("input", "closed form", "paper", "timing", "history")
ALLOW_FILE = os.path.join("tests", "docs", "numbers_allowed.json")

SPACES = " \u2009\u202f\u00a0"
# one number token; the order of the alternatives matters (hex before integers, grouped before plain)
NUMBER = re.compile(
    r"(?<![\w/.])(?<![A-Za-z]-)(?:"
    r"(?P<hex>0x[0-9a-f]{8,}|(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{8,})(?![0-9a-zA-Z_])"
    r"|(?P<dec>\d+\.\d+(?:[eE][-+]?\d+)?)(?![\d.]*\d)"
    r"|(?P<grp>\d{1,3}(?:,\d{3})+(?![\d,]*\d)|\d{1,3}(?:[" + SPACES + r"]\d{3})+)(?!\d)"
    r"|(?P<int>\d+)(?![\d.,]\d)"
    r")")

PROGRAMS = re.compile(r"(?:\./)?(?:build/bin/)?"
                      r"(?:zero-[a-z]+|chapter-\d\d|bench-[a-z-]+|test_\w+|zt-[a-z-]+|fuzz-replay-\w+)$")
TOOLS = {"make", "ctest", "cmake", "python3", "python", "bash", "sh", "nvidia-smi", "torchrun", "deepspeed", "env",
         "time", "sha256sum", "md5sum", "cd", "git", "nsys", "ncu", "gdb", "valgrind", "perf"}


def in_scope(m):
    """Whether a NUMBER match is a number this check cares about; the cleaned text if so."""
    if m.group("hex"):
        return m.group("hex")
    if m.group("dec"):
        text = m.group("dec")
        mantissa = re.split(r"[eE]", text)[0]
        return text if len(mantissa.split(".")[1]) >= 3 else None
    if m.group("grp"):
        return m.group("grp")
    text = m.group("int")
    return text if len(text) >= 4 else None


def numbers_on(line):
    """(column, text) of each in-scope number on one line."""
    out = []
    for m in NUMBER.finditer(line):
        text = in_scope(m)
        if text:
            out.append((m.start(), text))
    return out


def is_command(line):
    """Whether a line (or an inline code span) is a command: see the rules above."""
    words = line.strip().split()
    if words and words[0] == "$":
        words = words[1:]
    while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
        words = words[1:]
    if not words:
        return False
    first = words[0]
    if first.endswith(":"):
        return False
    return bool(PROGRAMS.match(first)) or first in TOOLS or first.startswith(("./", "scripts/"))


def regions(text):
    """Yield (line number, line, kind) for each scanned line: kind is code, indented or table."""
    lines = text.split("\n")
    fence, excerpt, prev_blank, in_indent, in_list = False, False, True, False, False
    for i, line in enumerate(lines, 1):
        stripped = line.strip()
        if stripped.startswith("```"):
            if not fence:
                nxt = lines[i].strip() if i < len(lines) else ""
                excerpt = bool(re.match(r"^(?://|#)\s*excerpt:", nxt))
            fence = not fence
            prev_blank, in_indent = False, False
            continue
        if fence:
            if not excerpt:
                yield i, line, "code"
            continue
        if not stripped:
            prev_blank = True
            continue
        if re.match(r"^\s{0,3}(?:[-*+]|\d+[.)])\s", line):
            in_list = True
        elif not line.startswith(" "):
            in_list = False
        indented = line.startswith("    ")
        if indented and not in_list and (prev_blank or in_indent):
            in_indent = True
            yield i, line, "indented"
        else:
            in_indent = False
            if stripped.startswith("|") and not re.match(r"^\|[\s:|-]+\|?$", stripped):
                yield i, line, "table"
        prev_blank = False


def command_lines(scanned):
    """{line number: column where its command ends} for the command lines and their backslash
    continuations; the command ends at a ` #` comment, whose text is output or prose."""
    out, cont = {}, False
    for i, line, _ in scanned:
        if cont or is_command(line):
            m = re.search(r"\s#", line)
            out[i] = m.start() if m else len(line)
            cont = line.rstrip().endswith("\\")
        else:
            cont = False
    return out


def template_regex(template):
    """A quote template as a regex: literal pieces verbatim, each {} a group (see the rules)."""
    pieces = template.split("{}")
    parts = []
    for k, piece in enumerate(pieces):
        parts.append(re.escape(piece))
        if k < len(pieces) - 1:
            if k == 0 and pieces[0] == "":
                parts.append(r"(?<!\S)(\S+)")
            elif k == len(pieces) - 2 and pieces[-1] == "":
                parts.append(r"(\S+)(?!\S)")
            else:
                parts.append(r"([^\n|]+?)")
    return re.compile("".join(parts))


def hole_spans(text, templates):
    """(spans, ambiguous): the character spans that a hole of an unambiguous template matches, and
    {span: template} for the holes of templates that match differing texts in several places."""
    spans, ambiguous = [], {}
    for t in templates:
        rx = template_regex(t)
        matches, pos = [], 0
        while True:
            m = rx.search(text, pos)
            if not m:
                break
            matches.append(m)
            pos = m.start() + 1
        holes = [m.span(g) for m in matches for g in range(1, (rx.groups or 0) + 1)]
        if len({m.group(0) for m in matches}) > 1:
            ambiguous.update((h, t) for h in holes)
        else:
            spans.extend(holes)
    return spans, ambiguous


def allow_matches(entry, line, text):
    """Whether an allow-list entry covers the number text on this line."""
    return text == entry["text"] and ("where" not in entry or entry["where"] in line)


def flag_spans(line):
    """Column spans of the inline code spans on a line that hold a command or flags (`--lr 1e-3`)."""
    spans = []
    for m in re.finditer(r"`([^`]+)`", line):
        body = m.group(1).strip()
        if body.startswith("--") or is_command(body):
            spans.append(m.span(1))
    return spans


def check_document(rel, text, templates, allowed):
    """(records, problems): a record is (line number, number, status, line)."""
    scanned = list(regions(text))
    commands = command_lines(scanned)
    spans, ambiguous = hole_spans(text, templates)
    starts = [0]
    for line in text.split("\n"):
        starts.append(starts[-1] + len(line) + 1)
    records, problems, used = [], [], set()
    for i, line, _ in scanned:
        flags = flag_spans(line)
        for col, num in numbers_on(line):
            a = starts[i - 1] + col
            b = a + len(num)
            if any(s <= a and b <= e for s, e in spans):
                status = "quote"
            elif col < commands.get(i, -1) or any(s <= col < e for s, e in flags):
                status = "command"
            else:
                hit = [k for k, e in enumerate(allowed) if allow_matches(e, line, num)]
                used.update(hit)
                status = "allowed:" + allowed[hit[0]]["why"] if hit else "UNREGISTERED"
            records.append((i, num, status, line))
            if status == "UNREGISTERED":
                why = ["; it is inside a hole of the quote %r, which matches differing texts in several places "
                       "(make it longer)" % t for (s, e), t in ambiguous.items() if s <= a and b <= e][:1]
                problems.append("%s:%d: %s: %s%s" % (rel, i, num, line.strip(), "".join(why)))
    for k, e in enumerate(allowed):
        if e.get("why") not in REASONS:
            problems.append("%s: %s: allowed entry %r: why must be one of %s" % (
                ALLOW_FILE, rel, e.get("text"), ", ".join(REASONS)))
        if not e.get("note"):
            problems.append("%s: %s: allowed entry %r has no note" % (ALLOW_FILE, rel, e.get("text")))
        if k not in used:
            problems.append("%s: %s: allowed entry %r matches no unregistered number of the document (stale)"
                            % (ALLOW_FILE, rel, e.get("text")))
    return records, problems


def documents(root):
    """The scanned documents, relative to ROOT."""
    names = ["README.md"] + sorted(glob.glob(os.path.join(root, "chapters/*/README.md"))
                                   + glob.glob(os.path.join(root, "chapters/*/device.md"))
                                   + glob.glob(os.path.join(root, "chapters/*/offload.md"))
                                   + glob.glob(os.path.join(root, "chapters/*/appendix-*.md")))
    return [os.path.relpath(os.path.join(root, n), root) for n in names]


def quote_templates(root):
    """document -> list of quote templates, from every quotes.json."""
    out = {}
    files = sorted(glob.glob(os.path.join(root, "chapters/*/quotes.json"))
                   + glob.glob(os.path.join(root, "docs/quotes.json")))
    for path in files:
        with open(path, encoding="utf-8") as f:
            spec = json.load(f)
        for q in spec["quotes"]:
            out.setdefault(q.get("document", spec["document"]), []).append(q["text"])
    return out


def main(root, listing):
    templates = quote_templates(root)
    with open(os.path.join(root, ALLOW_FILE), encoding="utf-8") as f:
        allow = json.load(f)
    docs = documents(root)
    problems, counts = [], {}
    for name in allow:
        if name not in docs:
            problems.append("%s: %s is not a scanned document" % (ALLOW_FILE, name))
    for rel in docs:
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            text = f.read()
        records, probs = check_document(rel, text, templates.get(rel, []), allow.get(rel, []))
        problems.extend(probs)
        for i, num, status, line in records:
            counts[status] = counts.get(status, 0) + 1
            if listing:
                print("%s:%d: %-22s %s  | %s" % (rel, i, status, num, line.strip()[:110]))
    for p in problems:
        print("check_numbers: " + p)
    total = sum(counts.values())
    print("check_numbers: %d numbers in %d documents: %s" % (
        total, len(docs), ", ".join("%d %s" % (n, s) for s, n in sorted(counts.items()))))
    return 1 if problems else 0


SELF_DOC = """# Chapter 0 — a test

Prose is not scanned: 12345 and 0.98765 stay unread here.

| step | loss | held-out |
|---|---|---|
| 1 | 2.654024 | 1.035014 |
| 150 | 1.007448 | 91.3% |

    zero-train --steps 2000 --loss-scale-init 16777216
      16-bit gradient elements exactly zero: step 1: 17 of 102 976 (0.02%)

```cpp
// excerpt: src/fp/format.h
constexpr int kFp16Max = 65504;
```

```
$ zero-plan --params 7.5e9 --world-size 1024
total   48.75 GB   1,880,064 B   1.875 GB   md5 8f3a9c21
zero-train --steps 4096 --bucket-mb 0.25   # loss 1.367128
zero-train: error: --loss-scale-init: 1e30 is outside [1, 1.67772e+07]
```

| machine | tokens/s | flags |
|---|---|---|
| 2-core AMD EPYC VM, fp16, H100 | 1 050 | `--bucket-mb 25 --loss-scale-init 65536` |
| CUDA 12.4.1, OpenBLAS 0.3.21, v1.2.345, ck/step-00000100, GPT-2, x86_64 | — | — |
"""

SELF_TEMPLATES = ["| 1 | {} | {} |", "| 150 | {} | 91.3% |", "exactly zero: step 1: 17 of {} (",
                  "total   48.75 GB   {} B   1.875 GB"]
SELF_ALLOWED = [{"text": "1 050", "where": "EPYC", "why": "timing", "note": "tokens/s of the VM the row names"}]


def self_test():
    bad = []
    records, problems = check_document("self.md", SELF_DOC, SELF_TEMPLATES, SELF_ALLOWED)
    status = {num: s for _, num, s, _ in records}
    # planted: an md5 printed with no quote, 1.875 in a template's literal text, and, with no
    # quote, a loss in a command line's comment and a number in a program's message
    want = {"2.654024": "quote", "1.035014": "quote", "1.007448": "quote", "102 976": "quote",
            "1,880,064": "quote", "1.367128": "UNREGISTERED", "1.67772e+07": "UNREGISTERED",
            "2000": "command", "16777216": "command", "1024": "command", "4096": "command", "65536": "command",
            "1 050": "allowed:timing", "8f3a9c21": "UNREGISTERED", "1.875": "UNREGISTERED"}
    bad += ["%s: %s, expected %s" % (n, status.get(n), s) for n, s in want.items() if status.get(n) != s]
    bad += ["%s was scanned, but it is prose, excerpt or out of scope" % n for n in status if n not in want]
    reported = sorted(p.split(": ")[1] for p in problems)
    if reported != ["1.367128", "1.67772e+07", "1.875", "8f3a9c21"]:
        bad.append("reported %r, expected 1.367128, 1.67772e+07, 1.875 and 8f3a9c21: %r" % (reported, problems))
    # a hole is one cell at most: "| 1 | {} |" ending a line does not reach across "| 1.035014"
    records, _ = check_document("self.md", SELF_DOC, ["| 1 | {} |\n"], [])
    if any(num == "1.035014" and s == "quote" for _, num, s, _ in records):
        bad.append("a hole reached across a table cell's border")
    # a template that matches differing texts in two places registers neither, and says why
    _, problems = check_document("self.md", SELF_DOC, ["| {} | {} |"] + SELF_TEMPLATES[1:], SELF_ALLOWED)
    if not any(p.split(": ")[1] == "2.654024" and "several places" in p for p in problems):
        bad.append("an ambiguous template registered 2.654024: %r" % problems)
    # allow-list faults: a stale entry, an unknown reason, an entry without a note
    faults = [{"text": "99999", "why": "timing", "note": "gone"},
              {"text": "8f3a9c21", "why": "guess", "note": "a reason outside the list"},
              {"text": "1.875", "why": "closed form"}]
    _, problems = check_document("self.md", SELF_DOC, SELF_TEMPLATES, SELF_ALLOWED + faults)
    for needle in ("'99999' matches no", "'8f3a9c21': why must", "'1.875' has no note"):
        if not any(needle in p for p in problems):
            bad.append("allow-list fault not reported (%s): %r" % (needle, problems))
    for b in bad:
        print("check_numbers self-test: " + b)
    print("check_numbers self-test: %s" % ("FAILED" if bad else
          "the planted numbers and allow-list faults are reported; quoted, command-line, allowed, "
          "excerpt, prose and out-of-scope numbers pass"))
    return 1 if bad else 0


if __name__ == "__main__":
    args = sys.argv[1:]
    if args == ["--self-test"]:
        sys.exit(self_test())
    listing = "--list" in args
    args = [a for a in args if a != "--list"]
    if len(args) != 1:
        sys.exit("usage: check_numbers.py ROOT [--list] | --self-test")
    sys.exit(main(os.path.abspath(args[0]), listing))
