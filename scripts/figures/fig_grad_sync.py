"""scripts/figures/fig_grad_sync.py — chapter 6: the two gradient schedules, `--grad-sync step`
and `--grad-sync micro-batch`, as ranks × micro-steps.

Draws, for N = 4 ranks with A = 2 micro-batches each (M = 8, stage 1, one step), which global
micro-batch m every rank runs at each micro-step and where the gradient reductions fall:
  step         rank r runs m = r·A + j (contiguous), sums its own A micro-batches, and the ranks
               reduce once, after the last micro-step;
  micro-batch  rank r runs m = j·N + r (strided), and the ranks reduce after every micro-step.
Where the reductions fall, how many passes each micro-step runs and the reduce-scatter counts come
from real runs: `zero-train --stage 1 --world-size 4 --global-batch 8 --micro-batch 1
--grad-sync G --trace` (each rank's forward and backward spans and its `wait reduce` spans, in
order; no times) and the run's `comm` counters. The trace does not name micro-batches: m is
zero/micro_batch_order.h's global_micro_batch, the rule the engine feeds its batches by.
"""
import figlib as fl

NAME = "grad-sync-schedules"
CHAPTER = "06-zero-1"

N, A = 4, 2
ARGS = ["--stage", "1", "--world-size", str(N), "--ranks-as", "threads", "--global-batch", str(N * A),
        "--micro-batch", "1", "--steps", "1", "--warmup-steps", "0", "--eval-every", "0"]


def global_micro_batch(grad_sync, r, j):
    """zero/micro_batch_order.h: strided when every micro-batch is reduced, else contiguous."""
    return j * N + r if grad_sync == "micro-batch" else r * A + j


def phases(spans):
    """One rank's step, from its trace spans in order: per micro-step the passes it ran and the
    reductions it waited for during or after them (until the optimizer)."""
    steps = []
    last = None
    for e in spans:
        if e["cat"] == "optimizer":
            break
        kind = e["name"].split()[0]
        if e["cat"] == "compute":
            if kind == "forward" and last != "forward":
                steps.append({"passes": 0, "reduces": []})
            steps[-1]["passes"] += 1
            last = kind
        elif e["name"].startswith("wait reduce "):
            steps[-1]["reduces"].append(e["name"][len("wait reduce "):])
    return steps


def collect(run):
    schedules = []
    for g in ("step", "micro-batch"):
        summary, trace = run.zero_train(ARGS + ["--grad-sync", g], trace=True)
        ranks = []
        for r in range(N):
            steps = phases(fl.trace_spans(trace, r))
            if len(steps) != A:
                raise fl.FigureError(f"--grad-sync {g}: rank {r}'s trace shows {len(steps)} micro-steps, not {A}")
            ranks.append({"rank": r, "micro_steps": [
                {"j": j, "m": global_micro_batch(g, r, j), "passes": s["passes"], "reduced_units": s["reduces"]}
                for j, s in enumerate(steps)]})
        comm = summary["comm"]
        schedules.append({
            "grad_sync": g,
            "order": "m = j*N + r" if g == "micro-batch" else "m = r*A + j",
            "reduce_scatter_calls_per_step": comm["calls_per_step"]["reduce_scatter"],
            "reduce_scatter_bytes_per_step": comm["bytes_sent_per_step"]["reduce_scatter"],
            "ranks": ranks,
        })
    return {"command": "zero-train " + " ".join(ARGS) + " --grad-sync G --trace TRACE --summary-json SUMMARY",
            "ranks": N, "micro_batches_per_rank": A, "schedules": schedules}


def _tree(ms):
    """The canonical tree over a power-of-two run of micro-batches, as text."""
    if len(ms) == 1:
        return f"m{ms[0]}"
    h = len(ms) // 2
    return f"({_tree(ms[:h])}+{_tree(ms[h:])})"


