"""scripts/figures/fig_stall.py — chapter 2: the stall, what the FP32 master weights are for.

From real runs, the chapter's documented settings: `zero-train --digits 1 --steps 150
--global-batch 16 --warmup-steps 10 --precision bf16 --lr 1e-4 --min-lr 1e-4`, with and without
`--no-master-weights`. The data is every step's loss, the held-out loss at the end, and the
summary's `frozen_fraction` (16-bit elements unchanged by the last step) and
`frozen_window_fraction` (unchanged over the last `frozen_window_steps` steps). Draws the two loss
curves, and the two frozen fractions of each run as bars.
"""
import figlib as fl

NAME = "stall"
CHAPTER = "02-mixed-precision"

SETTINGS = ["--digits", "1", "--steps", "150", "--global-batch", "16", "--warmup-steps", "10", "--precision", "bf16",
            "--lr", "1e-4", "--min-lr", "1e-4"]
RUNS = [("with master", []), ("without master", ["--no-master-weights"])]


def collect(run):
    summaries = run.zero_train_many([SETTINGS + flags for _, flags in RUNS])
    out = {}
    for (label, _), s in zip(RUNS, summaries):
        out[label] = {"loss": [st["loss"] for st in s["steps"]], "heldout_loss": s["evals"][-1]["loss"],
                      "frozen_fraction": s["frozen_fraction"], "frozen_window_fraction": s["frozen_window_fraction"],
                      "frozen_window_steps": s["frozen_window_steps"]}
    return {"command": "zero-train " + " ".join(SETTINGS) + " [--no-master-weights] --summary-json SUMMARY",
            "params": summaries[0]["param_count"], "runs": out}


COLOURS = {"with master": fl.C["blue"], "without master": fl.C["vermillion"]}


def draw(data):
    runs = data["runs"]
    fig = fl.new_figure(3.9)
    gs = fig.add_gridspec(1, 2, width_ratios=[1.6, 1], left=0.085, right=0.985, top=0.8, bottom=0.14, wspace=0.28)
    ax = fig.add_subplot(gs[0])
    for label, r in runs.items():
        steps = range(1, len(r["loss"]) + 1)
        ax.plot(steps, r["loss"], color=COLOURS[label], label=f"{label}: {r['loss'][-1]:.3f} at step {len(r['loss'])}",
                linewidth=1.6 if label == "with master" else 1.8,
                linestyle="-" if label == "with master" else (0, (4, 1.5)))
    ax.set_xlabel("optimizer step")
    ax.set_ylabel("training loss")
    ax.set_xlim(1, len(next(iter(runs.values()))["loss"]))
    ax.yaxis.grid(True)
    ax.legend(loc="upper right", fontsize=9)
    ax.set_title("bf16, constant lr = 1e-4", fontsize=10)

    bx = fig.add_subplot(gs[1])
    window = next(iter(runs.values()))["frozen_window_steps"]
    groups = ["by the last step", f"over the last {window} steps"]
    w = 0.36
    for k, (label, r) in enumerate(runs.items()):
        vals = [100 * r["frozen_fraction"], 100 * r["frozen_window_fraction"]]
        xs = [i + (k - 0.5) * w for i in range(len(groups))]
        bx.bar(xs, vals, w, color=COLOURS[label], label=label, edgecolor="white",
               hatch=None if label == "with master" else "///")
        for x, v in zip(xs, vals):
            bx.text(x, v + 1.2, f"{v:.1f}%", ha="center", va="bottom", fontsize=8.5)
    bx.set_xticks(range(len(groups)), groups)
    bx.set_ylabel("16-bit elements unchanged (%)")
    bx.set_ylim(0, 75)
    bx.yaxis.grid(True)
    bx.set_axisbelow(True)
    bx.set_title(f"of ψ = {data['params']:,} parameters", fontsize=10)
    bx.legend(loc="upper right", fontsize=8.5)
    fig.suptitle("The stall: without an FP32 master, updates below half a spacing are lost",
                 x=0.5, y=0.975, fontsize=12, fontweight="bold")
    return fig
