"""scripts/figures/fig_precision_curves.py — chapter 2: the training loss of the same run in fp32,
fp16 and bf16, and how far the 16-bit runs are from fp32.

From real runs, the chapter's settings: `zero-train --digits 1 --steps 150 --global-batch 16
--warmup-steps 10 --precision P` for P = fp32, fp16, bf16 (seed 1234, the canonical GEMM: the
same bits on every x86-64 CPU). The data is every step's loss from `--summary-json`, the
held-out loss at the end and the skipped-step count. Draws the three curves, and below them each
16-bit run's loss minus fp32's, step by step.
"""
import figlib as fl

NAME = "precision-loss-curves"
CHAPTER = "02-mixed-precision"

SETTINGS = ["--digits", "1", "--steps", "150", "--global-batch", "16", "--warmup-steps", "10"]
PRECISIONS = ["fp32", "fp16", "bf16"]


def collect(run):
    summaries = run.zero_train_many([SETTINGS + ["--precision", p] for p in PRECISIONS])
    runs = {}
    for p, s in zip(PRECISIONS, summaries):
        runs[p] = {"loss": [st["loss"] for st in s["steps"]],
                   "skipped_steps": sum(1 for st in s["steps"] if st["skipped"]),
                   "heldout_loss": s["evals"][-1]["loss"]}
    return {"command": "zero-train " + " ".join(SETTINGS) + " --precision P --summary-json SUMMARY", "runs": runs}


def draw(data):
    runs = data["runs"]
    fig = fl.new_figure(4.6)
    gs = fig.add_gridspec(2, 1, height_ratios=[2.1, 1], left=0.1, right=0.98, top=0.86, bottom=0.11, hspace=0.12)
    ax = fig.add_subplot(gs[0])
    dx = fig.add_subplot(gs[1], sharex=ax)
    steps = range(1, len(runs["fp32"]["loss"]) + 1)
    styles = {"fp32": dict(linewidth=2.4), "fp16": dict(linewidth=1.4, linestyle=(0, (5, 2))),
              "bf16": dict(linewidth=1.4, linestyle=(0, (1, 1.5)))}
    for p, r in runs.items():
        ax.plot(steps, r["loss"], color=fl.PRECISION[p], label=f"{p}: {r['loss'][-1]:.6f} at step {len(r['loss'])}",
                **styles[p])
    ax.set_ylabel("training loss")
    ax.yaxis.grid(True)
    ax.legend(loc="upper right", fontsize=9, title="final loss", title_fontsize=9)
    ax.tick_params(labelbottom=False)
    base = runs["fp32"]["loss"]
    for p in ("fp16", "bf16"):
        diff = [a - b for a, b in zip(runs[p]["loss"], base)]
        dx.plot(steps, diff, color=fl.PRECISION[p], linewidth=1.2, label=f"{p} − fp32")
    dx.axhline(0, color=fl.C["black"], linewidth=0.8)
    dx.set_ylabel("loss − fp32's")
    dx.set_xlabel("optimizer step")
    dx.yaxis.grid(True)
    dx.legend(loc="upper left", ncol=2, fontsize=8.5)
    dx.set_xlim(1, len(base))
    fig.suptitle("The same run in fp32, fp16 and bf16: the three curves lie on top of each other",
                 x=0.5, y=0.975, fontsize=12, fontweight="bold")
    fig.text(0.5, 0.905, "1-digit addition, seed 1234, 150 steps; skipped steps: "
             + ", ".join(f"{p} {r['skipped_steps']}" for p, r in runs.items()),
             ha="center", va="center", fontsize=9, color="#333333")
    return fig
