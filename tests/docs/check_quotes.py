#!/usr/bin/python3
"""tests/docs/check_quotes.py ROOT BUILD [--print] — every run output a README quotes is what the
run prints today, so the book shows the numbers a reader gets. `--chapter N` (repeatable) checks
only those chapters' quote files (make check uses it).

The quotes live beside the text they check, in a `quotes.json` (chapters/*/quotes.json and
docs/quotes.json):

    {
      "document": "chapters/02-mixed-precision/README.md",
      "runs": {
        "fp32": "zero-train --digits 1 --steps 150 --global-batch 16 --warmup-steps 10 --precision fp32"
      },
      "quotes": [
        {"text": "| 150 | **{}** |", "values": ["fp32 steps.-1.loss %.6f"]}
      ]
    }

Each run is a program of BUILD/bin with its arguments; a zero-train run also gets
`--summary-json` and `--dump-params` into a scratch directory. A run may name the exit status it
expects (`{"args": "...", "status": 1}`; default 0), environment variables to set (`"env": {"ZT_KILL_AFTER_STEP":
"2"}`, for the fault-injection hooks), the script whose command line it repeats
(`"script": "scripts/run_main.sh"`: the arguments must still appear there), and a CPU feature it
needs (`"cpu_flag": "avx512f"`, a word of /proc/cpuinfo's flags: on a CPU without it the run and
its quotes are skipped, and the summary line says how many). A run that reads files made for it
names the shell commands that make them (`"before": ["zero-train --steps 2 --save-dir ck"]`): they
run first, in bash, in a directory of the run's own with BUILD/bin first on PATH, and each must
exit 0; the run's program then runs in that directory. Each quote is a piece of the document with
`{}` where run outputs go; the values, formatted, fill the holes in order, and the filled text
must appear in the document verbatim. A value is "RUN SOURCE FORMAT" (SOURCE may hold spaces):
  - SOURCE a path into the summary JSON: dot-separated keys and list indices (negative from the
    end), optionally prefixed by `100*` for percentages; a `*` in place of a key sums what the
    rest of the path gives over every key or index at that level
    (`comm.bytes_sent_per_step.*`: the bytes of all collectives together); FORMAT a %-format
    ("%.6f") or a Python format ("{:,}" for 1,647,616);
  - SOURCE `md5` or `sha256`: that hash of the dumped FP32 master weights; FORMAT the number of
    hex digits;
  - SOURCE `differs:OTHER`: how many of the dumped FP32 master weights differ, bit for bit, from
    those of run OTHER of the same file, FORMAT as for a JSON number;
  - SOURCE `out~REGEX`: the first group of REGEX in the run's stdout and stderr, as printed
    (FORMAT is ignored, write `%s`; except `spaced`, below).
FORMAT `spaced` writes an integer with its thousands grouped by single spaces (1 647 616), as the
chapters write byte counts; it applies to a JSON number and to an integer an `out~` group captured.
A quote may name, in its own "document" key, another document of the same chapter that it pins
(chapters/14-checkpoints-offload/offload.md beside the README); by default it pins the file's.
Everything here is deterministic by construction (the canonical GEMM is the default): no
tolerance. Wall-clock figures (tokens/s, seconds) are measurements of one machine and are not
quoted through this file. `--print` prints every filled quote instead of checking, for updating
a chapter after a change that moves its numbers. Exit 0 when every quote is found, else one line
per missing quote (with the text the run produced) and exit 1.

tests/docs/check_numbers.py is the other half: every number of a code block or a table in the
chapters and the README must lie in a quote's hole here, or be an input or listed with its reason.
"""
import concurrent.futures
import glob
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile


# Runs at a time: two per CPU. The runs wait on their ranks' messages more than they compute, and
# a CPU kept busy is cheaper than one woken for every message (on the 2-core VM, four runs at a
# time took less CPU in all than two).
WORKERS = 2 * (os.cpu_count() or 1)


def load_quote_files(root, chapters=None):
    """(path, spec) of every quote file; with `chapters`, only those chapters' (not the README's)."""
    if chapters:
        files = sorted(f for n in chapters for f in glob.glob(os.path.join(root, "chapters/%02d-*/quotes.json" % n)))
    else:
        files = sorted(glob.glob(os.path.join(root, "chapters/*/quotes.json")) +
                       glob.glob(os.path.join(root, "docs/quotes.json")))
    for path in files:
        with open(path) as f:
            spec = json.load(f)
        yield os.path.relpath(path, root), spec


