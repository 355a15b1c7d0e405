#!/usr/bin/python3
"""tests/docs/check_exercises.py ROOT BUILD [--print] [--chapter NN] — every number in an exercise's
worked solution is produced by a command shown beside it, and that command still produces it.

The exercises live in chapters/NN-*/exercises.md, for chapters 1-16, 3 to 6 each. An exercise is a
`### Exercise N.M — title` heading, its question, then a line starting `**Solution.**` and the
worked solution up to the next heading. A solution shows its commands in ```console blocks:

    ```console
    $ zero-plan --params 13e9 --stage 2 --world-size 8
    ...
    total                 48.75 GB      48,750,000,000 B
    ```

A line starting `$ ` is a command (a trailing backslash continues it on the next line); it runs in
bash with BUILD/bin first on PATH, in a scratch directory, so pipes such as `| grep loss` work.
A command that starts zero-train on several ranks without choosing `--ranks-as` runs twice, with
ranks as processes and as threads (ZT_RANKS_AS), and must print what the solution shows both ways.
The lines after it, up to the next command or the block's end, are output the command must print:
each must equal a line of its output (trailing blanks ignored), in the order shown; `...` stands
for any number of lines left out. A line `(exit status N)` says the command must exit with N
(default 0). Then the prose: every bold span in a solution that holds a digit (`**48.75 GB**`) must
appear, verbatim up to runs of blanks, in the output of one of that solution's commands; so an
answer cannot be typed in by hand and go stale. Everything these programs print is deterministic
(the canonical GEMM is the default; no wall-clock figure may be quoted or set in bold).

The script also checks the structure: chapters 1-16 each have exercises.md with 3-5 exercises, each
heading ending in [paper] (answered with the chapter's formulas) or [lab] (answered by a run), each
with a solution that runs at least one command. `--print` prints each command's output instead of
checking (for writing a solution); `--chapter NN` (repeatable) limits the run to those chapters; `BUILD --self-test`
checks the checker on the fixtures in tests/docs/fixtures/exercises (one good, one with four
planted faults). Exit 0 when all
holds, else one line per failure and exit 1.
"""
import concurrent.futures
import glob
import os
import re
import subprocess
import sys
import tempfile

EXERCISE = re.compile(r"^### Exercise (\d+)\.(\d+)\b")
KIND_TAG = re.compile(r"\[(paper|lab)\]$")  # answered with the chapter's formulas, or by a run
HEADING = re.compile(r"^#{1,3} ")
BOLD = re.compile(r"\*\*(.+?)\*\*")
EXIT = re.compile(r"^\(exit status (\d+)\)$")
CHAPTERS = [*range(1, 17)]
MIN_EXERCISES, MAX_EXERCISES = 3, 5


class Command:
    def __init__(self, where, text):
        self.where = where  # "chapters/..../exercises.md:LINE"
        self.text = text
        self.expected = []  # output lines, "..." for a gap
        self.status = 0
        self.output = None


class Exercise:
    def __init__(self, where, name):
        self.where = where
        self.name = name
        self.has_solution = False
        self.prose = []  # solution lines outside code blocks
        self.commands = []


def parse(path, rel):
    """Split one exercises.md into exercises with their solution prose and console commands."""
    exercises = []
    current = None
    in_solution = False
    block = None  # None outside a fence; "console" or "other" inside one
    with open(path) as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        where = "%s:%d" % (rel, i + 1)
        if block is None and line.startswith("```"):
            block = "console" if line.strip() == "```console" else "other"
            i += 1
            continue
        if block is not None:
            if line.startswith("```"):
                block = None
            elif block == "console" and current is not None and in_solution:
                if line.startswith("$ "):
                    text = line[2:]
                    while text.endswith("\\") and i + 1 < len(lines):
                        i += 1
                        text = text[:-1] + " " + lines[i].strip()
                    current.commands.append(Command(where, text))
                elif current.commands:
                    m = EXIT.match(line.strip())
                    if m:
                        current.commands[-1].status = int(m.group(1))
                    elif line.strip():
                        current.commands[-1].expected.append(line.rstrip())
            i += 1
            continue
        m = EXERCISE.match(line)
        if m:
            current = Exercise(where, line[4:].strip())
            exercises.append(current)
            in_solution = False
        elif HEADING.match(line):
            current, in_solution = None, False
        elif current is not None and line.startswith("**Solution.**"):
            current.has_solution = in_solution = True
            current.prose.append(line)
        elif current is not None and in_solution:
            current.prose.append(line)
        i += 1
    return exercises


def launch_modes(text):
    """The ways of starting ranks a command is run with: every command that starts zero-train on
    several ranks without choosing --ranks-as runs with ranks as processes (the default) and as
    threads (ZT_RANKS_AS), and must print the quoted lines both ways."""
    several = re.search(r"--world-size[ =](\d+)", text) and int(re.search(r"--world-size[ =](\d+)", text).group(1)) > 1
    if "zero-train" in text and several and "--ranks-as" not in text:
        return ["processes", "threads"]
    return ["processes"]


def run(build, scratch, cmd, ranks_as="processes"):
    env = dict(os.environ)
    env["PATH"] = os.path.join(build, "bin") + os.pathsep + env.get("PATH", "")
    env["ZT_RANKS_AS"] = ranks_as
    proc = subprocess.run(["bash", "-o", "pipefail", "-c", cmd.text], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=900, cwd=scratch, env=env)
    return proc.returncode, proc.stdout


