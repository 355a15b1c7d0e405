#!/usr/bin/python3
"""scripts/check_deps.py — every program and Python module that `make test` and `make run` use
outside the build is installed by a package that `make deps` (scripts/deps.sh) installs, directly
or as one of its dependencies.

Why: a development machine keeps what earlier work installed, so a missing install step passes
there and fails on a fresh Debian 12 machine (the `jupyter-nbconvert` program once did: it is its
own Debian package, which `make deps` never installed). This check finds such a gap on any machine.

What it inspects (a deliberately small grammar, matching how this project's scripts are written):
  - the first word of every command in scripts/*.sh, .ci/run and the Makefile's recipes, resolved
    on PATH (shell builtins, keywords, functions, variables and the project's own programs skipped);
  - absolute program paths (/usr/bin/...) and `python3 -m MODULE` in those files; `-m jupyter SUB`
    also needs the program `jupyter-SUB`, which jupyter looks up at run time;
  - every module the notebooks import, resolved by the Python that runs them (/usr/bin/python3);
  - the first word of every command in the exercises' worked solutions (chapters/*/exercises.md,
    run by tests/docs/check_exercises.py), resolved on Debian's PATH, the project's own programs
    skipped.
Each file found is mapped to its Debian package (dpkg -S) and must be in the closure of deps.sh's
list under Depends/Pre-Depends, or be part of every Debian base system (Essential or
Priority: required). It is not a shell parser; a construct it cannot read is reported, not skipped.
Exit 0 when all are covered; otherwise one line per gap and exit 1.
"""
import functools
import glob
import json
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOTEBOOK_PYTHON = "/usr/bin/python3"
SHELL_WORDS = set("""if then else elif fi for while until do done case esac in function time
  [[ ]] { } ! select coproc""".split())


def deps_packages():
    """make deps's packages: deps.sh's build_packages=( ... ) and test_packages=( ... ) lists."""
    text = open(os.path.join(ROOT, "scripts/deps.sh")).read()
    words = []
    for group in ("build_packages", "test_packages"):
        block = re.search(r"^%s=\((.*?)^\)" % group, text, re.S | re.M)
        if not block:
            sys.exit("check_deps: no %s=( ... ) list in scripts/deps.sh" % group)
        words += [w for line in block.group(1).splitlines() for w in line.split("#")[0].split()]
    return words


def closure(packages):
    out = subprocess.run(["apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests",
                          "--no-conflicts", "--no-breaks", "--no-replaces", "--no-enhances"] + packages,
                         capture_output=True, text=True, check=True).stdout
    names = set(packages)
    for line in out.splitlines():
        line = line.strip()
        m = re.match(r"^\|?(?:Pre)?Depends: <?([^>\s]+)>?", line)
        names.add(m.group(1) if m else line.strip("<>"))
    # the base every Debian system has (debootstrap minbase installs exactly these)
    base = subprocess.run(["dpkg-query", "-W", "-f=${Package} ${Essential} ${Priority}\n"],
                          capture_output=True, text=True, check=True).stdout
    for line in base.splitlines():
        name, essential, priority = (line.split() + ["", "", ""])[:3]
        if essential == "yes" or priority == "required":
            names.add(name)
    return {n.split(":")[0] for n in names}


@functools.lru_cache(maxsize=None)  # the same programs recur in every script: ask dpkg once each
def package_of(path):
    real = os.path.realpath(path)
    for candidate in (path, real, real.replace("/usr/bin/", "/bin/"), real.replace("/bin/", "/usr/bin/")):
        r = subprocess.run(["dpkg", "-S", candidate], capture_output=True, text=True)
        if r.returncode == 0:
            return r.stdout.split(":")[0].split(",")[0].strip()
    return None


def shell_files():
    files = sorted(glob.glob(os.path.join(ROOT, "scripts/*.sh"))) + [os.path.join(ROOT, ".ci/run")]
    return [f for f in files if os.path.exists(f)]


def makefile_recipes():
    lines = []
    for line in open(os.path.join(ROOT, "Makefile")):
        if line.startswith("\t"):
            lines.append(re.sub(r"\$\((\w+)\)", r"$\1", line.strip().lstrip("@-")))
    return lines


def commands(lines, defined):
    """First words of the simple commands on these lines."""
    for line in lines:
        line = re.sub(r"(^|\s)#.*$", "", line)
        line = re.sub(r"'[^']*'", "''", line)
        line = re.sub(r'"[^"]*"', '""', line)
        for part in re.split(r"\|\||&&|[;|&()`]|\$\(", line):
            words = part.split()
            while words and re.match(r"^\w+=", words[0]):
                words.pop(0)  # assignments before a command
            while words and words[0] in ("exec", "command", "env", "sudo", "!"):
                words.pop(0)
            if not words:
                continue
            w = words[0]
            if (w in SHELL_WORDS or w in defined or w.startswith(("$", "-", '"', "'", "<", ">", "[", "{", "}"))
                    or "=" in w or w.endswith(")") or w[0].isdigit()):
                continue
            yield w