def run_one(build, scratch, key, spec):
    """Run one program; return (stdout+stderr, summary dict or None, {md5, sha256} of the params or None)."""
    if isinstance(spec, str):
        spec = {"args": spec}
    argv = shlex.split(spec["args"])
    program = os.path.join(build, "bin", argv[0])
    extra = []
    summary = os.path.join(scratch, key + ".json")
    params = os.path.join(scratch, key + ".params")
    if argv[0] == "zero-train":
        extra = ["--summary-json", summary, "--dump-params", params]
    env = dict(os.environ, **spec.get("env", {}))
    cwd = scratch
    if spec.get("before"):
        cwd = os.path.join(scratch, key + ".dir")
        os.makedirs(cwd)
        path_env = dict(os.environ, PATH=os.path.join(build, "bin") + os.pathsep + os.environ.get("PATH", ""))
        for command in spec["before"]:
            prep = subprocess.run(["bash", "-c", command], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                  timeout=900, cwd=cwd, env=path_env)
            if prep.returncode != 0:
                raise RuntimeError("before %r: exit status %d; output:\n%s"
                                   % (command, prep.returncode, prep.stdout[-2000:]))
    proc = subprocess.run([program] + argv[1:] + extra, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=900, cwd=cwd, env=env)
    want = spec.get("status", 0)
    if proc.returncode != want:
        raise RuntimeError("%s: exit status %d, expected %d; output:\n%s" % (spec["args"], proc.returncode, want,
                                                                             proc.stdout[-2000:]))
    data, hashes = None, None
    if os.path.exists(summary):
        with open(summary) as f:
            data = json.load(f)
    if os.path.exists(params):
        with open(params, "rb") as f:
            raw = f.read()
        hashes = {"md5": hashlib.md5(raw).hexdigest(), "sha256": hashlib.sha256(raw).hexdigest(), "raw": raw}
    return proc.stdout, data, hashes


def canonical(run):
    """A run's spec as one string, equal for two runs exactly when they are the same command."""
    spec = {"args": run} if isinstance(run, str) else dict(run)
    spec["args"] = " ".join(spec["args"].split())
    spec.pop("script", None)  # which script a run stands for does not change what it prints
    return json.dumps(spec, sort_keys=True)


def expected_cost(spec):
    """A rough size of a run, to start the long ones first: its steps (zero-train's default is 300)."""
    argv = spec["args"].split()
    steps = int(argv[argv.index("--steps") + 1]) if "--steps" in argv[:-1] else 300
    return steps * (2 if spec.get("before") else 1)


def value_of(result, source, fmt, others=None):
    """One value of a run's result; others maps the names of the same file's runs to theirs."""
    out, data, hashes = result
    if source.startswith("differs:"):
        other = (others or {}).get(source[8:])
        if hashes is None or other is None or other[2] is None:
            raise RuntimeError("%s: both runs need a parameter dump" % source)
        a, b = hashes["raw"], other[2]["raw"]
        if len(a) != len(b):
            raise RuntimeError("%s: the dumps differ in length" % source)
        n = sum(1 for k in range(0, len(a), 4) if a[k:k + 4] != b[k:k + 4])
        return spaced(n) if fmt == "spaced" else fmt.format(n) if fmt.startswith("{") else fmt % n
    if source in ("md5", "sha256"):
        if hashes is None:
            raise RuntimeError("no parameter dump to hash")
        return hashes[source][:int(fmt)]
    if source.startswith("out~"):
        m = re.search(source[4:], out)
        if not m:
            raise RuntimeError("pattern %r not in the output" % source[4:])
        return spaced(int(m.group(1))) if fmt == "spaced" else m.group(1)
    scale = 1.0
    if source.startswith("100*"):
        scale, source = 100.0, source[4:]
    node = resolve(data, source.split("."))
    node = node * scale if scale != 1.0 else node
    if fmt == "spaced":
        return spaced(node)
    return fmt.format(node) if fmt.startswith("{") else fmt % node


def resolve(node, parts):
    """The value at a dotted path; a `*` part sums over every child at that level."""
    for k, part in enumerate(parts):
        if part == "*":
            children = node if isinstance(node, list) else list(node.values())
            return sum(resolve(child, parts[k + 1:]) for child in children)
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def spaced(n):
    """An integer with its thousands grouped by single spaces: 1647616 -> '1 647 616'."""
    if n != int(n):
        raise RuntimeError("%r is not an integer; `spaced` groups integers" % n)
    return "{:,}".format(int(n)).replace(",", " ")


