"""scripts/figures/fig_megatron_mlp.py — chapter 11: Megatron-LM's tensor-parallel MLP on 2
model-parallel ranks, with its conjugate operators f and g.

Draws the block's MLP as boxes and arrows: the input X (replicated) passes f, each rank computes
GeLU(X·A_r) with its columns of A (c_fc, column-parallel: its share of the 4C hidden units) and
then Y_r·B_r with the matching rows of B (mlp.c_proj, row-parallel: the same hidden units as its
inputs), and g sums the partial outputs; then the replicated bias. f is
the identity forward and an all-reduce backward, g an all-reduce forward and the identity
backward (Shoeybi et al. 2019, and chapter 11's "Tensor parallelism on a DP × MP grid"). No
program runs: the data is a small description of the boxes and arrows, with the shapes computed
from the chapter's model (C = 64, the hidden layer 4C, N_m = 2).
"""
import figlib as fl

NAME = "megatron-mlp"
CHAPTER = "11-tensor-parallel"

C, N_M = 64, 2

SUB = "₀₁₂₃₄₅₆₇₈₉"


def collect(run):
    h = 4 * C
    part = h // N_M
    boxes = [
        {"id": "x", "x": 0.5, "y": 40, "w": 12, "h": 20, "kind": "tensor",
         "text": f"X\n[b·s, {C}]\nreplicated"},
        {"id": "f", "x": 15, "y": 44, "w": 6, "h": 12, "kind": "collective", "text": "f"},
        {"id": "g", "x": 81.5, "y": 44, "w": 6, "h": 12, "kind": "collective", "text": "g"},
        {"id": "z", "x": 89.5, "y": 40, "w": 10, "h": 20, "kind": "tensor",
         "text": f"Z + bias\n[b·s, {C}]\nreplicated"},
    ]
    arrows = [{"from": "x", "to": "f", "label": ""}, {"from": "g", "to": "z", "label": ""}]
    lanes = []
    for r in range(N_M):
        y = 8 + r * 52  # lane tops: rank 0 above, rank 1 below
        lo, hi = r * part, (r + 1) * part - 1
        s = SUB[r]
        lanes.append({"rank": r, "y": y - 5, "h": 34})
        boxes += [
            {"id": f"a{r}", "x": 25, "y": y, "w": 20, "h": 22, "kind": "column",
             "text": f"Y{s} = GeLU(X·A{s})\nA{s}: c_fc's hidden units\n{lo}..{hi}: [{C} × {part}]"},
            {"id": f"y{r}", "x": 47.5, "y": y + 4, "w": 8.5, "h": 14, "kind": "tensor",
             "text": f"Y{s}\n[b·s, {part}]"},
            {"id": f"b{r}", "x": 58.5, "y": y, "w": 19, "h": 22, "kind": "row",
             "text": f"Z{s} = Y{s}·B{s}\nB{s}: mlp.c_proj's inputs\n{lo}..{hi}: [{part} × {C}]"},
        ]
        arrows += [{"from": "f", "to": f"a{r}", "label": ""},
                   {"from": f"a{r}", "to": f"y{r}", "label": ""},
                   {"from": f"y{r}", "to": f"b{r}", "label": ""},
                   {"from": f"b{r}", "to": "g", "label": f"partial Z{s}"}]
    return {
        "model": {"width_C": C, "hidden_4C": h, "mp_size": N_M, "hidden_per_rank": part},
        "lanes": lanes, "boxes": boxes, "arrows": arrows,
        "operators": {
            "f": "forward: the identity (X goes to every rank); backward: all-reduce of the input gradient",
            "g": "forward: all-reduce of the partial outputs, Z = Z₀ + Z₁; backward: the identity",
        },
    }


STYLE = {
    "tensor": dict(facecolor="white", edgecolor=fl.C["black"]),
    "collective": dict(facecolor=fl.REDUCING, edgecolor=fl.C["black"]),
    "column": dict(facecolor=fl.C["sky"], edgecolor=fl.C["black"]),
    "row": dict(facecolor=fl.C["green"], edgecolor=fl.C["black"]),
}


