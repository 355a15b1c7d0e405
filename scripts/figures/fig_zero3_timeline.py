"""scripts/figures/fig_zero3_timeline.py — chapter 9: one ZeRO-3 step on a timeline, with and
without prefetch: compute, the time blocked on collectives, and each gathered unit from its
all-gather's issue to its release.

From real runs: `zero-train --stage 3 --world-size 2` (ranks as processes, one per core; 4 blocks
of width 256, 16 tokens, one sequence per rank, fp16, 3 steps) with `--trace`, once with the
defaults (--prefetch 1 --overlap on) and once with --prefetch 0 --overlap off. The data is rank
0's spans of the last step, as the trace records them: compute spans ("forward h.0": from the
acquire's return to the release of the unit) and blocked spans ("wait all_gather h.1",
"wait reduce h.0"). The trace does not record when a gather is issued; the figure places it by
the prefetch rule of schedule/gather_window.h (at the i-th acquire the gathers up to the
(i + prefetch)-th are issued), so a unit's gathered buffer lives from the acquire that issued
its gather to the end of its compute span. Times differ from run to run: the check compares the
spans' names and order, and keeps the committed times.
"""
import figlib as fl

NAME = "zero3-gather-timeline"
CHAPTER = "09-zero-3-tuning"
TIMED = True

MODEL = ["--stage", "3", "--world-size", "2", "--layers", "4", "--heads", "4", "--width", "256", "--context", "16",
         "--precision", "fp16", "--optimizer", "adamw", "--global-batch", "2", "--micro-batch", "1", "--steps", "3",
         "--warmup-steps", "0", "--eval-every", "0"]
CONFIGS = [("--prefetch 1 --overlap on (defaults)", ["--prefetch", "1", "--overlap", "on"], 1),
           ("--prefetch 0 --overlap off", ["--prefetch", "0", "--overlap", "off"], 0)]


def last_step(spans):
    """The spans of the last step, before its optimizer span, with times from the step's start."""
    opt = [i for i, e in enumerate(spans) if e["cat"] == "optimizer"]
    if len(opt) < 2:
        raise fl.FigureError("the trace holds fewer than two steps")
    step = spans[opt[-2] + 1:opt[-1]]
    t0 = min(e["start_ms"] for e in step)
    return [{"track": "compute" if e["cat"] == "compute" else "blocked", "name": e["name"],
             "start_ms": fl.ms(e["start_ms"] - t0), "dur_ms": fl.ms(e["dur_ms"])} for e in step]


def collect(run):
    configs = []
    for label, flags, prefetch in CONFIGS:
        _, trace = run.zero_train(MODEL + flags, trace=True)
        spans = last_step(fl.trace_spans(trace, 0))
        try:
            gathers(spans, prefetch)
        except ValueError as e:
            raise fl.FigureError(f"{label}: the trace does not pair every gather with a compute span: {e}")
        configs.append({"label": label, "prefetch": prefetch, "spans": spans})
    return {"command": "zero-train " + " ".join(MODEL) + " [--prefetch 0 --overlap off] --trace TRACE",
            "rank": 0, "step": 3, "configs": configs}


def gathers(spans, prefetch):
    """Each gathered unit's life: [(unit, issued, ready, in use from, released)] in acquire order."""
    waits = [e for e in spans if e["name"].startswith("wait all_gather ")]
    computes = [e for e in spans if e["track"] == "compute"]
    if len(waits) != len(computes):
        raise ValueError(f"{len(waits)} gathers but {len(computes)} compute spans")
    out = []
    for k, (w, c) in enumerate(zip(waits, computes)):
        issued = waits[max(0, k - prefetch)]["start_ms"]
        out.append((c["name"].split()[1], issued, w["start_ms"] + w["dur_ms"], c["start_ms"],
                    c["start_ms"] + c["dur_ms"]))
    return out


