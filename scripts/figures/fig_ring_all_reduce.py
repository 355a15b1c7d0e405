"""scripts/figures/fig_ring_all_reduce.py — chapter 4: all-reduce on a ring of N = 4 as a
reduce-scatter followed by an all-gather, step by step.

Draws a ranks × steps grid: at each of the 2(N − 1) = 6 steps every rank sends one chunk to its
right neighbour; a cell names the chunk, where it goes and the values it carries. The data is the
ring's closed form, with the chapter's example buffers (rank r holds x_r[i] = 100(r + 1) + i,
8 elements, chunk c = elements 2c and 2c + 1):
  reduce-scatter step t = 0 .. N−2: rank r sends chunk (r − t − 1) mod N, the partial sum of
    t + 1 ranks' copies; the receiver adds its own copy. After N − 1 steps rank r holds the full
    sum of chunk r — the chapter's "rank r owns slice r";
  all-gather step t = 0 .. N−2: rank r sends chunk (r − t) mod N, a finished sum, which the
    receiver keeps and passes on at the next step.
No program runs: the rules are the ring's, and the values are sums the reader can redo.
"""
import figlib as fl

NAME = "ring-all-reduce"
CHAPTER = "04-collectives"

N = 4
ELEMENTS = 8


def collect(run):
    per = ELEMENTS // N
    x = [[100 * (r + 1) + i for i in range(ELEMENTS)] for r in range(N)]

    def chunk(values, c):
        return values[c * per:(c + 1) * per]

    holds = [[list(chunk(x[r], c)) for c in range(N)] for r in range(N)]  # rank r's copy of chunk c
    terms = [[[r] for c in range(N)] for r in range(N)]  # ranks whose copies are summed in it
    steps = []
    for phase in ("reduce-scatter", "all-gather"):
        for t in range(N - 1):
            sends = []
            for r in range(N):
                c = (r - t - 1) % N if phase == "reduce-scatter" else (r - t) % N
                sends.append({"rank": r, "to": (r + 1) % N, "chunk": c, "values": list(holds[r][c]),
                              "terms": sorted(terms[r][c])})
            for s in sends:  # every rank sends before any receives: one step of the ring
                q, c = s["to"], s["chunk"]
                if phase == "reduce-scatter":
                    holds[q][c] = [a + b for a, b in zip(holds[q][c], s["values"])]
                    terms[q][c] = terms[q][c] + s["terms"]
                else:
                    holds[q][c] = list(s["values"])
                    terms[q][c] = list(s["terms"])
            steps.append({"phase": phase, "step": t + 1, "sends": sends})
    total = [sum(x[r][i] for r in range(N)) for i in range(ELEMENTS)]
    return {
        "rule": "reduce-scatter step t: rank r sends chunk (r - t - 1) mod N to rank r + 1, which adds it; "
                "all-gather step t: rank r sends chunk (r - t) mod N, which rank r + 1 keeps (t = 0 .. N - 2)",
        "ranks": N, "elements": ELEMENTS, "x": x,
        "steps": steps,
        "result": holds,
        "column_sums": total,
        "chunks_sent_per_rank": 2 * (N - 1),
    }


def draw(data):
    n = data["ranks"]
    steps = data["steps"]
    fig = fl.new_figure(4.1)
    ax = fig.add_axes([0.085, 0.1, 0.9, 0.75])
    ax.set_xlim(-0.05, len(steps) + 0.05)
    ax.set_ylim(n + 0.05, -0.75)
    ax.axis("off")
    chunk_colours = [fl.C["sky"], fl.C["orange"], fl.C["green"], fl.C["purple"]]
    for j, s in enumerate(steps):
        ax.text(j + 0.5, -0.12, f"step {s['step']}", ha="center", va="bottom", fontsize=9)
        for e in s["sends"]:
            r, c = e["rank"], e["chunk"]
            done = s["phase"] == "all-gather"
            box = fl.patches.FancyBboxPatch(
                (j + 0.06, r + 0.08), 0.88, 0.84, boxstyle="round,pad=0,rounding_size=0.06",
                facecolor=chunk_colours[c], edgecolor=fl.C["black"] if done else "white",
                linewidth=1.0, alpha=1.0 if done else 0.55 + 0.15 * len(e["terms"]))
            ax.add_patch(box)
            ax.text(j + 0.5, r + 0.32, f"chunk {c} → r{e['to']}", ha="center", va="center", fontsize=9,
                    fontweight="bold")
            vals = " ".join(str(v) for v in e["values"])
            what = ("sum of " + "+".join(f"x{t}" for t in e["terms"])) if not done else "final sum"
            ax.text(j + 0.5, r + 0.57, vals, ha="center", va="center", fontsize=8.5)
            ax.text(j + 0.5, r + 0.79, what, ha="center", va="center", fontsize=7.5, color="#333333")
    for r in range(n):
        ax.text(-0.08, r + 0.5, f"rank {r}", ha="right", va="center", fontsize=10)
    half = len(steps) // 2
    for label, x0 in (("reduce-scatter: the receiver adds its own copy", 0),
                      ("all-gather: the receiver keeps the finished chunk", half)):
        ax.annotate("", xy=(x0 + 0.04, -0.45), xytext=(x0 + half - 0.04, -0.45),
                    arrowprops=dict(arrowstyle="-", color=fl.C["grey"], linewidth=1.0))
        ax.text(x0 + half / 2, -0.52, label, ha="center", va="bottom", fontsize=9)
    ax.plot([half, half], [-0.4, n], color=fl.C["grey"], linewidth=1.0, linestyle=(0, (3, 2)))
    fig.suptitle(f"All-reduce on a ring of N = {n} = reduce-scatter + all-gather: {2 * (n - 1)} steps",
                 x=0.5, y=0.975, fontsize=12, fontweight="bold")
    fig.text(0.5, 0.035, f"Rank r starts with x_r[i] = 100(r + 1) + i, i = 0 .. {data['elements'] - 1}; chunk c is "
             f"elements {data['elements'] // n}c .. {data['elements'] // n}c + {data['elements'] // n - 1}. "
             "Each cell: what rank r sends to r + 1 at that step.",
             ha="center", va="center", fontsize=8.5, color="#333333")
    return fig
