"""bench/model/torch_gpt.py — the same GPT in PyTorch eager, as a benchmark peer (never a dependency).

Same architecture and sizes as bench_model.cc (V=256, T=256, L=6, H=6, C=384, tied head, pre-LN,
GELU tanh, no dropout), one thread, FP32, forward + backward per step; prints tokens/s and a JSON
line. Debian's torch hands GEMMs to the system OpenBLAS, so OPENBLAS_NUM_THREADS=1 is set too.
"""
import argparse
import json
import math
import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402


class Block(nn.Module):
    def __init__(self, C, H, T):
        super().__init__()
        self.H = H
        self.ln_1 = nn.LayerNorm(C)
        self.c_attn = nn.Linear(C, 3 * C)
        self.c_proj = nn.Linear(C, C)
        self.ln_2 = nn.LayerNorm(C)
        self.c_fc = nn.Linear(C, 4 * C)
        self.mlp_proj = nn.Linear(4 * C, C)
        self.register_buffer("mask", torch.tril(torch.ones(T, T, dtype=torch.bool)))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(C, dim=2)
        q, k, v = (t.view(B, T, self.H, C // self.H).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(C // self.H)
        att = att.masked_fill(~self.mask[:T, :T], float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        x = x + self.c_proj(y)
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class GPT(nn.Module):
    def __init__(self, V, T, L, H, C):
        super().__init__()
        self.wte = nn.Embedding(V, C)
        self.wpe = nn.Embedding(T, C)
        self.h = nn.ModuleList(Block(C, H, T) for _ in range(L))
        self.ln_f = nn.LayerNorm(C)

    def forward(self, idx, targets):
        T = idx.shape[1]
        x = self.wte(idx) + self.wpe(torch.arange(T))
        for block in self.h:
            x = block(x)
        logits = self.ln_f(x) @ self.wte.weight.t()
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.reshape(-1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    V, T, L, H, C = 256, 256, 6, 6, 384
    model = GPT(V, T, L, H, C)
    idx = torch.randint(0, V, (args.batch, T + 1))
    x, y = idx[:, :-1], idx[:, 1:]
    model(x, y).backward()  # warm-up
    total, best = 0.0, float("inf")
    for _ in range(args.steps):
        model.zero_grad(set_to_none=True)
        t0 = time.perf_counter()
        loss = model(x, y)
        loss.backward()
        dt = time.perf_counter() - t0
        total, best = total + dt, min(best, dt)
    tps = args.batch * T * args.steps / total
    params = sum(p.numel() for p in model.parameters())
    print(f"torch {torch.__version__} eager fp32: params {params}, B {args.batch}, T {T}: "
          f"{tps:.0f} tokens/s mean (best {args.batch * T / best:.0f}), threads {torch.get_num_threads()}")
    print(json.dumps({"peer": "torch-eager", "tokens_per_s": round(tps, 1),
                      "tokens_per_s_best": round(args.batch * T / best, 1)}))


if __name__ == "__main__":
    main()