def _edge(b, towards):
    """The point on box b's border on the way to point `towards` (left/right sides, or top/bottom)."""
    cx, cy = b["x"] + b["w"] / 2, b["y"] + b["h"] / 2
    tx, ty = towards
    if abs(tx - cx) * b["h"] >= abs(ty - cy) * b["w"]:
        return (b["x"] + b["w"] if tx > cx else b["x"]), cy + (ty - cy) * (b["w"] / 2) / max(abs(tx - cx), 1e-9)
    return cx + (tx - cx) * (b["h"] / 2) / max(abs(ty - cy), 1e-9), (b["y"] + b["h"] if ty > cy else b["y"])


def draw(data):
    fig = fl.new_figure(4.4)
    ax = fig.add_axes([0.01, 0.16, 0.98, 0.72])
    ax.set_xlim(0, 100)
    ax.set_ylim(93, 1)
    ax.axis("off")
    for lane in data["lanes"]:
        ax.add_patch(fl.patches.FancyBboxPatch((23.5, lane["y"]), 56, lane["h"],
                                               boxstyle="round,pad=0,rounding_size=1.5", facecolor="#f2f2f2",
                                               edgecolor="none"))
        top = lane["rank"] == 0  # the label on the lane's outer edge, away from the arrows
        ax.text(24.3, lane["y"] + (1.0 if top else lane["h"] - 1.0), f"model-parallel rank {lane['rank']}",
                ha="left", va="top" if top else "bottom", fontsize=8.5, color="#444444")
    boxes = {b["id"]: b for b in data["boxes"]}
    for b in data["boxes"]:
        collective = b["kind"] == "collective"
        ax.add_patch(fl.patches.FancyBboxPatch((b["x"], b["y"]), b["w"], b["h"],
                                               boxstyle="round,pad=0,rounding_size=" + ("2.5" if collective else "1"),
                                               linewidth=1.0, **STYLE[b["kind"]]))
        ax.text(b["x"] + b["w"] / 2, b["y"] + b["h"] / 2, b["text"], ha="center", va="center",
                fontsize=16 if collective else 8.5, fontweight="bold" if collective else "normal", linespacing=1.3)
    for a in data["arrows"]:
        s, t = boxes[a["from"]], boxes[a["to"]]
        sc = (s["x"] + s["w"] / 2, s["y"] + s["h"] / 2)
        tc = (t["x"] + t["w"] / 2, t["y"] + t["h"] / 2)
        start, end = _edge(s, tc), _edge(t, sc)
        ax.annotate("", xy=end, xytext=start, arrowprops=dict(arrowstyle="-|>", color=fl.C["black"], linewidth=1.0,
                                                              shrinkA=0, shrinkB=0, mutation_scale=10))
        if a["label"]:  # beside the arrow's first third, on the side away from the middle
            lx, ly = start[0] + (end[0] - start[0]) / 4, start[1] + (end[1] - start[1]) / 4
            ax.text(lx + 1.5, ly, a["label"], ha="left", va="center", fontsize=8)
    m = data["model"]
    fig.suptitle(f"Megatron's MLP on N_m = {m['mp_size']} ranks: column-parallel, then row-parallel",
                 x=0.5, y=0.975, fontsize=12, fontweight="bold")
    ops = data["operators"]
    fig.text(0.03, 0.11, "f  " + ops["f"], ha="left", va="center", fontsize=9)
    fig.text(0.03, 0.06, "g  " + ops["g"], ha="left", va="center", fontsize=9)
    handles = [fl.swatch("column-parallel (c_fc)", facecolor=fl.C["sky"], edgecolor="black"),
               fl.swatch("row-parallel (mlp.c_proj)", facecolor=fl.C["green"], edgecolor="black"),
               fl.swatch("f, g: the all-reduces", facecolor=fl.REDUCING, edgecolor="black")]
    fig.legend(handles=handles, loc="upper center", ncol=3, bbox_to_anchor=(0.5, 0.925), fontsize=8.5)
    return fig
