"""scripts/figures/fig_pipeline_schedules.py — chapter 15: the pipeline schedules GPipe and 1F1B
as stages × time, measured.

From real runs: `zero-train --world-size 4 --pp-size 4 --pp-schedule S` (ranks as processes, 4
blocks of width 256, one block per stage, M = 8 micro-batches of 2 sequences, 2 steps) with
`--trace`. The data is every stage's pass spans of the second step ("forward m", "backward m",
category `pass`), times from the step's first pass. The figure draws them as bars, and in each
title the measured bubble 1 − Σ busy / (P · makespan) (bench/pipeline/bubble.py's definition)
beside the closed form (P − 1)/(M + P − 1). With 4 stages on a 2-core machine at most two stages
compute at once, so the passes stretch; the order of the passes is the schedule's. Times differ
from run to run: the check compares every stage's passes and their order, and keeps the
committed times.
"""
import figlib as fl

NAME = "pipeline-schedules"
CHAPTER = "15-pipeline"
TIMED = True

P, M, B = 4, 8, 2
MODEL = ["--world-size", str(P), "--pp-size", str(P), "--layers", "4", "--heads", "4", "--width", "256",
         "--context", "32", "--micro-batch", str(B), "--global-batch", str(M * B), "--steps", "2",
         "--warmup-steps", "0", "--eval-every", "0"]


def collect(run):
    schedules = []
    for sched in ("gpipe", "1f1b"):
        _, trace = run.zero_train(MODEL + ["--pp-schedule", sched], trace=True)
        stages = []
        for s in range(P):
            passes = [e for e in fl.trace_spans(trace, s) if e["cat"] == "pass"]
            if len(passes) != 2 * 2 * M:
                raise fl.FigureError(f"{sched}: stage {s}'s trace holds {len(passes)} passes, not {4 * M}")
            stages.append(passes[2 * M:])  # the second step
        t0 = min(e["start_ms"] for st in stages for e in st)
        schedules.append({"schedule": sched, "stages": [
            [{"pass": e["name"], "start_ms": fl.ms(e["start_ms"] - t0), "dur_ms": fl.ms(e["dur_ms"])} for e in st]
            for st in stages]})
    return {"command": "zero-train " + " ".join(MODEL) + " --pp-schedule S --trace TRACE",
            "stages": P, "micro_batches": M, "step": 2, "schedules": schedules}


def draw(data):
    p, m = data["stages"], data["micro_batches"]
    fig = fl.new_figure(5.4)
    end = max(e["start_ms"] + e["dur_ms"] for sc in data["schedules"] for st in sc["stages"] for e in st)
    closed = (p - 1) / (m + p - 1)
    for k, sc in enumerate(data["schedules"]):
        ax = fig.add_axes([0.1, 0.55 - k * 0.42, 0.88, 0.31])
        busy = 0.0
        first = min(e["start_ms"] for st in sc["stages"] for e in st)
        last = max(e["start_ms"] + e["dur_ms"] for st in sc["stages"] for e in st)
        for s, st in enumerate(sc["stages"]):
            for e in st:
                kind, micro = e["pass"].split()
                backward = kind == "backward"
                busy += e["dur_ms"]
                ax.barh(s, e["dur_ms"], left=e["start_ms"], height=0.72, color=fl.BACKWARD if backward else fl.FORWARD,
                        edgecolor="white", linewidth=0.6)
                if fl.fits(micro, e["dur_ms"], end * 1.01, 0.88, 7.5):
                    ax.text(e["start_ms"] + e["dur_ms"] / 2, s, micro, ha="center", va="center", fontsize=7.5,
                            color="white" if backward else "black")
        bubble = 1 - busy / (p * (last - first))
        ax.set_xlim(0, end * 1.01)
        ax.set_ylim(p - 0.4, -0.6)
        ax.set_yticks(range(p), [f"stage {s}" for s in range(p)])
        ax.tick_params(axis="y", length=0)
        ax.spines["left"].set_visible(False)
        ax.xaxis.grid(True)
        ax.set_axisbelow(True)
        name = {"gpipe": "GPipe: all forwards, then all backwards",
                "1f1b": "1F1B: warm-up forwards, then one forward / one backward"}[sc["schedule"]]
        ax.set_title(f"{name}   (idle: {bubble:.2f} measured, {closed:.2f} = (P−1)/(M+P−1))", fontsize=10,
                     loc="left")
        if k == len(data["schedules"]) - 1:
            ax.set_xlabel(f"ms since the step's first pass (step {data['step']}; P = {p} stages as processes on "
                          f"2 cores, M = {m})")
    handles = [fl.swatch("forward of micro-batch m (the number in the bar)", color=fl.FORWARD),
               fl.swatch("backward of micro-batch m", color=fl.BACKWARD)]
    fig.legend(handles=handles, loc="lower center", ncol=2, bbox_to_anchor=(0.5, 0.0), fontsize=9)
    fig.suptitle(f"Pipeline schedules, measured: {p} stages × {m} micro-batches per step",
                 x=0.5, y=0.985, fontsize=12, fontweight="bold")
    return fig