def squash(text):
    return re.sub(r"[ \t]+", " ", text)


def check_output(cmd, status, output):
    """The failures of one command: its status, then its expected lines in order."""
    if status != cmd.status:
        return ["%s: `%s` exited %d, expected %d; its output ends:\n%s" % (cmd.where, cmd.text, status, cmd.status,
                                                                         output[-1500:])]
    got = [l.rstrip() for l in output.split("\n")]
    pos = 0
    for want in cmd.expected:
        if want.strip() == "...":
            continue
        try:
            pos = got.index(want, pos) + 1
        except ValueError:
            return ["%s: `%s` did not print, in order:\n    %s\n  its output:\n%s" % (cmd.where, cmd.text, want,
                                                                                     "\n".join(got)[-3000:])]
    return []


def check(root, build, only=None, printing=False):
    """Every failure of chapters/NN-*/exercises.md under ROOT, run with BUILD's programs."""
    failures = []
    exercises = []
    for n in CHAPTERS:
        if only is not None and n not in only:
            continue
        folders = glob.glob(os.path.join(root, "chapters/%02d-*" % n))
        path = os.path.join(folders[0], "exercises.md") if folders else None
        if not path or not os.path.exists(path):
            failures.append("chapter %d: no chapters/%02d-*/exercises.md" % (n, n))
            continue
        found = parse(path, os.path.relpath(path, root))
        if not MIN_EXERCISES <= len(found) <= MAX_EXERCISES:
            failures.append("%s: %d exercises, expected %d-%d" % (os.path.relpath(path, root), len(found), MIN_EXERCISES,
                                                                 MAX_EXERCISES))
        for e in found:
            if not KIND_TAG.search(e.name):
                failures.append("%s: %s has no [paper] or [lab] tag at the end of its heading" % (e.where, e.name))
            if not e.has_solution:
                failures.append("%s: %s has no **Solution.** line" % (e.where, e.name))
            elif not e.commands:
                failures.append("%s: %s's solution runs no command in a ```console block" % (e.where, e.name))
        exercises += found
    commands = [c for e in exercises for c in e.commands]
    runs = [(cmd, mode) for cmd in commands for mode in launch_modes(cmd.text)]
    with tempfile.TemporaryDirectory(prefix="zt-exercises-") as scratch:
        dirs = []
        for k in range(len(runs)):
            d = os.path.join(scratch, "c%d" % k)
            os.mkdir(d)
            dirs.append(d)
        # two commands per CPU: they wait on their ranks more than they compute (check_quotes.py)
        with concurrent.futures.ThreadPoolExecutor(max_workers=2 * (os.cpu_count() or 1)) as pool:
            results = list(pool.map(lambda kr: run(build, dirs[kr[0]], *kr[1]), enumerate(runs)))
    for (cmd, mode), (status, output) in zip(runs, results):
        cmd.output = output if cmd.output is None else cmd.output + "\n" + output
        if printing:
            print("== %s\n$ %s\n%s(exit status %d)\n" % (cmd.where, cmd.text, output, status))
        else:
            found = check_output(cmd, status, output)
            failures += [f.replace(": `", " (ranks as %s): `" % mode, 1) if mode == "threads" else f for f in found]
    if not printing:
        for e in exercises:
            outputs = squash("\n".join(c.output or "" for c in e.commands))
            for line in e.prose:
                for span in BOLD.findall(line):
                    if re.search(r"\d", span) and squash(span) not in outputs:
                        failures.append("%s: %s: the bold answer '%s' is not in the output of its commands" %
                                        (e.where, e.name, span))
    return failures, len(exercises), len(commands)


def self_test(build):
    """The checker accepts a good fixture and finds each of the four faults planted in a bad one."""
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "exercises")
    good, _, _ = check(os.path.join(here, "good"), build, only={1})
    bad, _, _ = check(os.path.join(here, "bad"), build, only={1})
    wanted = ["exited 3, expected 0", "did not print, in order", "bold answer '43 GB'", "has no [paper] or [lab] tag"]
    problems = ["good fixture: " + f for f in good]
    problems += ["bad fixture: not reported: " + w for w in wanted if not any(w in f for f in bad)]
    if len(bad) != len(wanted):
        problems.append("bad fixture: %d failures, expected %d:\n%s" % (len(bad), len(wanted), "\n".join(bad)))
    for p in problems:
        print(p)
    if not problems:
        print("check_exercises self-test: the good fixture passes, the bad one fails in all %d planted ways" %
              len(wanted))
    return 1 if problems else 0


def main():
    argv = sys.argv[1:]
    printing = "--print" in argv
    only = None
    while "--chapter" in argv:  # repeatable: those chapters only
        k = argv.index("--chapter")
        only = (only or set()) | {int(argv[k + 1])}
        del argv[k:k + 2]
    if "--self-test" in argv:
        return self_test(os.path.abspath([a for a in argv if not a.startswith("--")][0]))
    args = [a for a in argv if not a.startswith("--")]
    if len(args) != 2:
        sys.exit("usage: check_exercises.py ROOT BUILD [--print] [--chapter NN ...] | check_exercises.py BUILD --self-test")
    root, build = (os.path.abspath(a) for a in args)
    failures, n_exercises, n_commands = check(root, build, only, printing)
    if printing:
        return 0
    for f in failures:
        print(f)
    if not failures:
        print("exercises: %d exercises, %d commands: every quoted output and bold answer checked" %
              (n_exercises, n_commands))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
