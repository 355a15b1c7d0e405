#!/usr/bin/python3
"""tests/docs/check_links.py ROOT — every relative link in the project's Markdown leads somewhere.

A link [text](path) or [text](path#anchor) in README.md, docs/, chapters/ or a module README must
name a file or folder that exists (relative to the linking file), and an anchor must be the slug
of a heading in the target (the slug GitHub computes: lower case, everything but letters, digits,
spaces, hyphens and underscores dropped, spaces turned into hyphens) or an explicit {#id}. Links
with a scheme (https:, mailto:) are not followed. Exit 0 when all resolve, else one line per
broken link and exit 1.

`--self-test` checks the slug rule on headings whose GitHub anchors are known.
"""
import os
import re
import sys

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
EXPLICIT_ID = re.compile(r"\{#([A-Za-z0-9_-]+)\}")


def slug(heading):
    """GitHub's anchor for a heading's text."""
    text = EXPLICIT_ID.sub("", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)  # \w is Unicode-aware: ψ and é stay
    return text.replace(" ", "-")


def anchors(path):
    """Every anchor a Markdown file offers: heading slugs (numbered -1, -2 when repeated) and {#id}s."""
    seen, out, fence = {}, set(), False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.lstrip().startswith("```"):
                fence = not fence
                continue
            if fence:
                continue
            out.update(EXPLICIT_ID.findall(line))
            m = HEADING.match(line)
            if m:
                base = slug(m.group(2))
                n = seen.get(base, 0)
                seen[base] = n + 1
                out.add(base if n == 0 else f"{base}-{n}")
    return out


def markdown_files(root):
    yield os.path.join(root, "README.md")
    for top in ("docs", "chapters", "src", "bench", "notebooks"):
        for folder, subdirs, names in os.walk(os.path.join(root, top)):
            subdirs[:] = sorted(d for d in subdirs if not d.startswith("."))
            for name in sorted(names):
                if name.endswith(".md"):
                    yield os.path.join(folder, name)


def links(path):
    fence = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if line.lstrip().startswith("```"):
                fence = not fence
                continue
            if not fence:
                for m in LINK.finditer(line):
                    yield number, m.group(1)


def check(root):
    problems, cache, count = [], {}, 0
    for md in markdown_files(root):
        if not os.path.isfile(md):
            continue
        for number, target in links(md):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:, ...
                continue
            count += 1
            path, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(md), path)) if path else md
            where = f"{os.path.relpath(md, root)}:{number}: ({target})"
            if not os.path.exists(dest):
                problems.append(f"{where} names {os.path.relpath(dest, root)}, which does not exist")
                continue
            if anchor:
                if not dest.endswith(".md"):
                    problems.append(f"{where} has an anchor into a file that is not Markdown")
                    continue
                if dest not in cache:
                    cache[dest] = anchors(dest)
                if anchor not in cache[dest]:
                    problems.append(f"{where}: {os.path.relpath(dest, root)} has no heading '#{anchor}'")
    return problems, count


def self_test():
    known = {
        "3. Swamping: why 1 + 1e−5 = 1 in fp16": "3-swamping-why-1--1e5--1-in-fp16",
        "Memory: 4ψ + Kψ/N, and what the ledger measures": "memory-4ψ--kψn-and-what-the-ledger-measures",
        "8. One seam for everything device-side (`device/runtime.h`)":
            "8-one-seam-for-everything-device-side-deviceruntimeh",
        "The model: a GPT-2-style decoder {#model_readme}": "the-model-a-gpt-2-style-decoder",
    }
    bad = [h for h, s in known.items() if slug(h) != s]
    for h in bad:
        print(f"check_links self-test: slug('{h}') = '{slug(h)}', GitHub says '{known[h]}'")
    print("check_links self-test: " + ("FAILED" if bad else f"{len(known)} slugs as GitHub computes them"))
    return 1 if bad else 0


def main(argv):
    if len(argv) == 2 and argv[1] == "--self-test":
        return self_test()
    if len(argv) != 2:
        print("usage: check_links.py ROOT | --self-test", file=sys.stderr)
        return 2
    problems, count = check(argv[1])
    for p in problems:
        print(f"check_links: {p}")
    print(f"check_links: {count} relative links, {len(problems)} broken")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
