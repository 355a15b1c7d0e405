#!/usr/bin/python3
"""tests/chapter06/check_printed_lesson.py 6|8 < OUTPUT — the lesson lines that chapter 6's or 8's
run.sh prints (read on stdin) agree with the chapters' closed forms.

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
Both: exactly three "are bitwise equal" lines. Exit 0 when all holds, else one line per failure.
"""
import re
import sys

UNITS = [2880, 49984, 49984, 128]  # chapter 6's layout table: real elements per unit
B = 256                            # a gradient-norm block, in elements
PSI = sum(UNITS)
NUM = r"(\d{1,3}(?: \d{3})*)"      # an integer as the chapters write it: 1 658 880


def num(text):
    return int(text.replace(" ", ""))


def psi_pad(n):
    """ψ padded at N ranks: each unit's shard rounded up to whole norm blocks, times N."""
    return sum(n * B * -(-u // (n * B)) for u in UNITS)


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


def main(argv):
    if len(argv) != 2 or argv[1] not in ("6", "8"):
        sys.exit("usage: check_printed_lesson.py 6|8 < run.sh's output")
    c = Checker(sys.stdin.read())
    (check_chapter6 if argv[1] == "6" else check_chapter8)(c)
    c.equal(c.out.count("are bitwise equal"), 3, "lines with \"are bitwise equal\"")
    for f in c.failures:
        print("chapter %s's run.sh: %s" % (argv[1], f))
    if not c.failures:
        print("check_printed_lesson: chapter %s's printed lesson agrees with its closed forms" % argv[1])
    return 1 if c.failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
