#!/usr/bin/env python3
"""tests/launch/check_two_hosts.py - a job across two machines, made here as network namespaces.

Usage: check_two_hosts.py BUILD_DIR {bitwise|partition|unreachable|stall}

Two Linux network namespaces joined by a veth pair are two hosts as far as TCP is concerned: each
has its own interfaces and its own loopback, and one cannot reach the other's 127.0.0.1. Their
addresses exist only inside those namespaces. On each, `zero-launch --nnodes 2 --node-rank K
--nproc-per-node 2 --master-addr HOST_A --master-port P` starts two ranks of zero-train, exactly as
a user would on two machines (the file system is shared, as a cluster's would be).

bitwise    stages 1 and 3 on 2 hosts x 2 ranks (the TCP store served by host A's launcher, Gloo's
           TCP transport between the hosts) end with FP32 master weights equal, byte for byte, to
           one process training the same global batch; so does stage 1 started docs/reliability.md's way,
           with the torchrun variables set by hand and no launcher (rank 0 serves the store).
partition  a long run saves a checkpoint every 2 steps; once one exists the link is taken down.
           Every rank on both hosts must end with a clear error that names a rank on the other
           host, both launchers must exit non-zero, and no process may be left in either
           namespace. Then the link comes back and the job resumes from the latest checkpoint on
           both hosts, ending bitwise equal to one process that trained those steps without
           interruption. The time from the partition to the last exit is printed (it is bounded
           by --timeout-s plus the peer probe's look and the launcher's grace period, but this
           test asserts no upper bound on time: it only guards against a hang).
unreachable host B's ranks bind loopback (GLOO_SOCKET_IFNAME=lo): the ranks on host A must say
           which rank they cannot reach at which address, and the ranks on host B which ranks
           never reached them; every rank ends, none hangs.
stall      rank 3 (host B) is stopped with SIGSTOP mid-run: alive but silent. The other ranks
           end after --timeout-s naming rank 3 (the peer probe finds it accepts connections but
           does not answer); the launchers stop it; no process is left.

Needs root and `ip` (iproute2); exits 77 (CTest's skip) with the reason when the kernel or the
environment refuses network namespaces. Exit status 0 when every check holds; each failure is
printed.
"""
import contextlib
import fcntl
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SKIP = 77
BUILD = sys.argv[1]
MODE = sys.argv[2]
ZT = os.path.join(BUILD, "bin", "zero-train")
ZL = os.path.join(BUILD, "bin", "zero-launch")
HANG = 300.0  # seconds: only a hang takes this long
failures = []

# A tiny model: the point is the wiring, not the arithmetic.
# Global batch 4 over 4 ranks is one sample per rank: the reference takes the same micro-batches of
# 1 (the equivalence condition: the same micro-batches, summed by the canonical tree).
MODEL = ["--layers", "1", "--heads", "2", "--width", "16", "--context", "16", "--digits", "1",
         "--eval-every", "0", "--norm-block", "32", "--global-batch", "4", "--micro-batch", "1"]


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAILED:", what, flush=True)


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


class Hosts:
    """Namespaces A and B, a veth pair between them, one address each (only inside them)."""

    def __init__(self):
        tag = os.getpid() % 100000
        self.a, self.b = f"zt{tag}a", f"zt{tag}b"
        self.va, self.vb = f"zt{tag}va", f"zt{tag}vb"
        # a private /24 per test process, so that two runs of this test never share addresses
        self.addr_a = f"10.{200 + tag % 50}.{(tag // 50) % 250}.1"
        self.addr_b = self.addr_a[:-1] + "2"
        self.made = []
        self.veth = False

    def ip(self, *args):
        r = run(["ip", *args])
        if r.returncode != 0:
            raise RuntimeError(f"ip {' '.join(args)}: {r.stderr.strip()}")

    def __enter__(self):
        # A step that fails part-way must not leave the earlier ones behind: Python runs __exit__
        # only when __enter__ returned, so undo here what was made, then let the error through.
        try:
            with netns_lock():
                for ns in (self.a, self.b):
                    self.ip("netns", "add", ns)
                    self.made.append(ns)
            self.ip("link", "add", self.va, "type", "veth", "peer", "name", self.vb)
            self.veth = True
            self.ip("link", "set", self.va, "netns", self.a)
            self.ip("link", "set", self.vb, "netns", self.b)
            for ns, dev, addr in ((self.a, self.va, self.addr_a), (self.b, self.vb, self.addr_b)):
                self.ip("-n", ns, "addr", "add", addr + "/24", "dev", dev)
                self.ip("-n", ns, "link", "set", dev, "up")
                self.ip("-n", ns, "link", "set", "lo", "up")
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def pids(self, ns):
        r = run(["ip", "netns", "pids", ns])
        return [p for p in r.stdout.split() if p]

    def link(self, up):
        self.ip("-n", self.a, "link", "set", self.va, "up" if up else "down")
        self.ip("-n", self.b, "link", "set", self.vb, "up" if up else "down")

    def __exit__(self, *exc):
        for ns in self.made:
            for p in self.pids(ns):
                try:
                    os.kill(int(p), 9)
                except ProcessLookupError:
                    pass
            run(["ip", "netns", "del", ns])
        self.made = []
        if self.veth:
            # Still in this namespace only if moving it failed; deleting one end deletes both
            # (a veth moved into a namespace went with it).
            run(["ip", "link", "del", self.va])
            self.veth = False
        release_netns_dir()


