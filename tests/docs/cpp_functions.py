"""tests/docs/cpp_functions.py — where the function bodies of a C++ source file are, for the
structure check's length rule. A body is a brace block whose header (the text since the previous
`;`, `{` or `}`) has a parameter list and is not a control statement, a type or namespace, a lambda
or an initialiser, and which is not inside another function (a lambda counts as part of the
function it is in). Comments, strings and character literals are blanked first, so braces inside
them do not count. A reading aid, not a parser: it is exact on this project's formatted sources.
"""
import re

NOT_A_FUNCTION = re.compile(r"^\s*(if|for|while|switch|catch|do|else|try)\b"
                            r"|\b(namespace|class|struct|union|enum)\b[^()]*$"
                            r"|=\s*$"
                            r"|\]\s*(\(.*\))?\s*(mutable)?\s*(->.*)?$"
                            r"|^\s*extern\b")


def blank_comments_and_strings(text):
    """The text with comments and literals replaced by spaces (newlines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i) + 2
        elif text.startswith('R"', i):
            delim = re.match(r'R"([^(]*)\(', text[i:]).group(1)
            j = text.find(")" + delim + '"', i) + len(delim) + 2
        elif text[i] in "\"'" and not (text[i] == "'" and i and text[i - 1].isalnum()):  # 1'000 separators
            j = i + 1
            while j < n and text[j] != text[i]:
                j += 2 if text[j] == "\\" else 1
            j += 1
        else:
            out.append(text[i])
            i += 1
            continue
        out.append(re.sub(r"[^\n]", " ", text[i:j]))
        i = j
    return "".join(out)


def functions(text):
    """[(first line, lines)] of every outermost function body in `text` (1-based lines, the
    header's first line to the closing brace)."""
    code = blank_comments_and_strings(text)
    stack, start, found = [], 0, []
    for i, c in enumerate(code):
        if c == ";":
            start = i + 1
        elif c == "{":
            header = code[start:i]
            h = " ".join(header.split())
            is_function = (not any(kind == "f" for kind, _ in stack) and ")" in h
                           and not NOT_A_FUNCTION.search(h) and not h.startswith("#"))
            first = code.count("\n", 0, start + len(header) - len(header.lstrip()))
            stack.append(("f" if is_function else "b", first))
            start = i + 1
        elif c == "}":
            kind, first = stack.pop()
            if kind == "f":
                found.append((first + 1, code.count("\n", 0, i) - first + 1))
            start = i + 1
    return found