def cpu_flags():
    """The CPU's feature words (/proc/cpuinfo's first "flags" line); empty where there is none."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def main(root, build, print_only, chapters=None):
    jobs = {}  # (file, run) -> spec
    specs = list(load_quote_files(root, chapters))
    for qfile, spec in specs:
        for name, run in spec["runs"].items():
            jobs[(qfile, name)] = run
            if isinstance(run, dict) and "script" in run:
                # the run stands for a script's command line: it must still be that command line
                with open(os.path.join(root, run["script"])) as f:
                    script = " ".join(f.read().replace("\\\n", " ").split())
                args = " ".join(run["args"].split()[1:])
                if args not in script:
                    sys.exit("%s: run %s is no longer what %s runs: %r" % (qfile, name, run["script"], args))
    results, failures, skipped = {}, [], set()
    flags = cpu_flags()
    # Each distinct run once: several files quote the same command (the README and chapter 2 both
    # quote the main job), and every run is deterministic, so one result serves them all. The
    # longest runs start first, so the pool's last minutes are not one long run alone.
    distinct = {}  # canonical spec -> [(file, run name)]
    for key, run in sorted(jobs.items()):
        if isinstance(run, dict) and run.get("cpu_flag") and run["cpu_flag"] not in flags:
            skipped.add(key)
            continue
        distinct.setdefault(canonical(run), []).append(key)
    order = sorted(distinct, key=lambda spec: -expected_cost(json.loads(spec)))
    with tempfile.TemporaryDirectory(prefix="zt_quotes_") as scratch:
        with concurrent.futures.ThreadPoolExecutor(max_workers=WORKERS) as pool:
            futures = {spec: pool.submit(run_one, build, scratch, "run%d" % i, json.loads(spec))
                       for i, spec in enumerate(order)}
            for spec, fut in futures.items():
                try:
                    result = fut.result()
                    for key in distinct[spec]:
                        results[key] = result
                except Exception as e:  # noqa: BLE001 - every failure is reported, not raised
                    for key in distinct[spec]:
                        failures.append("%s: run %s: %s" % (key[0], key[1], e))
    texts, skipped_quotes = {}, 0
    for qfile, spec in specs:
        for q in spec["quotes"]:
            if any((qfile, v.split(" ", 1)[0]) in skipped for v in q["values"]):
                skipped_quotes += 1
                continue
            document = q.get("document", spec["document"])
            if document not in texts:
                with open(os.path.join(root, document)) as f:
                    texts[document] = f.read()
            text = texts[document]
            try:
                vals = []
                for v in q["values"]:
                    run, rest = v.split(" ", 1)
                    source, fmt = rest.rsplit(" ", 1)
                    if (qfile, run) not in results:
                        raise RuntimeError("run %s did not complete" % run)
                    others = {name: r for (f, name), r in results.items() if f == qfile}
                    vals.append(value_of(results[(qfile, run)], source, fmt, others))
                pieces = q["text"].split("{}")
                if len(pieces) != len(vals) + 1:
                    raise RuntimeError("%d holes, %d values" % (len(pieces) - 1, len(vals)))
                filled = pieces[0] + "".join(v + p for v, p in zip(vals, pieces[1:]))
            except Exception as e:  # noqa: BLE001
                failures.append("%s: quote %r: %s" % (qfile, q["text"], e))
                continue
            if print_only:
                print("%s: %s" % (document, filled))
            elif filled not in text:
                failures.append("%s: %s does not quote what the run gives: %r" % (qfile, document, filled))
    for f in failures:
        print(f)
    n = sum(len(s["quotes"]) for _, s in specs) - skipped_quotes
    if not failures and not print_only:
        print("check_quotes: %d quotes from %d runs (%d distinct) in %d quote files agree with the runs%s" % (
            n, len(jobs) - len(skipped), len(distinct), len(specs),
            "; %d quotes of %d runs skipped (a CPU feature this machine lacks)" % (skipped_quotes, len(skipped))
            if skipped else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    argv, chapters = sys.argv[1:], []
    while "--chapter" in argv:  # --chapter N, repeatable: only those chapters' quote files
        k = argv.index("--chapter")
        chapters.append(int(argv[k + 1]))
        del argv[k:k + 2]
    args = [a for a in argv if a != "--print"]
    if len(args) != 2:
        sys.exit("usage: check_quotes.py ROOT BUILD [--print] [--chapter N ...]")
    sys.exit(main(os.path.abspath(args[0]), os.path.abspath(args[1]), "--print" in argv, chapters))
