#!/usr/bin/python3
"""scripts/figures/figlib.py — the chapters' figures: their shared style, their data files, and
the driver that makes and checks them.

Every figure is one module `fig_*.py` beside this file, which defines
  NAME, CHAPTER   the figure's files: chapters/CHAPTER/figures/NAME.json and NAME.svg;
  TIMED           True when the data holds wall-clock times from a `--trace` (default False);
  collect(run)    runs the project's programs through `run` (a Runner, below) or evaluates a
                  closed form, and returns the figure's data: a dict of JSON values;
  draw(data)      a matplotlib Figure drawn from that dict alone.
NAME.json is the data, NAME.svg is draw(NAME.json). The SVG depends on nothing but the JSON: the
drawing is deterministic (a fixed svg.hashsalt, text as text, no date or creator in the
metadata), so drawing the same JSON twice gives the same bytes.

What is compared. A figure's data is regenerated and compared with the committed JSON exactly:
losses, bytes, event order, which chunk goes where. Keys ending in `_ms` are wall-clock times of a
trace; they differ from run to run, so for a TIMED figure they are left out of the comparison (the
names, order and counts of the events stay in it) and the committed times are kept.

usage:
  figlib.py make BUILD [--only NAME] [--retime]   run the programs, write every NAME.json, draw
                                                   every NAME.svg (`make figures`). A TIMED
                                                   figure whose structure is unchanged keeps its
                                                   committed times unless --retime is given, so
                                                   an unchanged tree gives unchanged files.
  figlib.py check ROOT BUILD                       regenerate every figure's data into a scratch
                                                   folder, compare it with the committed JSON,
                                                   redraw the committed JSON and compare it with
                                                   the committed SVG byte for byte; one line per
                                                   stale file, exit 1 (the `docs` test).
  figlib.py --self-test [ROOT]                     plant faults in copies of the committed figures
                                                   (an edited SVG, a changed number, a reordered
                                                   trace event, a missing file) and require the
                                                   check to report each one, and shifted trace
                                                   times to pass; draw every figure twice and
                                                   require the same bytes.
Run with Debian's /usr/bin/python3 (python3-matplotlib, scripts/deps.sh).
"""
import concurrent.futures
import copy
import glob
import importlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True  # the test runs from the source tree: leave no __pycache__ there

import matplotlib  # noqa: E402

matplotlib.use("svg")
import matplotlib.patches as patches  # noqa: E402  (the figures draw boxes with it too)
from matplotlib.figure import Figure  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

# ---------------------------------------------------------------------------------------------
# Style: one look for every figure. Okabe & Ito's colour-blind-safe palette; a width of 600 pt,
# which a browser shows as 800 px.

OKABE_ITO = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky": "#56B4E9",
    "green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "purple": "#CC79A7",
    "grey": "#999999",
}
C = OKABE_ITO
# what each colour means, the same in every figure
PARAMS, GRADS, OPTIMIZER = C["blue"], C["orange"], C["green"]
FORWARD, BACKWARD, WAITING, REDUCING = C["sky"], C["blue"], C["vermillion"], C["orange"]
PRECISION = {"fp32": C["black"], "fp16": C["orange"], "bf16": C["blue"]}

WIDTH_IN = 600 / 72  # inches: 600 pt = 800 px

STYLE = {
    "svg.fonttype": "none",  # text stays text: small files, selectable, no glyph outlines
    "svg.hashsalt": "zero-teach figures",  # element ids from content, not from a random salt
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans", "Helvetica", "Arial"],
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.titleweight": "normal",
    "axes.labelsize": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": False,
    "grid.color": "#dddddd",
    "grid.linewidth": 0.6,
    "legend.fontsize": 9,
    "legend.frameon": False,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "lines.linewidth": 1.6,
    "hatch.linewidth": 0.6,
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "path.simplify": False,
}
matplotlib.rcParams.update(STYLE)


def new_figure(height_in):
    """A Figure of the common width (no pyplot: nothing global between figures).
    @param height_in the height in inches. @return the Figure."""
    return Figure(figsize=(WIDTH_IN, height_in))


def swatch(label, **style):
    """A legend entry: a filled box. @param label its text. @param style Patch keywords (color,
    facecolor, edgecolor, hatch). @return the Patch."""
    return patches.Patch(label=label, **style)


def svg_bytes(fig):
    """The figure as SVG, deterministically. @param fig a Figure. @return the bytes."""
    buf = io.BytesIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    return buf.getvalue()