def _label(ax, x0, x1, y, text, colour="black", size=7.5):
    if fl.fits(text, x1 - x0, ax.get_xlim()[1], 0.83, size):
        ax.text((x0 + x1) / 2, y, text, ha="center", va="center", fontsize=size, color=colour)


def draw(data):
    configs = data["configs"]
    fig = fl.new_figure(6.2)
    end = max(e["start_ms"] + e["dur_ms"] for c in configs for e in c["spans"])
    xmax = end * 1.02
    for p, cfg in enumerate(configs):
        ax = fig.add_axes([0.15, 0.6 - p * 0.42, 0.83, 0.3])
        ax.set_xlim(0, xmax)
        spans = cfg["spans"]
        life = gathers(spans, cfg["prefetch"])
        # lanes, top to bottom: compute, blocked, then the gathered buffers (a row per buffer alive at once)
        rows = []  # end time of each buffer row
        placed = []
        for g in life:
            for i, free_at in enumerate(rows):
                if free_at <= g[1]:
                    rows[i] = g[4]
                    placed.append(i)
                    break
            else:
                rows.append(g[4])
                placed.append(len(rows) - 1)
        lanes = 2 + len(rows)
        ax.set_ylim(lanes - 0.35, -0.65)
        for e in spans:
            x0, w = e["start_ms"], e["dur_ms"]
            if e["track"] == "compute":
                backward = e["name"].startswith("backward")
                ax.barh(0, w, left=x0, height=0.7, color=fl.BACKWARD if backward else fl.FORWARD, edgecolor="white",
                        linewidth=0.5)
                _label(ax, x0, x0 + w, 0, e["name"].split()[1], "white" if backward else "black")
            else:
                gather = e["name"].startswith("wait all_gather")
                ax.barh(1, max(w, xmax * 0.0015), left=x0, height=0.7, color=fl.WAITING if gather else fl.REDUCING,
                        edgecolor="none")
        for (unit, issued, ready, used, released), row in zip(life, placed):
            y = 2 + row
            ax.barh(y, ready - issued, left=issued, height=0.62, color="white", edgecolor=fl.C["purple"],
                    hatch="////", linewidth=0.6)
            ax.barh(y, released - used, left=used, height=0.62, color=fl.C["purple"], edgecolor="white",
                    linewidth=0.5)
            _label(ax, used, released, y, unit, size=7)
        ax.set_yticks(range(lanes), ["compute", "blocked"] + [f"gathered buffer {i + 1}" for i in range(len(rows))],
                      fontsize=9)
        ax.tick_params(axis="y", length=0)
        ax.spines["left"].set_visible(False)
        ax.xaxis.grid(True)
        ax.set_axisbelow(True)
        blocked = sum(e["dur_ms"] for e in spans if e["track"] == "blocked")
        span = max(e["start_ms"] + e["dur_ms"] for e in spans)
        ax.set_title(f"{cfg['label']}: forward + backward {span:.0f} ms, blocked {blocked:.0f} ms",
                     fontsize=10, loc="left")
        if p == len(configs) - 1:
            ax.set_xlabel(f"ms since the step began (rank {data['rank']}, step {data['step']} of a run at N = 2)")
    handles = [fl.swatch("forward of a unit", color=fl.FORWARD),
               fl.swatch("backward of a unit", color=fl.BACKWARD),
               fl.swatch("blocked: all-gather", color=fl.WAITING),
               fl.swatch("blocked: reduce-scatter", color=fl.REDUCING),
               fl.swatch("gathered unit: issued, in flight", facecolor="white", edgecolor=fl.C["purple"],
                         hatch="////"),
               fl.swatch("gathered unit: in use", color=fl.C["purple"])]
    fig.legend(handles=handles, loc="lower center", ncol=3, bbox_to_anchor=(0.5, 0.005), fontsize=8.5)
    fig.suptitle("ZeRO-3: every unit is all-gathered before its use and released after it",
                 x=0.5, y=0.985, fontsize=12, fontweight="bold")
    return fig
