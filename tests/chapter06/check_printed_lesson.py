#!/usr/bin/python3
"""tests/chapter06/check_printed_lesson.py 6|7|8|9 < OUTPUT — the lesson lines that chapter 6's, 7's,
8's or 9's run.sh prints (read on stdin) agree with the chapters' closed forms.

The scripts print numbers that zero-train measured (from --summary-json) beside numbers they
compute (the paper's formulas). check_quotes.py pins the measured ones to the README; this checks
the arithmetic around them against closed forms computed here, from the chapter's model alone:
ψ = 102 976 elements in four units (the layout table of chapter 6: embeddings 2 880, two blocks of
49 984, ln_f 128), each unit's shard rounded up to norm blocks of b = 256 (ψ_pad).

Chapter 6 (ZeRO-1, the paper's configuration), for N = 1, 2 and 4:
  - ψ and ψ_pad as printed equal the closed forms;
  - 16-bit parameters and gradients: measured = printed formula = 2ψ_pad;
  - optimizer states: measured = master + moments = printed formula = 12ψ_pad/N;
  - model states: measured = the three rows' sum; printed formula = (4 + 12/N)ψ; the printed
    padding = measured - formula;
  - the optimizer states shrink as 1/N up to padding: N·opt(N) - opt(1) = 12(ψ_pad(N) - ψ_pad(1)),
    and the printed fractions are opt(N)/opt(1) to three decimals;
  - the default's FP32 gradients: each model-states total is the paper configuration's + 2ψ_pad.
Chapter 8 (traffic per rank per step, the paper's configuration), for N = 2 and 4:
  - each line's parts add up to its printed total, the printed ratio is their quotient;
  - stage 0's all-reduce sends 2·(N-1)/N·ψ_pad elements of 2 bytes, stage 3's reduce-scatter half
    of that, and stage 3's all-gathers at least twice that (the parameters, in forward and backward);
  - the ratio is the paper's 1.5 plus at most 2% (the tied embeddings' third gather and scalars),
    the printed extra is ratio - 1.5, and the default fp32's ratios lie in [1, 1.02].
Chapter 7 (ZeRO-2, the paper's configuration), for N = 1, 2 and 4:
  - 16-bit parameters 2ψ_pad, gradients 2ψ_pad/N, FP32 master 4ψ_pad/N and Adam moments 8ψ_pad/N:
    measured = printed formula = the closed form, row by row;
  - model states: measured = the rows' sum = printed (2 + 14/N)ψ_pad; the paper's printed
    (2 + 14/N)ψ is the closed form at ψ and lies below the measurement (padding);
  - the default's FP32 gradients: each model-states total is the paper configuration's + 2ψ_pad/N;
  - traffic at N = 2 and 4: the printed 2ψ_pad·(N-1)/N × 2 bytes is the closed form and stage 0's
    all-reduce; stage 2's reduce-scatter is half of it and its all-gather the other half plus the
    step's scalars exactly (the norm's block sums and the loss sums, see ag_scalars); parts add up,
    the ratio is their quotient within 1% above 1; the default fp32's ratios lie in [0.75, 0.76].
Chapter 9 (ZeRO-3's knobs; the default model has L = 2 blocks):
  - prefetch and overlap at N = 4: both lines print the same parts, total and calls; the
    reduce-scatter is (N-1)/N·ψ_pad·2 bytes and the all-gathers are the units' gathers (each use of
    a unit: 3 for the tied embeddings, 2 for a block and for ln_f) plus the scalars, exactly; the
    gathered peak is p + 1 padded blocks of 2-byte values;
  - --trace: 2 steps × 2L + 5 compute spans, 2 × 2L + 5 gather waits, 2 × L + 2 reduce waits;
  - --persist-below-mb at N = 2 and 4: the whole units are those whose 2-byte parameters are under
    the threshold; all-gather calls (uses of sharded units + one per whole unit + 2 scalar
    gathers) and bytes, the parameters a rank stores and its model states (16ψ_pad/N +
    2(1 - 1/N)·the whole units' padded elements) equal the closed forms; the printed Σ_u is
    16ψ/N + Σ 2ψ_u(1 - 1/N) and the padding measured - Σ_u;
  - hybrid sharding (fp32, G = 2 of N_d = 4, R = 2): model states 16ψ_pad(G)/G, a G-rank run's,
    and the flat run's 16ψ_pad(N_d)/N_d; the reduce-scatter and all-gathers inside the shard group
    are the G-rank run's; the replicas' all-reduce is 2(R-1)/R·n/G + 4 with n/G = 4ψ_pad(G)/G,
    the loss sums over all ranks 4(N_d - 1) bytes.
All: exactly three "are bitwise equal" lines. Exit 0 when all holds, else one line per failure.
"""
import re
import sys