def fits(text, width, axis_range, axes_fraction, size=7.5):
    """Whether a label fits inside a bar. @param text the label. @param width the bar's width and
    @param axis_range the x axis' extent, in data units. @param axes_fraction the axes' share of
    the figure's width. @param size the font size in points. @return the answer."""
    px = width / axis_range * axes_fraction * WIDTH_IN * 72 * 4 / 3
    return px >= 0.62 * size * 4 / 3 * len(text) + 4


# ---------------------------------------------------------------------------------------------
# Data files: JSON with containers of plain values on one line, so a change reads as a diff.


def _depth(v):
    if isinstance(v, dict):
        return 1 + max((_depth(x) for x in v.values()), default=0)
    if isinstance(v, list):
        return 1 + max((_depth(x) for x in v), default=0)
    return 0


def _flat(v):
    """On one line: a list of plain values, or a small container of them (up to 140 characters)."""
    d = _depth(v)
    if d == 0:
        return True
    if d <= 1 and (isinstance(v, list) or len(json.dumps(v, ensure_ascii=False)) <= 140):
        return True
    return d <= 2 and len(json.dumps(v, ensure_ascii=False)) <= 140


def dump_json(obj, level=0):
    """JSON text: a container of plain values on one line, others one item per line.
    @param obj the data. @param level nesting (for the indent). @return the text."""
    pad, inner = " " * level, " " * (level + 1)
    if _flat(obj):
        return json.dumps(obj, ensure_ascii=False)
    if isinstance(obj, list):
        return "[\n" + ",\n".join(inner + dump_json(x, level + 1) for x in obj) + "\n" + pad + "]"
    items = [inner + json.dumps(k) + ": " + dump_json(v, level + 1) for k, v in obj.items()]
    return "{\n" + ",\n".join(items) + "\n" + pad + "}"


def strip_times(data):
    """The data less its wall-clock times (keys ending in _ms). @param data the data. @return a copy."""
    if isinstance(data, dict):
        return {k: strip_times(v) for k, v in data.items() if not k.endswith("_ms")}
    if isinstance(data, list):
        return [strip_times(x) for x in data]
    return data


def first_difference(a, b, path=""):
    """Where two JSON values first differ. @return None, or (path, value in a, value in b)."""
    if type(a) is not type(b) and not (isinstance(a, (int, float)) and isinstance(b, (int, float))):
        return path or "(top)", a, b
    if isinstance(a, dict):
        for k in list(a) + [k for k in b if k not in a]:
            if k not in a or k not in b:
                return f"{path}.{k}".lstrip("."), a.get(k, "(absent)"), b.get(k, "(absent)")
            d = first_difference(a[k], b[k], f"{path}.{k}")
            if d:
                return (d[0].lstrip("."),) + d[1:]
        return None
    if isinstance(a, list):
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
        if len(a) != len(b):
            return f"{path} (length)".lstrip("."), len(a), len(b)
        return None
    return None if a == b else (path or "(top)", a, b)


def short(v, width=60):
    text = json.dumps(v) if not isinstance(v, str) else v
    return text if len(text) <= width else text[: width - 3] + "..."


# ---------------------------------------------------------------------------------------------
# Running the project's programs.


class FigureError(Exception):
    """A program the figure needs failed, or its output is not what the figure expects."""


class Runner:
    """Runs BUILD/bin programs with outputs in a scratch folder; every output is read back."""

    def __init__(self, build, scratch):
        self.bin = os.path.join(os.path.abspath(build), "bin")
        self.scratch = scratch
        self.count = 0
        self.lock = threading.Lock()

    def _path(self, stem):
        with self.lock:
            self.count += 1
            return os.path.join(self.scratch, f"{self.count:03d}-{stem}")

    def program(self, name, args, outputs=()):
        """Run BUILD/bin/NAME ARGS. @param outputs flags that take a file (each gets a scratch
        path). @return {flag: parsed JSON of that file}."""
        exe = os.path.join(self.bin, name)
        if not os.access(exe, os.X_OK):
            raise FigureError(f"{exe} was not built (make build)")
        paths = {flag: self._path(flag.strip("-") + ".json") for flag in outputs}
        cmd = [exe, *args]
        for flag, path in paths.items():
            cmd += [flag, path]
        r = subprocess.run(cmd, capture_output=True, text=True, cwd=self.scratch)
        if r.returncode != 0:
            tail = (r.stderr or r.stdout).strip().splitlines()[-1:] or ["(no output)"]
            raise FigureError(f"`{name} {' '.join(args)}` exited with {r.returncode}: {tail[0]}")
        out = {}
        for flag, path in paths.items():
            with open(path) as f:
                out[flag] = json.load(f)
        return out

    def zero_train(self, args, trace=False):
        """zero-train ARGS --summary-json F [--trace T]. @return (summary, trace or None)."""
        outs = self.program("zero-train", args, ["--summary-json"] + (["--trace"] if trace else []))
        return outs["--summary-json"], outs.get("--trace")

    def zero_train_many(self, arg_lists):
        """Several zero-train runs, as many at once as there are cores (single-rank runs whose
        numbers do not depend on time). @return their summaries, in order."""
        jobs = os.cpu_count() or 1
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
            futures = [pool.submit(self.zero_train, a) for a in arg_lists]
            return [f.result()[0] for f in futures]

    def zero_plan(self, args):
        """zero-plan ARGS --json F. @return the plan."""
        return self.program("zero-plan", args, ["--json"])["--json"]


