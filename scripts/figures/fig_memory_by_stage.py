"""scripts/figures/fig_memory_by_stage.py — chapter 3: model-state memory per rank by ZeRO stage,
the ZeRO paper's Figure 1.

Draws, left, the paper's example (ψ = 7.5e9, N_d = 64, Adam's K = 12) as stacked bars of 16-bit
parameters, 16-bit gradients and optimizer states for the baseline (stage 0), P_os, P_os+g and
P_os+g+p, from `zero-plan --params 7.5e9 --world-size 64 --stage S --json` (the closed form);
right, the same four stages measured on the chapter's small model (ψ = 102,976, N = 4, fp16,
AdamW, --reduce-dtype compute, one step): rank 0's ledger from `zero-train --summary-json`, with
zero-plan's prediction for that run marked on each bar.
"""
import figlib as fl

NAME = "memory-by-stage"
CHAPTER = "03-memory"

STAGE_LABELS = ["baseline\n(stage 0)", "P_os\n(stage 1)", "P_os+g\n(stage 2)", "P_os+g+p\n(stage 3)"]
SMALL = ["--world-size", "4", "--ranks-as", "threads", "--precision", "fp16", "--optimizer", "adamw",
         "--reduce-dtype", "compute", "--steps", "1", "--warmup-steps", "0", "--eval-every", "0",
         "--global-batch", "4", "--micro-batch", "1"]
PAPER = ["--params", "7.5e9", "--world-size", "64"]


def collect(run):
    paper = []
    for s in range(4):
        plan = run.zero_plan(PAPER + ["--stage", str(s)])
        ms = plan["model_states"]
        paper.append({"stage": s, "params": ms["params"], "grads": ms["grads"], "optimizer": ms["optimizer"],
                      "total": ms["total"]})
    measured = []
    for s in range(4):
        args = ["--stage", str(s)] + SMALL
        summary, _ = run.zero_train(args)
        plan = run.zero_plan(args)
        r0 = summary["memory"]["per_rank"][0]
        cat = r0["by_category"]
        predicted = plan["ranks"][0]["device"]
        measured.append({
            "stage": s,
            "params": cat["params"], "grads": cat["grads"], "optimizer": cat["master"] + cat["optimizer"],
            "padding": r0["padding_bytes"], "model_states": r0["model_states_bytes"],
            "predicted_model_states": plan["ranks"][0]["model_states_bytes"],
            "predicted_params": predicted["params"], "predicted_grads": predicted["grads"],
            "predicted_optimizer": predicted["master"] + predicted["optimizer"],
        })
    return {
        "paper": {"command": "zero-plan " + " ".join(PAPER) + " --stage S --json PLAN", "psi": 7.5e9,
                  "dp_size": 64, "k": 12, "stages": paper},
        "measured": {"command": "zero-train --stage S " + " ".join(SMALL) + " --summary-json SUMMARY",
                     "prediction": "zero-plan with the same flags", "psi": summary["param_count"], "dp_size": 4,
                     "rank": 0, "stages": measured},
    }


def _stack(ax, rows, scale, width=0.62):
    xs = range(len(rows))
    bottom = [0.0] * len(rows)
    for key, colour, label in (("params", fl.PARAMS, "16-bit parameters"), ("grads", fl.GRADS, "16-bit gradients"),
                               ("optimizer", fl.OPTIMIZER, "optimizer states (FP32 master, m, v)")):
        vals = [r[key] / scale for r in rows]
        ax.bar(xs, vals, width, bottom=bottom, color=colour, label=label, edgecolor="white", linewidth=0.6)
        bottom = [b + v for b, v in zip(bottom, vals)]
    return bottom


def draw(data):
    fig = fl.new_figure(4.1)
    gs = fig.add_gridspec(1, 2, width_ratios=[1.25, 1], left=0.08, right=0.985, top=0.8, bottom=0.17, wspace=0.3)
    ax = fig.add_subplot(gs[0])
    paper = data["paper"]
    tops = _stack(ax, paper["stages"], 1e9)
    for x, t in enumerate(tops):
        ax.text(x, t + 2, f"{t:.3g} GB", ha="center", va="bottom", fontsize=9, fontweight="bold")
    ax.set_xticks(range(4), STAGE_LABELS)
    ax.set_ylabel("GB per rank (1 GB = 10⁹ B)")
    ax.set_ylim(0, 135)
    ax.yaxis.grid(True)
    ax.set_axisbelow(True)
    ax.set_title(f"The paper's example: ψ = {paper['psi'] / 1e9:g}B, N_d = {paper['dp_size']}, "
                 f"K = {paper['k']}", fontsize=10)

    ax2 = fig.add_subplot(gs[1])
    m = data["measured"]
    tops = _stack(ax2, m["stages"], 1e3)
    for x, r in enumerate(m["stages"]):
        pred = r["predicted_model_states"] / 1e3
        ax2.plot([x - 0.38, x + 0.38], [pred, pred], color=fl.C["black"], linewidth=1.4,
                 label="zero-plan's prediction" if x == 0 else None)
        ax2.text(x, max(tops[x], pred) + 45, f"{r['model_states'] / 1e3:,.0f} kB", ha="center", va="bottom", fontsize=9,
                 fontweight="bold")
    ax2.set_xticks(range(4), STAGE_LABELS)
    ax2.set_ylabel("kB per rank (1 kB = 10³ B)")
    ax2.set_ylim(0, 1950)
    ax2.yaxis.grid(True)
    ax2.set_axisbelow(True)
    ax2.set_title(f"Measured: ψ = {m['psi']:,}, N = {m['dp_size']}, rank {m['rank']}", fontsize=10)

    handles, labels = ax2.get_legend_handles_labels()
    handles, labels = handles[1:] + handles[:1], labels[1:] + labels[:1]  # the prediction last
    fig.legend(handles, labels, loc="upper center", ncol=4, bbox_to_anchor=(0.5, 0.925), fontsize=9)
    fig.suptitle("Model states per rank, by ZeRO stage", x=0.5, y=0.985, fontsize=12, fontweight="bold")
    return fig
