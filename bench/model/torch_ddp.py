"""bench/model/torch_ddp.py — the peers of zero-train's ZeRO stages 0 and 1 in PyTorch, on the CPU.

N processes (gloo), one thread each, train the GPT of torch_gpt.py (V 256, T 256, L 6, H 6,
C 384) on a global batch split evenly across the ranks, with AdamW and gradient clipping at 1.0,
like `zero-train --world-size N --stage S --threads 1 --optimizer adamw --clip-grad-norm 1.0`:
  --mode ddp    DistributedDataParallel: gradients all-reduced, every rank holds every state
                (the peer of stage 0);
  --mode zero1  DDP + ZeroRedundancyOptimizer: AdamW's moments partitioned across the ranks,
                updated parameters broadcast (the peer of stage 1, the paper's P_os).
Every step's tokens are counted and timed from the first step's start, as zero-train's tokens/s
does (no warm-up excluded on either side). Rank 0 prints the tokens/s and a JSON line. A benchmark
peer only, never a dependency.
"""
import argparse
import json
import os
import socket
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_gpt import GPT  # noqa: E402


def worker(rank, args, port):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=args.world_size)
    torch.manual_seed(0)  # the same initial weights on every rank, as DDP requires
    V, T, L, H, C = 256, 256, 6, 6, 384
    model = torch.nn.parallel.DistributedDataParallel(GPT(V, T, L, H, C))
    if args.mode == "zero1":
        from torch.distributed.optim import ZeroRedundancyOptimizer
        opt = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=torch.optim.AdamW, lr=3e-4)
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    local = args.batch // args.world_size
    g = torch.Generator().manual_seed(1 + rank)
    batches = [torch.randint(0, V, (local, T + 1), generator=g) for _ in range(args.steps)]
    dist.barrier()
    t0 = time.perf_counter()
    for idx in batches:
        opt.zero_grad(set_to_none=True)
        model(idx[:, :-1], idx[:, 1:]).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
    dist.barrier()
    dt = time.perf_counter() - t0
    if rank == 0:
        tps = args.batch * T * args.steps / dt
        print(f"torch {torch.__version__} {args.mode} fp32, N {args.world_size}, global batch {args.batch}: "
              f"{tps:.0f} tokens/s, one thread per rank")
        print(json.dumps({"peer": f"torch-{args.mode}", "tokens_per_s": round(tps, 1)}), flush=True)
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=["ddp", "zero1"], default="ddp")
    ap.add_argument("--world-size", type=int, default=2)
    ap.add_argument("--batch", type=int, default=8, help="global batch (sequences per step)")
    ap.add_argument("--steps", type=int, default=4)
    args = ap.parse_args()
    if args.batch % args.world_size:
        sys.exit("torch_ddp.py: --batch must be a multiple of --world-size")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.start_processes(worker, args=(args, port), nprocs=args.world_size, start_method="spawn")


if __name__ == "__main__":
    main()