def trace_spans(trace, rank):
    """One rank's complete events of a Chrome trace, in recording order.
    @return [{"track": tid's name, "name", "cat", "start_ms", "dur_ms"}] (times as recorded)."""
    names = {}
    for e in trace["traceEvents"]:
        if e.get("ph") == "M" and e.get("name") == "thread_name" and e["pid"] == rank:
            names[e["tid"]] = e["args"]["name"]
    out = []
    for e in trace["traceEvents"]:
        if e.get("ph") == "X" and e["pid"] == rank:
            out.append({"track": names.get(e["tid"], str(e["tid"])), "name": e["name"], "cat": e["cat"],
                        "start_ms": e["ts"] / 1000.0, "dur_ms": e["dur"] / 1000.0})
    return out


def ms(x):
    """A time in milliseconds kept to the microsecond. @param x milliseconds. @return rounded."""
    return round(x, 3)


# ---------------------------------------------------------------------------------------------
# The registry, make and check.


def modules():
    """Every figure module, in name order. @return [module]."""
    names = sorted(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(HERE, "fig_*.py")))
    return [importlib.import_module(n) for n in names]


def paths(root, m):
    """@return (json path, svg path) of module m's figure under root."""
    base = os.path.join(root, "chapters", m.CHAPTER, "figures", m.NAME)
    return base + ".json", base + ".svg"


def rel(root, path):
    return os.path.relpath(path, root)


def draw_bytes(m, data):
    """SVG of m.draw(data), the data passed through its JSON text first (exactly what a reader of
    NAME.json gets). @return bytes."""
    return svg_bytes(m.draw(json.loads(dump_json(data))))


def compared(m, data):
    return strip_times(data) if getattr(m, "TIMED", False) else data


def check_figure(m, root, fresh):
    """The problems of one committed figure. @param fresh the regenerated data, or a FigureError.
    @return [one line per problem]."""
    jpath, spath = paths(root, m)
    problems = []
    for p in (jpath, spath):
        if not os.path.isfile(p):
            problems.append(f"{rel(root, p)}: missing (run `make figures`)")
    if problems:
        return problems
    with open(jpath, encoding="utf-8") as f:
        committed = json.load(f)
    if isinstance(fresh, Exception):
        problems.append(f"{rel(root, jpath)}: cannot regenerate its data: {fresh}")
    else:
        d = first_difference(compared(m, committed), compared(m, fresh))
        if d:
            where, old, new = d
            problems.append(f"{rel(root, jpath)} is stale: {where} is {short(old)} in the file, "
                            f"{short(new)} from the programs now (run `make figures`)")
    with open(spath, "rb") as f:
        on_disk = f.read()
    if draw_bytes(m, committed) != on_disk:
        problems.append(f"{rel(root, spath)} is not what {os.path.basename(jpath)} draws (edited, or drawn by "
                        f"other code; matplotlib {matplotlib.__version__} here): run `make figures`")
    return problems


def orphans(root, mods):
    """Files in a chapter's figures/ folder that no module writes. @return [line]."""
    known = {p for m in mods for p in paths(root, m)}
    out = []
    for p in sorted(glob.glob(os.path.join(root, "chapters", "*", "figures", "*"))):
        if p not in known:
            out.append(f"{rel(root, p)}: no script in scripts/figures/ makes it (remove it, or add a fig_*.py)")
    return out