UNITS = [2880, 49984, 49984, 128]  # chapter 6's layout table: real elements per unit
USES = [3, 2, 2, 2]                # ZeRO-3's gathers of each unit per micro-batch (chapter 8's acquire order)
L = 2                              # the default model's blocks
B = 256                            # a gradient-norm block, in elements
PSI = sum(UNITS)
NUM = r"(\d{1,3}(?: \d{3})*)"      # an integer as the chapters write it: 1 658 880


def num(text):
    return int(text.replace(" ", ""))


def padded(u, n):
    """A unit of u real elements at N ranks: its shard rounded up to whole norm blocks, times N."""
    return n * B * -(-u // (n * B))


def psi_pad(n):
    """ψ padded at N ranks: each unit's shard rounded up to whole norm blocks, times N."""
    return sum(padded(u, n) for u in UNITS)


def ag_scalars(n):
    """Bytes rank 0 sends per step in the small all-gathers of a sharded step at N ranks: the loss
    sums (one FP32 value per rank) and the norm's block sums. Each rank contributes one FP32 sum
    per norm block of the real elements of its shards; a ring all-gather sends every range but
    the next rank's, so rank 0 sends all blocks but rank 1's."""
    def blocks(q):
        total = 0
        for u in UNITS:
            shard = padded(u, n) // n
            real = min(max(u - q * shard, 0), shard)
            total += -(-real // B)
        return total
    return 4 * (n - 1) + 4 * (sum(blocks(q) for q in range(n)) - blocks(1))


class Checker:
    def __init__(self, out):
        self.out = out
        self.failures = []

    def find(self, pattern, what):
        m = re.search(pattern, self.out, re.M)
        if not m:
            self.failures.append("no line for %s (pattern %r)" % (what, pattern))
        return m

    def equal(self, got, want, what):
        if got != want:
            self.failures.append("%s: printed %s, expected %s" % (what, got, want))


def check_chapter6(c):
    m = c.find(r"^ψ = " + NUM + " elements", "ψ")
    if m:
        c.equal(num(m.group(1)), PSI, "ψ")
    opt, states = {}, {}
    for n in (1, 2, 4):
        p = psi_pad(n)
        m = c.find(r"^--- N = %d: ψ_pad = " % n + NUM + "$", "N = %d's block" % n)
        if not m:
            continue
        c.equal(num(m.group(1)), p, "ψ_pad at N = %d" % n)
        block = c.out[m.end():]
        rows = {}
        for name in ("16-bit parameters", "16-bit gradients", "optimizer states", "model states"):
            r = re.search(r"^  " + name + r"\s+" + NUM + r"\s+\S+(?: \S+ \S+)?\s*=\s+" + NUM + "(.*)$", block, re.M)
            if not r:
                c.failures.append("N = %d: no %s row" % (n, name))
                return
            rows[name] = (num(r.group(1)), num(r.group(2)), r.group(3))
        for name in ("16-bit parameters", "16-bit gradients"):
            c.equal(rows[name][:2], (2 * p, 2 * p), "N = %d, %s (measured, 2ψ_pad)" % (n, name))
        measured, formula, rest = rows["optimizer states"]
        parts = re.search(r"\(master " + NUM + r" \+ moments " + NUM + r"\)", rest)
        c.equal(formula, 12 * p // n, "N = %d, optimizer states' formula 12ψ_pad/N" % n)
        c.equal(measured, 12 * p // n, "N = %d, optimizer states measured" % n)
        if parts:
            c.equal(num(parts.group(1)) + num(parts.group(2)), measured, "N = %d, master + moments" % n)
            c.equal((num(parts.group(1)), num(parts.group(2))), (4 * p // n, 8 * p // n),
                    "N = %d, master and moments (4ψ_pad/N, 8ψ_pad/N)" % n)
        else:
            c.failures.append("N = %d: the optimizer states row names no master + moments" % n)
        opt[n] = measured
        total, paper, rest = rows["model states"]
        c.equal(total, sum(rows[k][0] for k in ("16-bit parameters", "16-bit gradients", "optimizer states")),
                "N = %d, model states = the rows' sum" % n)
        c.equal(paper, (4 * n + 12) * PSI // n, "N = %d, the paper's (4 + 12/N)ψ" % n)
        pad = re.search(r"\+ " + NUM + " mean padding", rest)
        c.equal(num(pad.group(1)) if pad else None, total - paper, "N = %d, padding = measured - formula" % n)
        states[n] = total
    if len(opt) == 3:
        for n in (2, 4):
            c.equal(n * opt[n] - opt[1], 12 * (psi_pad(n) - psi_pad(1)),
                    "N = %d: optimizer states are 1/N of N = 1's up to padding" % n)
        m = c.find(r"at N = 2 and 4 they are ([0-9.]+) and ([0-9.]+) of N = 1's", "the 1/N line")
        if m:
            c.equal((m.group(1), m.group(2)), ("%.3f" % (opt[2] / opt[1]), "%.3f" % (opt[4] / opt[1])),
                    "the printed fractions of N = 1's optimizer states")
    m = c.find(r"Model states: " + NUM + ", " + NUM + " and " + NUM + " at N = 1, 2 and 4", "the FP32-gradient line")
    if m and len(states) == 3:
        for n, g in zip((1, 2, 4), m.groups()):
            c.equal(num(g), states[n] + 2 * psi_pad(n), "N = %d, FP32 gradients: model states + 2ψ_pad" % n)


def parts_of(line):
    """[(bytes, collective)] and the total of 'a AR + b AG = t'."""
    head, total = line.rsplit(" = ", 1)
    parts = [(num(v), k) for v, k in re.findall(NUM + r" (RS|AG|AR)", head)]
    return parts, num(total.strip())


def check_chapter8(c):
    ratios = {}
    for n in (2, 4):
        m = c.find(r"^--- N = %d\n  stage 0: (.*)\n  stage 3: (.*)\n  stage 3 / stage 0 = ([0-9.]+); "
                   r"the paper: 3ψ/2ψ = 1\.5$" % n, "N = %d's traffic" % n)
        if not m:
            continue
        (s0, t0), (s3, t3) = parts_of(m.group(1)), parts_of(m.group(2))
        c.equal(sum(v for v, _ in s0), t0, "N = %d, stage 0's parts add up" % n)
        c.equal(sum(v for v, _ in s3), t3, "N = %d, stage 3's parts add up" % n)
        c.equal(m.group(3), "%.3f" % (t3 / t0), "N = %d, the printed ratio" % n)
        half = (n - 1) * psi_pad(n) * 2 // n  # bytes of one half of an all-reduce of 16-bit values
        b0, b3 = dict((k, v) for v, k in s0), dict((k, v) for v, k in s3)
        c.equal(b0.get("AR"), 2 * half, "N = %d, stage 0's all-reduce: 2·(N-1)/N·ψ_pad·2 bytes" % n)
        c.equal(b3.get("RS"), half, "N = %d, stage 3's reduce-scatter: (N-1)/N·ψ_pad·2 bytes" % n)
        if b3.get("AG", 0) < 2 * half:
            c.failures.append("N = %d: stage 3's all-gathers send %s bytes, less than two gathers of the "
                              "parameters (%d)" % (n, b3.get("AG"), 2 * half))
        ratios[n] = t3 / t0
        if not 1.5 <= ratios[n] <= 1.5 * 1.02:
            c.failures.append("N = %d: stage 3 / stage 0 = %.4f, not the paper's 1.5 plus at most 2%%" % (n, ratios[n]))
    m = c.find(r"^The extra ([0-9.]+):", "the extra over 1.5")
    if m and 2 in ratios:
        c.equal(m.group(1), "%.3f" % (ratios[2] - 1.5), "the printed extra over 1.5")
    m = c.find(r"the ratio is ([0-9.]+) at N = 2 and ([0-9.]+) at N = 4", "the default fp32's ratios")
    if m:
        for n, r in zip((2, 4), m.groups()):
            if not 1.0 <= float(r) <= 1.02:
                c.failures.append("N = %d: fp32's ratio %s is not about 1 (8 bytes per element at both stages)" % (n, r))


def check_chapter7(c):
    m = c.find(r"^ψ = " + NUM + " elements", "ψ")
    if m:
        c.equal(num(m.group(1)), PSI, "ψ")
    states = {}
    rows = [("16-bit parameters", lambda p, n: 2 * p), ("16-bit gradients", lambda p, n: 2 * p // n),
            ("FP32 master weights", lambda p, n: 4 * p // n), ("Adam moments", lambda p, n: 8 * p // n)]
    for n in (1, 2, 4):
        p = psi_pad(n)
        m = c.find(r"^--- N = %d$" % n, "N = %d's block" % n)
        if not m:
            continue
        block = c.out[m.end():]
        got = {}
        for name in [r[0] for r in rows] + ["model states"]:
            r = re.search(r"^  " + name + r"\s+" + NUM + r"\s+\S+(?: \S+ \S+)?\s*=\s+" + NUM + "(.*)$", block, re.M)
            if not r:
                c.failures.append("N = %d: no %s row" % (n, name))
                break
            got[name] = (num(r.group(1)), num(r.group(2)), r.group(3))
        else:
            for name, form in rows:
                c.equal(got[name][:2], (form(p, n), form(p, n)), "N = %d, %s (measured, formula)" % (n, name))
            total, formula, rest = got["model states"]
            c.equal(total, sum(got[name][0] for name, _ in rows), "N = %d, model states = the rows' sum" % n)
            c.equal(formula, 2 * p + 14 * p // n, "N = %d, (2 + 14/N)ψ_pad" % n)
            paper = re.search(r"the paper's \(2 \+ 14/N\)ψ = " + NUM, rest)
            c.equal(num(paper.group(1)) if paper else None, 2 * PSI + 14 * PSI // n, "N = %d, the paper's (2 + 14/N)ψ" % n)
            if paper and num(paper.group(1)) > total:
                c.failures.append("N = %d: the paper's formula exceeds the padded measurement" % n)
            states[n] = total
    m = c.find(r"^" + NUM + ", " + NUM + " and " + NUM + r" at N = 1, 2 and 4, the paper's \(2 \+ 16/N\)ψ",
               "the FP32-gradient line")
    if m and len(states) == 3:
        for n, g in zip((1, 2, 4), m.groups()):
            c.equal(num(g), states[n] + 2 * psi_pad(n) // n, "N = %d, FP32 gradients: model states + 2ψ_pad/N" % n)
    for n in (2, 4):
        m = c.find(r"^--- N = %d: 2ψ_pad·\(N - 1\)/N elements × 2 bytes = " % n + NUM +
                   r"\n  stage 0: (.*)\n  stage 2: (.*)\n  stage 2 / stage 0 = ([0-9.]+); the paper: 2ψ/2ψ = 1$",
                   "N = %d's traffic" % n)
        if not m:
            continue
        full = 4 * psi_pad(n) * (n - 1) // n  # 2ψ_pad·(N-1)/N elements of 2 bytes
        c.equal(num(m.group(1)), full, "N = %d, 2ψ_pad·(N-1)/N × 2 bytes" % n)
        (s0, t0), (s2, t2) = parts_of(m.group(2)), parts_of(m.group(3))
        c.equal(sum(v for v, _ in s0), t0, "N = %d, stage 0's parts add up" % n)
        c.equal(sum(v for v, _ in s2), t2, "N = %d, stage 2's parts add up" % n)
        b0, b2 = dict((k, v) for v, k in s0), dict((k, v) for v, k in s2)
        c.equal(b0.get("AR"), full, "N = %d, stage 0's all-reduce" % n)
        c.equal(b2.get("RS"), full // 2, "N = %d, stage 2's reduce-scatter: half the all-reduce" % n)
        c.equal(b2.get("AG"), full // 2 + ag_scalars(n), "N = %d, stage 2's all-gather: the other half + scalars" % n)
        c.equal(m.group(4), "%.3f" % (t2 / t0), "N = %d, the printed ratio" % n)
        if not 1.0 <= t2 / t0 <= 1.01:
            c.failures.append("N = %d: stage 2 / stage 0 = %.4f, not the paper's 1 plus at most 1%%" % (n, t2 / t0))
    m = c.find(r"the ratio is ([0-9.]+) at N = 2 and ([0-9.]+) at N = 4", "the default fp32's ratios")
    if m:
        for n, r in zip((2, 4), m.groups()):
            if not 0.75 <= float(r) <= 0.76:
                c.failures.append("N = %d: fp32's ratio %s is not about 6/8 (stage 2's 4 + 2 bytes, stage 0's 4 + 4)" % (n, r))


def check_chapter9(c):
    # prefetch and overlap at N = 4: the same collectives, whatever the knobs
    n, lines = 4, []
    for knobs in (r"--prefetch 1 --overlap on: ", r"--prefetch 0 --overlap off:"):
        m = c.find(r"^  " + knobs + r" (.*) bytes in (\d+) calls$", "the line of " + knobs)
        if m:
            lines.append((m.group(1), m.group(2)))
    if len(lines) == 2:
        c.equal(lines[0], lines[1], "prefetch 1 and 0: the same bytes and calls")
        parts, total = parts_of(lines[0][0])
        c.equal(sum(v for v, _ in parts), total, "prefetch: the parts add up")
        b = dict((k, v) for v, k in parts)
        c.equal(b.get("RS"), 2 * psi_pad(n) * (n - 1) // n, "prefetch: the reduce-scatter, (N-1)/N·ψ_pad·2 bytes")
        gathers = sum(k * 2 * padded(u, n) * (n - 1) // n for k, u in zip(USES, UNITS))
        c.equal(b.get("AG"), gathers + ag_scalars(n), "prefetch: the all-gathers, every use of every unit + scalars")
    m = c.find(r"^  gathered_params peak: " + NUM + " bytes at p = 1, " + NUM + " at p = 0", "the gathered peak")
    if m:
        c.equal((num(m.group(1)), num(m.group(2))), (2 * 2 * padded(UNITS[1], n), 2 * padded(UNITS[1], n)),
                "the gathered peak, p + 1 padded blocks of 2 bytes")
    # --trace: two steps of one micro-batch at N = 2
    for what, want in (("compute spans", 2 * (2 * L + 5)), ("wait all_gather spans", 2 * (2 * L + 5)),
                       ("wait reduce spans", 2 * (L + 2))):
        m = c.find(r"^  " + what + r"\s+(\d+) = ", what)
        if m:
            c.equal(int(m.group(1)), want, what)
    # --persist-below-mb
    for n in (2, 4):
        for t, names in (("0", "none"), ("0.001", "ln_f"), ("0.01", "ln_f, embeddings")):
            m = c.find(r"^  %d  %s\s+%s\s+(\d+)\s+%s\s+%s\s+%s  (.*)$" % (n, re.escape(t), re.escape(names), NUM, NUM, NUM),
                       "the persistence row N = %d, %s" % (n, t))
            if not m:
                continue
            whole = [k for k, u in enumerate(UNITS) if 2 * u < float(t) * 2**20]
            c.equal(names, ", ".join({0: "embeddings", 3: "ln_f"}[k] for k in reversed(whole)) or "none",
                    "N = %d, %s: the whole units" % (n, t))
            calls = sum(1 if k in whole else USES[k] for k in range(len(UNITS))) + 2
            sent = sum((1 if k in whole else USES[k]) * 2 * padded(u, n) * (n - 1) // n for k, u in enumerate(UNITS))
            params = sum(2 * padded(u, n) if k in whole else 2 * padded(u, n) // n for k, u in enumerate(UNITS))
            extra = sum(2 * padded(UNITS[k], n) * (n - 1) // n for k in whole)
            got = (int(m.group(1)), num(m.group(2)), num(m.group(3)), num(m.group(4)))
            c.equal(got, (calls, sent + ag_scalars(n), params, 16 * psi_pad(n) // n + extra),
                    "N = %d, %s: AG calls, AG bytes, params, model states" % (n, t))
            if not whole:
                c.equal(m.group(5), "16ψ/N + padding", "N = %d, %s: the formula column" % (n, t))
                continue
            f = re.match(NUM + r" \+ " + NUM + "$", m.group(5))
            sigma = 16 * PSI // n + sum(2 * UNITS[k] * (n - 1) // n for k in whole)
            c.equal((num(f.group(1)), num(f.group(2))) if f else None, (sigma, got[3] - sigma),
                    "N = %d, %s: Σ_u + mean padding" % (n, t))
    # hybrid sharding: G = 2 of N_d = 4, R = 2, fp32 (4 + 4 + 8 bytes per element)
    G, Nd = 2, 4
    R = Nd // G
    m = c.find(r"^  model states: " + NUM + ", a 2-rank run's " + NUM + r" \(flat over 4 ranks: " + NUM + r"\)$",
               "the hybrid model states")
    if m:
        c.equal(tuple(num(g) for g in m.groups()), (16 * psi_pad(G) // G,) * 2 + (16 * psi_pad(Nd) // Nd,),
                "hybrid, G-rank and flat model states (16ψ_pad/G, 16ψ_pad/G, 16ψ_pad/N_d)")
    m = c.find(r"^  inside the shard group:  " + NUM + r" RS \+ " + NUM + " AG, the 2-rank run's " + NUM + r" RS \+ " + NUM + " AG$",
               "the hybrid's traffic inside the shard group")
    if m:
        c.equal((num(m.group(1)), num(m.group(2))), (num(m.group(3)), num(m.group(4))), "inside the shard group = the 2-rank run")
        c.equal(num(m.group(1)), 4 * psi_pad(G) * (G - 1) // G, "inside: the reduce-scatter, (G-1)/G·4ψ_pad bytes")
    m = c.find(r"^  across the shard groups: " + NUM + r" AR = 2\(R - 1\)/R × n/G \+ 4 = " + NUM + r" \+ 4\n"
               r"    \(n/G = " + NUM + " bytes", "the replicas' all-reduce")
    if m:
        shard = 4 * psi_pad(G) // G
        c.equal(num(m.group(3)), shard, "n/G, the rank's FP32 gradient shard")
        c.equal(num(m.group(2)), 2 * (R - 1) * shard // R, "2(R-1)/R·n/G")
        c.equal(num(m.group(1)), 2 * (R - 1) * shard // R + 4, "the replicas' all-reduce, + the overflow flag")
    m = c.find(r"^  all 4 ranks: (\d+) AG \(the loss sums\)$", "the loss sums over all ranks")
    if m:
        c.equal(int(m.group(1)), 4 * (Nd - 1), "the loss sums, one FP32 value from each other rank")


def main(argv):
    checks = {"6": check_chapter6, "7": check_chapter7, "8": check_chapter8, "9": check_chapter9}
    if len(argv) != 2 or argv[1] not in checks:
        sys.exit("usage: check_printed_lesson.py 6|7|8|9 < run.sh's output")
    c = Checker(sys.stdin.read())
    checks[argv[1]](c)
    c.equal(c.out.count("are bitwise equal"), 3, "lines with \"are bitwise equal\"")
    for f in c.failures:
        print("chapter %s's run.sh: %s" % (argv[1], f))
    if not c.failures:
        print("check_printed_lesson: chapter %s's printed lesson agrees with its closed forms" % argv[1])
    return 1 if c.failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