def draw(data):
    n, a = data["ranks"], data["micro_batches_per_rank"]
    fig = fl.new_figure(5.5)
    colours = [fl.C["sky"], fl.C["green"], fl.C["purple"], fl.C["yellow"]]  # not the reductions' orange
    # columns: micro-step 0, its reduction, micro-step 1, its reduction, ...
    cell, gap, red = 1.0, 0.08, 0.46
    col_x = [j * (cell + gap + red + 0.2) for j in range(a)]
    width = a * (cell + gap + red + 0.2)
    for p, sched in enumerate(data["schedules"]):
        g = sched["grad_sync"]
        bottom = 0.53 - p * 0.45
        ax = fig.add_axes([0.09, bottom, 0.66, 0.33])
        ax.set_xlim(-0.02, width)
        ax.set_ylim(n + 0.02, -0.3)
        ax.axis("off")
        if g == "step":
            title = f"--grad-sync step: rank r runs m = r·A + j and first sums its own {a}; one reduction per step"
        else:
            title = "--grad-sync micro-batch: rank r runs m = j·N + r; a reduction after every micro-step"
        fig.text(0.02, bottom + 0.355, title, ha="left", va="bottom", fontsize=10, fontweight="bold")
        for j in range(a):
            ax.text(col_x[j] + cell / 2, -0.06, f"micro-step {j}", ha="center", va="bottom", fontsize=9)
        reduced_after = {}
        for rk in sched["ranks"]:
            r = rk["rank"]
            ax.text(-0.05, r + 0.5, f"rank {r}", ha="right", va="center", fontsize=10)
            for st in rk["micro_steps"]:
                j, m = st["j"], st["m"]
                group = r if g == "step" else j  # the micro-batches summed first, together
                x0 = col_x[j]
                ax.add_patch(fl.patches.FancyBboxPatch(
                    (x0 + 0.03, r + 0.08), cell - 0.06, 0.84, boxstyle="round,pad=0,rounding_size=0.05",
                    facecolor=colours[group % len(colours)], edgecolor="white"))
                ax.text(x0 + cell / 2, r + 0.4, f"m{m}", ha="center", va="center", fontsize=11, fontweight="bold")
                ax.text(x0 + cell / 2, r + 0.72, "forward + backward", ha="center", va="center", fontsize=7.5)
                if st["reduced_units"]:
                    reduced_after.setdefault(j, []).append(len(st["reduced_units"]))
        for j, counts in reduced_after.items():
            x0 = col_x[j] + cell + gap
            ms = sorted(st["m"] for rk in sched["ranks"] for st in rk["micro_steps"] if g == "step" or st["j"] == j)
            ax.add_patch(fl.patches.FancyBboxPatch(
                (x0, 0.08), red, n - 0.16, boxstyle="round,pad=0,rounding_size=0.05",
                facecolor=fl.REDUCING, edgecolor=fl.C["black"], linewidth=0.8))
            ax.text(x0 + red / 2, n / 2, f"reduce-scatter, {max(counts)} units\nsums m{ms[0]} .. m{ms[-1]}",
                    ha="center", va="center", fontsize=8, rotation=90)
        fig.text(0.78, bottom + 0.26, f"reduce-scatter calls\nper step: {sched['reduce_scatter_calls_per_step']}\n\n"
                 f"bytes each rank sends\nin them: {sched['reduce_scatter_bytes_per_step']:,}",
                 ha="left", va="top", fontsize=9)
    fig.suptitle(f"Which micro-batch m each rank runs, and when gradients are reduced (N = {n}, A = {a})",
                 x=0.5, y=0.985, fontsize=12, fontweight="bold")
    fig.text(0.5, 0.045, "Cells of one colour are summed together first. One device adds "
             + _tree(list(range(n * a))) + ";", ha="center", va="center", fontsize=8.5, color="#333333")
    fig.text(0.5, 0.015, "each colour is one of its subtrees, so both schedules add the same numbers in the same "
             "order (chapter 6).", ha="center", va="center", fontsize=8.5, color="#333333")
    return fig