def collect(m, build, scratch):
    os.makedirs(scratch, exist_ok=True)
    return m.collect(Runner(build, scratch))


def cmd_make(build, only, retime):
    mods = [m for m in modules() if not only or m.NAME in only]
    if only and len(mods) != len(only):
        print(f"figures: unknown figure in {only}; known: {[m.NAME for m in modules()]}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="zt-figures-") as scratch:
        for m in mods:
            t0 = time.monotonic()
            jpath, spath = paths(ROOT, m)
            try:
                data = collect(m, build, os.path.join(scratch, m.NAME))
            except FigureError as e:
                print(f"figures: {m.NAME}: {e}", file=sys.stderr)
                return 1
            kept = ""
            if getattr(m, "TIMED", False) and not retime and os.path.isfile(jpath):
                with open(jpath, encoding="utf-8") as f:
                    committed = json.load(f)
                if strip_times(committed) == strip_times(data):
                    data, kept = committed, " (structure unchanged: committed times kept; --retime replaces them)"
            text = dump_json(data) + "\n"
            os.makedirs(os.path.dirname(jpath), exist_ok=True)
            with open(jpath, "w", encoding="utf-8") as f:
                f.write(text)
            with open(spath, "wb") as f:
                f.write(draw_bytes(m, json.loads(text)))
            print(f"figures: {rel(ROOT, spath)} in {time.monotonic() - t0:.1f} s{kept}")
    return 0


def cmd_check(root, build):
    mods = modules()
    problems = orphans(root, mods)
    with tempfile.TemporaryDirectory(prefix="zt-figures-check-") as scratch:
        for m in mods:
            try:
                fresh = collect(m, build, os.path.join(scratch, m.NAME))
            except FigureError as e:
                fresh = e
            problems += check_figure(m, root, fresh)
    for p in problems:
        print(p)
    if not problems:
        print(f"figures: all {len(mods)} figures are what their data draws, and their data what the programs give")
    return 1 if problems else 0


def self_test(root):
    """Planted faults, each of which check_figure must report; shifted times, which it must not."""
    mods = modules()
    failures = []

    def expect(label, lines, wanted):
        hit = [ln for ln in lines if wanted in ln]
        if not hit:
            failures.append(f"self-test: {label}: expected a line with '{wanted}', got {lines or 'none'}")
        elif len(lines) != 1:
            failures.append(f"self-test: {label}: expected one line, got {lines}")

    with tempfile.TemporaryDirectory(prefix="zt-figures-selftest-") as tmp:
        for m in mods:
            jsrc, ssrc = paths(root, m)
            jdst, sdst = paths(tmp, m)
            os.makedirs(os.path.dirname(jdst), exist_ok=True)
            shutil.copy(jsrc, jdst)
            shutil.copy(ssrc, sdst)
            with open(jsrc, encoding="utf-8") as f:
                good = json.load(f)
            # the committed pair is consistent, and the drawing repeats byte for byte
            lines = check_figure(m, tmp, copy.deepcopy(good))
            if lines:
                failures.append(f"self-test: {m.NAME}: the committed figure does not pass: {lines}")
            if draw_bytes(m, good) != draw_bytes(m, good):
                failures.append(f"self-test: {m.NAME}: drawing the same data twice gave different SVG bytes")
            # a number changed by the programs: the JSON is stale
            expect(f"{m.NAME}, a changed value", check_figure(m, tmp, plant_value(good, m)), "is stale")
            # a hand-edited SVG
            with open(sdst, "rb") as f:
                svg = f.read()
            with open(sdst, "wb") as f:
                f.write(svg.replace(b"</svg>", b"<!-- edited --></svg>"))
            expect(f"{m.NAME}, an edited SVG", check_figure(m, tmp, good), "is not what")
            shutil.copy(ssrc, sdst)
            # a JSON edited by hand (a value the drawing shows), its SVG no longer redrawn from it
            edited = plant_drawn_value(good, m)
            if edited is None:
                failures.append(f"self-test: {m.NAME}: no value of its data changes the drawing")
            else:
                with open(jdst, "w", encoding="utf-8") as f:
                    f.write(dump_json(edited) + "\n")
                expect(f"{m.NAME}, a JSON whose SVG was not redrawn", check_figure(m, tmp, edited), "is not what")
                shutil.copy(jsrc, jdst)
            if getattr(m, "TIMED", False):
                # other times, same events: passes; two events swapped: stale
                if check_figure(m, tmp, shift_times(good)) != []:
                    failures.append(f"self-test: {m.NAME}: other wall-clock times were reported as stale")
                expect(f"{m.NAME}, reordered events", check_figure(m, tmp, swap_events(good)), "is stale")
            # a figure not yet made
            os.remove(sdst)
            expect(f"{m.NAME}, a missing SVG", check_figure(m, tmp, good), "missing")
            shutil.copy(ssrc, sdst)
        # a file no script makes
        stray = os.path.join(tmp, "chapters", mods[0].CHAPTER, "figures", "stray.svg")
        with open(stray, "w") as f:
            f.write("<svg/>")
        expect("a stray file", orphans(tmp, mods), "no script")
    for f in failures:
        print(f)
    if not failures:
        print(f"figures self-test: every planted fault reported, shifted times accepted, "
              f"{len(mods)} figures drawn twice byte for byte")
    return 1 if failures else 0


def _leaves(data, path=()):
    """Every (path, value) of a number or string that is not a time."""
    if isinstance(data, dict):
        for k, v in data.items():
            if not k.endswith("_ms"):
                yield from _leaves(v, path + (k,))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            yield from _leaves(v, path + (i,))
    elif isinstance(data, (int, float, str)) and not isinstance(data, bool):
        yield path, data


def _set(data, path, value):
    for k in path[:-1]:
        data = data[k]
    data[path[-1]] = value


def plant_value(data, m):
    """A copy with the last plain value changed (a number + 1, a string marked)."""
    out = copy.deepcopy(data)
    leaves = [(p, v) for p, v in _leaves(out) if p]
    path, v = leaves[-1]
    _set(out, path, v + "'" if isinstance(v, str) else v + 1)
    return out


def plant_drawn_value(data, m, tries=8):
    """A copy with one number changed that changes the drawing (numbers from the middle of the data
    outwards), or None when none of the first `tries` does."""
    numbers = [(p, v) for p, v in _leaves(data) if p and not isinstance(v, str)]
    mid = len(numbers) // 2
    order = sorted(range(len(numbers)), key=lambda i: (abs(i - mid), i))
    drawn = draw_bytes(m, data)
    for i in order[:tries]:
        path, v = numbers[i]
        out = copy.deepcopy(data)
        _set(out, path, v + 1)
        try:
            if draw_bytes(m, out) != drawn:
                return out
        except (ValueError, IndexError, KeyError):  # a value the drawing cannot take: try another
            continue
    return None


def shift_times(data):
    """A copy with every time moved (as another run's trace would)."""
    if isinstance(data, dict):
        return {k: (v * 1.25 + 0.5 if k.endswith("_ms") and isinstance(v, (int, float)) else shift_times(v))
                for k, v in data.items()}
    if isinstance(data, list):
        return [shift_times(x) for x in data]
    return data


def swap_events(data):
    """A copy with the first two different neighbours of the first list of timed events swapped."""
    out = copy.deepcopy(data)

    def visit(node):
        if (isinstance(node, list) and len(node) > 1 and all(isinstance(x, dict) for x in node)
                and all(any(k.endswith("_ms") for k in x) for x in node)):
            for i in range(len(node) - 1):
                if strip_times(node[i]) != strip_times(node[i + 1]):
                    node[i], node[i + 1] = node[i + 1], node[i]
                    return True
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else []
        return any(visit(c) for c in children)

    if not visit(out):
        raise FigureError("no list of events to reorder")
    return out


def main(argv):
    if argv[:1] == ["make"] and len(argv) >= 2:
        only, retime, rest = [], False, argv[2:]
        while rest:
            if rest[0] == "--retime":
                retime, rest = True, rest[1:]
            elif rest[0] == "--only" and len(rest) > 1:
                only, rest = rest[1].split(","), rest[2:]
            else:
                break
        if not rest:
            return cmd_make(argv[1], only, retime)
    elif argv[:1] == ["check"] and len(argv) == 3:
        return cmd_check(os.path.abspath(argv[1]), argv[2])
    elif argv[:1] == ["--self-test"] and len(argv) <= 2:
        return self_test(os.path.abspath(argv[1]) if len(argv) == 2 else ROOT)
    print("usage: figlib.py make BUILD [--only NAME,...] [--retime] | check ROOT BUILD | --self-test [ROOT]",
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    import figlib  # the figure modules import this file as `figlib`: run that one copy

    sys.exit(figlib.main(sys.argv[1:]))