def exercise_commands():
    """The commands of the exercises' worked solutions (chapters/*/exercises.md: `$ ` lines, a
    trailing backslash continuing one), by file: tests/docs/check_exercises.py runs them in make test."""
    out = []
    for f in sorted(glob.glob(os.path.join(ROOT, "chapters/*/exercises.md"))):
        lines, pending = [], None
        for line in open(f, encoding="utf-8").read().splitlines():
            if pending is None and not line.startswith("$ "):
                continue
            text = line[2:] if pending is None else line.strip()
            joined = text[:-1] if text.endswith("\\") else text
            pending = joined if pending is None else pending + " " + joined
            if not text.endswith("\\"):
                lines.append(pending)
                pending = None
        out.append((os.path.relpath(f, ROOT), lines))
    return out


def project_program(word):
    """Whether a command word names one of the project's own programs (src/apps/*, the chapter
    programs, the benchmarks), which the exercises find in the build's bin/."""
    return word in os.listdir(os.path.join(ROOT, "src", "apps")) or re.match(r"^(chapter-\d+|bench-[\w-]+)$", word)


def notebook_modules():
    mods = set()
    for nb in glob.glob(os.path.join(ROOT, "notebooks/*.ipynb")):
        for cell in json.load(open(nb))["cells"]:
            if cell["cell_type"] != "code":
                continue
            for line in "".join(cell["source"]).splitlines():
                m = re.match(r"^\s*(?:from\s+([\w.]+)\s+import|import\s+([\w.,\s]+?)(?:\s+as\s+\w+)?\s*$)", line)
                if m:
                    for name in (m.group(1) or m.group(2)).split(","):
                        name = name.strip().split(" ")[0]
                        if name and not name.startswith("."):
                            mods.add(name.split(".")[0])
    return mods


@functools.lru_cache(maxsize=None)
def shell_kind(word):
    """What bash's `type -t` says a word is (builtin, keyword, file, ...)."""
    return subprocess.run(["bash", "-c", f"type -t {word}"], capture_output=True, text=True).stdout.strip()


@functools.lru_cache(maxsize=None)
def module_file(module):
    code = ("import importlib.util, sys; s = importlib.util.find_spec(sys.argv[1]); "
            "print('' if s is None else (s.origin or (list(s.submodule_search_locations or [''])[0])))")
    r = subprocess.run([NOTEBOOK_PYTHON, "-c", code, module], capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else ""


def main():
    wanted = closure(deps_packages())
    gaps, checked = [], []

    def need_file(what, path):
        if path in ("built-in", "frozen"):
            return
        pkg = package_of(path) if path else None
        if pkg is None:
            gaps.append(f"{what}: {path or 'not found'} is not installed by any Debian package here")
        elif pkg not in wanted:
            gaps.append(f"{what}: {path} comes from package '{pkg}', which make deps does not install")
        else:
            checked.append(f"{what} -> {pkg}")

    def need_program(what, name):
        path = name if name.startswith("/") else shutil.which(name)
        need_file(what, path if path and os.path.exists(path) else "")

    # array assignments (name=( ... ), over several lines) hold words, not commands
    strip_arrays = lambda text: re.sub(r"\b\w+=\((?:[^()]|\n)*?\)", "", text)
    sources = [(os.path.relpath(f, ROOT), strip_arrays(open(f).read()).splitlines()) for f in shell_files()]
    sources.append(("Makefile", makefile_recipes()))
    for name, lines in sources:
        text = "\n".join(lines)
        defined = set(re.findall(r"^\s*(\w+)\s*\(\)\s*\{", text, re.M))
        for word in sorted(set(commands(lines, defined))):
            if word.startswith(("scripts/", "build/", "./")) or "/bin/" in word and not word.startswith("/"):
                continue  # the project's own programs
            if shell_kind(word) in ("builtin", "keyword"):
                continue
            need_program(f"{name} runs '{word}'", word)
        for module, sub in re.findall(r"python3\s+-m\s+([\w.]+)(?:\s+([\w-]+))?", text):
            need_file(f"{name} runs 'python3 -m {module}'", module_file(module))
            if module == "jupyter" and sub:  # jupyter SUB execs the program jupyter-SUB
                need_program(f"{name} runs 'jupyter {sub}'", f"jupyter-{sub}")
    # the exercises run with the build's bin/ first on PATH; anything else must come from Debian
    # (a program installed here by hand, as jq once was, is missing on a fresh machine)
    for name, lines in exercise_commands():
        for word in sorted(set(commands(lines, set()))):
            if project_program(word):
                continue
            if shell_kind(word) in ("builtin", "keyword"):
                continue
            path = shutil.which(word, path="/usr/bin:/bin:/usr/sbin:/sbin")
            need_file(f"{name} runs '{word}'", path or "")
    for module in sorted(notebook_modules()):
        need_file(f"notebooks import '{module}'", module_file(module))

    for c in checked:
        print("check_deps: ok:", c)
    for g in gaps:
        print("check_deps:", g)
    print(f"check_deps: {len(checked)} programs and modules covered by make deps, {len(gaps)} not")
    return 1 if gaps else 0


if __name__ == "__main__":
    sys.exit(main())