# `ip netns add` makes /run/netns a mount point (bind-mounted onto itself, shared) the first time.
# The test unmounts it again when no namespace is left in it: a mount left behind outlives the
# test, and a throw-away root (a chroot deleted after the run) cannot be removed while it holds
# one. Unmounting an empty one loses nothing: the next `ip netns add` mounts it again.
NETNS_DIR = "/run/netns"


def is_mount_point(path):
    """From the mount table: os.path.ismount compares devices, and a folder bind-mounted onto
    itself (what ip does) has its parent's."""
    try:
        with open("/proc/self/mountinfo") as f:
            return any(line.split()[4] == path for line in f)
    except OSError:
        return False


@contextlib.contextmanager
def netns_lock():
    """Serialises adding namespaces with the unmount below across concurrent runs of this test
    (ctest -j): otherwise one run could unmount the folder between another's add and its use."""
    with open("/run/zt-netns.lock", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield


def release_netns_dir():
    with netns_lock():
        if not is_mount_point(NETNS_DIR):
            return
        try:
            if os.listdir(NETNS_DIR):
                return  # namespaces of another run (or of someone else) live there
        except OSError:
            return
        run(["umount", NETNS_DIR])


def usable():
    """None when namespaces work here, else the reason to skip."""
    if os.geteuid() != 0:
        return "needs root (network namespaces)"
    if shutil.which("ip") is None:
        return "needs the ip command (Debian package iproute2)"
    probe = f"ztprobe{os.getpid() % 100000}"
    with netns_lock():
        r = run(["ip", "netns", "add", probe])
    if r.returncode != 0:
        run(["ip", "netns", "del", probe])  # it may have got as far as the file
        release_netns_dir()
        return "the kernel refuses network namespaces here: " + r.stderr.strip()
    # Creating one is not enough: `ip -n` enters it, which remounts /sys and needs a mount
    # namespace of its own (a chroot or some containers refuse: "mount --make-rslave /").
    r = run(["ip", "-n", probe, "link", "set", "lo", "up"])
    run(["ip", "netns", "del", probe])
    release_netns_dir()
    if r.returncode != 0:
        return "network namespaces cannot be entered here: " + r.stderr.strip()
    return None


def launch(hosts, node, port, args):
    """zero-launch for one node of the 2 x 2 job, inside that node's namespace."""
    ns = hosts.a if node == 0 else hosts.b
    cmd = ["ip", "netns", "exec", ns, ZL, "--nnodes", "2", "--node-rank", str(node), "--nproc-per-node", "2",
           "--master-addr", hosts.addr_a, "--master-port", str(port), "--", ZT] + args
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(procs, timeout=HANG):
    outs = []
    for p in procs:
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            err += "\n[check_two_hosts: killed after a hang]"
        outs.append((p.returncode, out, err))
    return outs


def job(hosts, port, args):
    """Run the 2-host job to its end: [(status, stdout, stderr)] of node 0 and node 1."""
    return finish([launch(hosts, 0, port, args), launch(hosts, 1, port, args)])


def reference(args, out):
    """One process, the same global batch in the same micro-batches: its master weights in `out`."""
    r = run([ZT] + args + ["--dump-params", out])
    check(r.returncode == 0, f"reference run failed: {r.stderr.strip()}")


def same_bytes(a, b):
    return os.path.exists(a) and os.path.exists(b) and open(a, "rb").read() == open(b, "rb").read()


def bitwise(hosts, work):
    common = MODEL + ["--steps", "3", "--warmup-steps", "0"]
    for stage in (1, 3):
        out, ref = os.path.join(work, f"s{stage}.bin"), os.path.join(work, f"s{stage}.ref")
        res = job(hosts, 29500 + stage, common + ["--stage", str(stage), "--dump-params", out])
        for node, (status, o, e) in enumerate(res):
            check(status == 0, f"stage {stage} node {node}: exit {status}\n{e}")
            print(f"--- stage {stage}, node {node} (exit {status}):\n{o}{e}", flush=True)
        reference(common + ["--stage", "0"], ref)
        check(same_bytes(out, ref), f"stage {stage}: 2 hosts x 2 ranks differ from one process")
    out = os.path.join(work, "plain.bin")
    res = plain_ranks(hosts, 29510, common + ["--stage", "1", "--dump-params", out])
    for rank, (status, o, e) in enumerate(res):
        check(status == 0, f"torchrun variables, rank {rank}: exit {status}\n{e}")
    check(same_bytes(out, os.path.join(work, "s1.ref")), "torchrun variables: 2 hosts differ from one process")


def plain_ranks(hosts, port, args):
    """docs/reliability.md's recipe without a launcher: RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT set by
    hand for each process, ranks 0-1 on host A and 2-3 on host B; rank 0 serves the store."""
    procs = []
    for rank in range(4):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE="4", LOCAL_RANK=str(rank % 2), MASTER_ADDR=hosts.addr_a,
                   MASTER_PORT=str(port))
        ns = hosts.a if rank < 2 else hosts.b
        procs.append(subprocess.Popen(["ip", "netns", "exec", ns, ZT] + args, env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
    return finish(procs)


def latest_step(save_dir):
    steps = [int(m.group(1)) for d in os.listdir(save_dir) if (m := re.fullmatch(r"step-(\d+)", d))]
    return max(steps) if steps else 0


def wait_for_checkpoint(procs, save, step):
    """Wait until step-<step> is saved: the fault comes after an observable fact, not a guess
    about time. Every launcher must still be running then."""
    start = time.monotonic()
    while not os.path.isdir(os.path.join(save, f"step-{step:08d}")):
        if any(p.poll() is not None for p in procs) or time.monotonic() - start > HANG:
            break
        time.sleep(0.05)
    check(all(p.poll() is None for p in procs), f"the long run ended before step {step} was saved")


def failed_on_both(procs, what, timeout_s):
    """Both launchers must end, non-zero and without being killed for a hang, after the fault
    `what` (which just happened); each one's stderr is printed. Returns finish()'s results."""
    cut = time.monotonic()
    res = finish(procs)
    print(f"{what}: both launchers exited {time.monotonic() - cut:.1f} s after it "
          f"(--timeout-s {timeout_s}, grace 3 s)", flush=True)
    for node, (status, o, e) in enumerate(res):
        print(f"--- node {node} (exit {status}):\n{e}", flush=True)
        check(status != 0, f"node {node}: exit 0 after {what}")
        check("[check_two_hosts: killed after a hang]" not in e, f"node {node}: hung after {what}")
    return res


def nothing_left(hosts):
    for ns in (hosts.a, hosts.b):
        check(hosts.pids(ns) == [], f"processes left in namespace {ns}: {hosts.pids(ns)}")


def partition(hosts, work):
    save = os.path.join(work, "ckpt")
    # a constant learning rate, so the schedule does not depend on --steps and the resumed run
    # can stop early yet match a reference of the same length
    train = MODEL + ["--warmup-steps", "0", "--lr", "0.001", "--min-lr", "0.001"]
    timeout_s = 10
    procs = [launch(hosts, k, 29600, train + ["--stage", "1", "--steps", "1000000", "--save-dir", save,
                                              "--save-every", "2", "--timeout-s", str(timeout_s)]) for k in (0, 1)]
    # The partition comes once a checkpoint exists.
    wait_for_checkpoint(procs, save, 4)
    hosts.link(up=False)
    res = failed_on_both(procs, "the partition (link down)", timeout_s)
    for node, (status, o, e) in enumerate(res):
        others = "23" if node == 0 else "01"
        ranks = [0, 1] if node == 0 else [2, 3]
        for r in ranks:
            lines = [l for l in e.splitlines() if l.startswith(f"[rank {r}] ") and "error:" in l]
            check(lines, f"node {node}: rank {r} printed no error")
            named = any(re.search(rf"rank\(s\) [0-9, ]*[{others}]|rank [{others}] at ", l) for l in lines)
            check(named, f"node {node}: rank {r}'s error does not name a rank on the other host: {lines}")
        check("job failed" in e, f"node {node}: the launcher did not report the failure")
    nothing_left(hosts)

    # The link comes back; the job resumes on both hosts from the latest complete checkpoint.
    hosts.link(up=True)
    k = latest_step(save)
    check(k >= 4, f"no checkpoint at or after step 4 in {save}")
    steps = k + 3
    out, ref = os.path.join(work, "resumed.bin"), os.path.join(work, "resumed.ref")
    res = job(hosts, 29700, train + ["--stage", "1", "--steps", str(steps), "--resume", save, "--dump-params", out])
    for node, (status, o, e) in enumerate(res):
        check(status == 0, f"resume node {node}: exit {status}\n{e}")
    reference(train + ["--stage", "0", "--steps", str(steps)], ref)
    check(same_bytes(out, ref), f"resumed at step {k} on 2 hosts: differs from {steps} uninterrupted steps")
    print(f"resume: from step {k} to {steps} on 2 hosts x 2 ranks, bitwise equal to one process", flush=True)


def rank_pid(hosts, ns, rank):
    """The pid of zero-train's rank `rank` in namespace ns (RANK in its environment)."""
    for pid in hosts.pids(ns):
        try:
            env = open(f"/proc/{pid}/environ", "rb").read().split(b"\0")
            exe = os.readlink(f"/proc/{pid}/exe")
        except OSError:
            continue
        if exe == os.path.realpath(ZT) and f"RANK={rank}".encode() in env:
            return int(pid)
    return None


def stall(hosts, work):
    """Rank 3 (host B) is stopped mid-run (SIGSTOP: alive, silent). Every other rank must end
    after --timeout-s naming rank 3 as the peer that does not answer; nothing may be left."""
    save = os.path.join(work, "ckpt")
    timeout_s = 5
    args = MODEL + ["--stage", "2", "--steps", "1000000", "--warmup-steps", "0", "--save-dir", save,
                    "--save-every", "2", "--timeout-s", str(timeout_s)]
    procs = [launch(hosts, k, 29900, args) for k in (0, 1)]
    wait_for_checkpoint(procs, save, 2)
    pid = rank_pid(hosts, hosts.b, 3)
    check(pid is not None, "rank 3's process not found")
    if pid is None:
        return
    os.kill(pid, signal.SIGSTOP)
    res = failed_on_both(procs, "rank 3 stopped (SIGSTOP)", timeout_s)
    for r in (0, 1, 2):
        node = 0 if r < 2 else 1
        lines = [l for l in res[node][2].splitlines() if l.startswith(f"[rank {r}] ") and "error:" in l]
        named = any(re.search(r"rank\(s\) [0-9, ]*3\b|rank 3 at \S+ .*: accepts connections but does not answer", l)
                    for l in lines)
        check(named, f"rank {r}'s error does not name the stalled rank 3: {lines}")
    nothing_left(hosts)


def unreachable(hosts, work):
    """Host B's ranks bind loopback (GLOO_SOCKET_IFNAME=lo, as this program did by default once):
    host A cannot reach them. Every rank must end within the timeout, naming the peer and address."""
    timeout_s = 5
    args = MODEL + ["--stage", "1", "--steps", "2", "--timeout-s", str(timeout_s)]
    procs = [launch(hosts, 0, 29800, args)]
    os.environ["GLOO_SOCKET_IFNAME"] = "lo"
    try:
        procs.append(launch(hosts, 1, 29800, args))
    finally:
        del os.environ["GLOO_SOCKET_IFNAME"]
    start = time.monotonic()
    res = finish(procs)
    print(f"unreachable: both launchers exited after {time.monotonic() - start:.1f} s (--timeout-s {timeout_s})",
          flush=True)
    for node, (status, o, e) in enumerate(res):
        print(f"--- node {node} (exit {status}):\n{e}", flush=True)
        check(status != 0, f"node {node}: exit 0 with an unreachable peer")
        check("[check_two_hosts: killed after a hang]" not in e, f"node {node}: hung at rendezvous")
    # host A cannot reach host B's ranks at their loopback address...
    check(re.search(r"cannot reach rank [23] at 127\.0\.0\.1:\d+ \(bound to GLOO_SOCKET_IFNAME=lo\)", res[0][2]),
          "node 0 does not name the unreachable rank and its address")
    # ...and host B's ranks learn that host A's never reached them
    check(re.search(r"rank\(s\) 0, 1 did not reach rank [23] at 127\.0\.0\.1:\d+ \(bound to GLOO_SOCKET_IFNAME=lo\)",
                    res[1][2]),
          "node 1 does not name the ranks that never reached it")


def main():
    why = usable()
    if why:
        print("skipped:", why)
        return SKIP
    with tempfile.TemporaryDirectory(prefix="zt_two_hosts_") as work, Hosts() as hosts:
        {"bitwise": bitwise, "partition": partition, "unreachable": unreachable, "stall": stall}[MODE](hosts, work)
    for f in failures:
        print("FAILED:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
