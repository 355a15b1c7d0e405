#!/usr/bin/python3
"""tests/chapter10/check_printed_lesson.py 10|11|12 < OUTPUT — the lesson lines that chapter 10's,
11's or 12's run.sh prints (read on stdin) agree with the chapters' closed forms.

The scripts print numbers that zero-train measured (from --summary-json) beside the closed forms
the chapters teach, with the numbers filled in. check_quotes.py pins the measured numbers to the
READMEs; this checks the arithmetic around them against closed forms computed here from the
chapters' shapes alone, written tensor by tensor as the chapters' tables list them:

  a block keeps ln_1, QKV, the attention probabilities, the attention output, the residual after
  attention, ln_2, c_fc, GELU and its output (values of t bytes) and four FP32 LayerNorm
  statistics per token row; QKV, the attention probabilities and output, c_fc and GELU are split
  over N_m. Outside the blocks: the embedding output x_0, ln_f's output, the logits (V = 13),
  ln_f's two statistics and the loss's three FP32 values per row.

Chapter 10 (L = 4, C = 128, H = 4, T = 64, bf16; B = 1, 8, 16): the filled-in formula evaluates to
the printed value; each row's paper estimate is 12·C·B·T·L·t, the exact count L blocks + outside
and the measurement equal it, the ratio is measured / paper; with checkpointing the checkpoints are
L·B·T·C·t, the activations one block + outside, and "kept" is their sum over the plain count. Both
loss lines agree; under the 10 MiB budget the plain run's predicted peak exceeds the arena, an
out-of-memory line is printed, and the checkpointed run's peak is its prediction, under the arena.
Chapter 11 (L = 2, C = 64, H = 4, T = 32, B = 8, bf16, global batch 16): eight "bitwise equal"
lines; per grid, A = 16/(8·N_d), the MP all-reduces are k·L·A + 1 calls (k = 4, 6 with
checkpointing) and k·L·A·2(N_m−1)/N_m·B·T·C·4 + 4 bytes, the filled-in formula evaluates to that;
the activations are L blocks + outside (one block + outside with checkpointing), the checkpoints
L·B·T·C·t at every N_m; zero-plan's layer sends 4·2(N_m−1)/N_m·B·T·C·4 + 4 bytes in 5 calls.
Chapter 12 (the same shape, world 4 = 2 × 2, A = 1): three "bitwise equal" lines; with
E = ⌈B·T·C/N_m⌉, the checkpoints are L·B·T·C·t without P_a and L·E·t with it (1/N_m), P_a adds
L·A all-gathers of (N_m−1)·E·t bytes, P_a+cpu keeps 0 on the accelerator, 2·E·t of staging and
L·E·t on the host, and moves L·A·E·t each way in L·A copies; every filled-in formula evaluates to
its value; the printed share is (on − off)/all-reduce bytes, t/48 to the printed digits, under 10%.
M_D fits where the general layout fails with enough bytes free; under 5.9 MiB the general run
prints an out-of-memory line and the zero run's peak is its prediction, under the arena.
Exit 0 when all holds, else one line per failure.
"""
import re
import sys
from fractions import Fraction

NUM = r"(\d{1,3}(?:,\d{3})*)"  # an integer as these chapters print bytes: 1,219,456
V = 13                          # the addition task's vocabulary
T_BYTES = 2                     # bf16
STAT = 4                        # an FP32 statistic


def num(text):
    return int(text.replace(",", ""))


def evaluate(expr):
    """The value of a printed formula with its numbers filled in: · and × multiply, ² squares,
    ⌈a/b⌉ rounds up, / divides exactly."""
    e = expr.replace("·", "*").replace("×", "*").replace("²", "**2").replace("[", "(").replace("]", ")")
    e = e.replace("⌈", "ceil(").replace("⌉", ")")
    if not re.fullmatch(r"[\d\s*+\-/()ceil]*", e):
        raise ValueError("not a formula: %r" % expr)
    e = re.sub(r"\d+", lambda m: "F(%s)" % m.group(), e)
    value = eval(e, {"__builtins__": {}}, {"F": Fraction, "ceil": lambda x: -(-x.numerator // x.denominator)})
    return int(value) if Fraction(value).denominator == 1 else value


def block(B, C, H, T, n_m=1, t=T_BYTES):
    """Bytes one block keeps on a rank of an N_m-way split (the chapters' tables, tensor by tensor)."""
    rows = B * T
    whole = rows * C * (1 + 1 + 1 + 1)                          # ln_1, residual after attention, ln_2, block output
    split = (rows * 3 * C + B * H * T * T + rows * C + rows * 4 * C + rows * 4 * C) // n_m  # QKV, P, att out, c_fc, GELU
    return (whole + split) * t + 2 * 2 * rows * STAT            # two LayerNorms, mean and 1/std each


def outside(B, C, T, t=T_BYTES):
    """Bytes outside the blocks: x_0, ln_f's output, the logits; ln_f's statistics, the loss's rows."""
    rows = B * T
    return (rows * C + rows * C + rows * V) * t + (2 + 3) * rows * STAT


class Checker:
    def __init__(self, out):
        self.out = out
        self.failures = []

    def find(self, pattern, what, text=None):
        m = re.search(pattern, self.out if text is None else text, re.M)
        if not m:
            self.failures.append("no line for %s (pattern %r)" % (what, pattern))
        return m

    def equal(self, got, want, what):
        if got != want:
            self.failures.append("%s: printed %s, expected %s" % (what, got, want))

    def formula(self, expr, want, what):
        """A filled-in formula evaluates to the value the closed form gives."""
        try:
            self.equal(evaluate(expr), want, what + " (the filled-in formula " + expr + ")")
        except (ValueError, SyntaxError, TypeError, ZeroDivisionError) as e:
            self.failures.append("%s: %s" % (what, e))

    def after(self, pattern, what):
        """The output after the first line matching pattern ('' when there is none)."""
        m = self.find(pattern, what)
        return self.out[m.end():] if m else ""

    def verified(self, n):
        self.equal(len(re.findall(r"verify: .*are bitwise equal to the single-rank reference", self.out)), n,
                   "lines with \"are bitwise equal\"")
        self.equal(self.out.count("NOT bitwise equal"), 0, "lines with \"NOT bitwise equal\"")


def check_chapter10(c):
    L, C, H, T = 4, 128, 4, 64
    m = c.find(r"^L = (\d+), C = (\d+), H = (\d+), T = (\d+), V = (\d+), bf16: t = (\d+) ", "the shape")
    if m:
        c.equal(tuple(map(int, m.groups())), (L, C, H, T, V, T_BYTES), "L, C, H, T, V, t")
    m = c.find(r"^  B = 1: (.*) = " + NUM + "$", "the formula filled in at B = 1")
    if m:
        want = L * block(1, C, H, T) + outside(1, C, T)
        c.equal(num(m.group(2)), want, "B = 1: L blocks + outside")
        c.formula(m.group(1), want, "B = 1")
    plain = {}
    rest = c.after(r"^No checkpointing", "the table without checkpointing")
    for B in (1, 8, 16):
        m = c.find(r"^ +%d +%s +%s +%s +([0-9.]+)$" % (B, NUM, NUM, NUM), "B = %d without checkpointing" % B, rest)
        if not m:
            continue
        paper, exact, measured = num(m.group(1)), num(m.group(2)), num(m.group(3))
        c.equal(paper, 12 * C * B * T * L * T_BYTES, "B = %d: the paper's 12·C·B·T·L·t" % B)
        c.equal(exact, L * block(B, C, H, T) + outside(B, C, T), "B = %d: L blocks + outside" % B)
        c.equal(measured, exact, "B = %d: measured activations" % B)
        c.equal(m.group(4), "%.2f" % (measured / paper), "B = %d: measured / paper" % B)
        plain[B] = measured
    rest = c.after(r"^--checkpoint-activations:", "the table with checkpointing")
    for B in (1, 8, 16):
        m = c.find(r"^ +%d +([0-9·]+) += +%s +%s +%s +%s +([0-9.]+)$" % (B, NUM, NUM, NUM, NUM),
                   "B = %d with checkpointing" % B, rest)
        if not m:
            continue
        ckpt = L * B * T * C * T_BYTES
        c.formula(m.group(1), ckpt, "B = %d: checkpoints L·B·T·C·t" % B)
        c.equal(num(m.group(2)), ckpt, "B = %d: checkpoints L·B·T·C·t" % B)
        c.equal(num(m.group(3)), ckpt, "B = %d: measured checkpoints" % B)
        kept = block(B, C, H, T) + outside(B, C, T)
        c.equal(num(m.group(4)), kept, "B = %d: one block + outside" % B)
        c.equal(num(m.group(5)), kept, "B = %d: measured activations with checkpointing" % B)
        if B in plain:
            c.equal(m.group(6), "%.2f" % ((ckpt + kept) / plain[B]), "B = %d: kept" % B)
    losses = re.findall(r"^  loss  step 1: \S+   step 4: \S+$", c.out, re.M)
    c.equal(len(losses), 2, "loss lines")
    if len(losses) == 2:
        c.equal(losses[1], losses[0], "the checkpointed run's losses")
    c.find(r"out of memory", "the plain run's out-of-memory error under the budget")
    arena = 10 * 2 ** 20
    m = c.find(r"^  no checkpointing: predicted peak %s B > the arena's %s B" % (NUM, NUM), "the plain run's peak")
    if m:
        c.equal(num(m.group(2)), arena, "the arena of --memory-budget-mb 10")
        if num(m.group(1)) <= arena:
            c.failures.append("the plain run's predicted peak %s fits the arena" % m.group(1))
    m = c.find(r"^  --checkpoint-activations: predicted peak %s B < %s B; it trains, peak %s B$" % (NUM, NUM, NUM),
               "the checkpointed run's peak")
    if m:
        predicted, cap, peak = (num(g) for g in m.groups())
        c.equal(cap, arena, "the arena of --memory-budget-mb 10")
        c.equal(peak, predicted, "the checkpointed run's measured peak")
        if predicted >= arena:
            c.failures.append("the checkpointed run's predicted peak %d does not fit the arena" % predicted)


def check_chapter11(c):
    L, C, H, T, B, G = 2, 64, 4, 32, 8, 16
    c.verified(8)
    m = c.find(r"^Rank 0 per step, .*: L = (\d+), C = (\d+), H = (\d+), T = (\d+), V = (\d+), bf16 \(t = (\d+)\)",
               "the shape")
    if m:
        c.equal(tuple(map(int, m.groups())), (L, C, H, T, V, T_BYTES), "L, C, H, T, V, t")
    rest = c.after(r"^--- MP all-reduces", "the all-reduce table")
    for world, n_m in ((2, 2), (4, 2), (4, 4)):
        for ck in ("no", "yes"):
            what = "world %d, N_m = %d, checkpointing %s" % (world, n_m, ck)
            m = c.find(r"^ +%d +%d +%s +(\d+) +(\d+) = (\d+)·(\d+)·(\d+) \+ 1 +%s = (.*) = %s$"
                       % (world, n_m, ck, NUM, NUM), what, rest)
            if not m:
                continue
            k, a = 6 if ck == "yes" else 4, G // (B * (world // n_m))
            c.equal(int(m.group(1)), a, what + ": A")
            c.equal(int(m.group(2)), k * L * a + 1, what + ": all-reduce calls")
            c.equal(tuple(int(g) for g in m.group(3, 4, 5)), (k, L, a), what + ": k, L, A")
            sent = k * L * a * 2 * (n_m - 1) * B * T * C * 4 // n_m + 4
            c.equal(num(m.group(6)), sent, what + ": all-reduce bytes")
            c.equal(num(m.group(8)), sent, what + ": the formula's value")
            c.formula(m.group(7), sent, what)
    rest = c.after(r"^--- Activations", "the activation table")
    for n_m in (1, 2, 4):
        m = c.find(r"^ +%d +%s +%s +%s +%s +%s$" % (n_m, NUM, NUM, NUM, NUM, NUM), "activations at N_m = %d" % n_m, rest)
        if not m:
            continue
        whole, measured, one, measured_ck, ckpt = (num(g) for g in m.groups())
        c.equal(whole, L * block(B, C, H, T, n_m) + outside(B, C, T), "N_m = %d: L blocks + outside" % n_m)
        c.equal(measured, whole, "N_m = %d: measured activations" % n_m)
        c.equal(one, block(B, C, H, T, n_m) + outside(B, C, T), "N_m = %d: one block + outside" % n_m)
        c.equal(measured_ck, one, "N_m = %d: measured activations with checkpointing" % n_m)
        c.equal(ckpt, L * B * T * C * T_BYTES, "N_m = %d: checkpoints L·B·T·C·t" % n_m)
    m = c.find(r"^  checkpoints: L·B·T·C·t = ([0-9·]+) = %s on every MP rank" % NUM, "the checkpoints' formula")
    if m:
        c.formula(m.group(1), L * B * T * C * T_BYTES, "checkpoints")
        c.equal(num(m.group(2)), L * B * T * C * T_BYTES, "checkpoints L·B·T·C·t")
    # section 3's layer: C = 1600, B = 8, T = 1024, fp16 planned with FP32 sums; 4 all-reduces + the flag
    sent = [int(g) for g in re.findall(r"^  rank 0 \(dp 0, mp 0\)  mp all_reduce +5 calls +(\d+) B", c.out, re.M)]
    want = [4 * 2 * (n - 1) * 8 * 1024 * 1600 * 4 // n + 4 for n in (8, 16)]
    c.equal(sent, want, "zero-plan's MP all-reduce bytes at N_m = 8 and 16")
    c.equal(len(re.findall(r"^time estimate: ", c.out, re.M)), 3, "zero-plan's time estimates")


def check_chapter12(c):
    L, C, T, B, A, n_m, t = 2, 64, 32, 8, 1, 2, T_BYTES
    E = -(-B * T * C // n_m)
    c.verified(3)
    m = c.find(r"^Rank 0 per step, .*: L = (\d+), C = (\d+), T = (\d+), B = (\d+), A = (\d+), N_m = (\d+),\n"
               r"bf16 \(t = (\d+)\)", "the shape")
    if m:
        c.equal(tuple(map(int, m.groups())), (L, C, T, B, A, n_m, t), "L, C, T, B, A, N_m, t")

    def row(label, body):
        return c.find(r"^  " + re.escape(label) + r" +" + body + "$", label)

    def formula_row(label, form, want, measured_tail=""):
        """A row 'label  FORM = value  measured[tail]': the value and the measured equal want."""
        m = row(label, re.escape(form) + r" = (.+) = " + NUM + " +" + NUM + measured_tail)
        if m:
            c.formula(m.group(1), want, label)
            c.equal((num(m.group(2)), num(m.group(3))), (want, want), label + " (closed form, measured)")
        return m

    off = L * B * T * C * t
    formula_row("checkpoints, off", "L·B·T·C·t", off)
    m = formula_row("checkpoints, on", "L·E·t", L * E * t, " = " + NUM + "/N_m")
    if m:
        c.equal(num(m.group(4)), off, "checkpoints, on: off's")
        c.equal(L * E * t * n_m, off, "checkpoints, on: 1/N_m of off's (N_m divides B·T·C here)")
    m = row("MP all-gathers, on", r"off's (\d+) \+ L·A = (\d+) \+ (\d+)·(\d+) = (\d+) +(\d+)")
    if m:
        base = int(m.group(1))
        c.equal(tuple(int(g) for g in m.group(2, 3, 4)), (base, L, A), "MP all-gathers: off's, L, A")
        c.equal((int(m.group(5)), int(m.group(6))), (base + L * A,) * 2, "MP all-gather calls with P_a")
    m = row("MP all-gather bytes, on", r"off's (\d+) \+ L·A·\(N_m−1\)·E·t = (.+) = " + NUM + " +" + NUM)
    if m:
        want = int(m.group(1)) + L * A * (n_m - 1) * E * t
        c.formula(m.group(2), want, "MP all-gather bytes, on")
        c.equal((num(m.group(3)), num(m.group(4))), (want, want), "MP all-gather bytes with P_a")
    m = row("cpu: checkpoints", r"none on the accelerator: 0 +(\d+)")
    if m:
        c.equal(int(m.group(1)), 0, "cpu: checkpoints on the accelerator")
    formula_row("cpu: staging", "2·E·t", 2 * E * t)
    formula_row("cpu: host checkpoints", "L·E·t", L * E * t)
    m = row("cpu: to host", r"L·A·E·t = (.+) = %s in L·A = (\d+) copies +%s in (\d+)" % (NUM, NUM))
    if m:
        c.formula(m.group(1), L * A * E * t, "cpu: to host")
        c.equal((num(m.group(2)), int(m.group(3)), num(m.group(4)), int(m.group(5))),
                (L * A * E * t, L * A) * 2, "cpu: to host, bytes and copies")
    m = row("cpu: back", r"the same, %s in (\d+) copies +%s in (\d+)" % (NUM, NUM))
    if m:
        c.equal((num(m.group(1)), int(m.group(2)), num(m.group(3)), int(m.group(4))),
                (L * A * E * t, L * A) * 2, "cpu: back, bytes and copies")
    m = c.find(r"^P_a's all-gathers against the MP all-reduces: \(%s − (\d+)\) / %s = ([0-9.]+)%%,\n"
               r"t/48 = ([0-9.]+)%% with FP32 sums; the paper's 1/12 = ([0-9.]+)%%" % (NUM, NUM), "the share line")
    if m:
        on, base, ar = num(m.group(1)), int(m.group(2)), num(m.group(3))
        c.equal(on - base, L * A * (n_m - 1) * E * t, "the share's P_a bytes")
        share = (on - base) / ar
        c.equal(m.group(4), "%.2f" % (100 * share), "the printed share")
        c.equal((m.group(5), m.group(6)), ("%.2f" % (100 * t / 48), "%.2f" % (100 / 12)), "t/48 and 1/12")
        c.equal(m.group(4), m.group(5), "the share against t/48")
        if share >= 0.10:
            c.failures.append("P_a's share %.4f is not under the paper's 10%%" % share)
    m = c.find(r"^smallest capacity, general first-fit layout: (\d+) bytes\n"
               r"smallest capacity, M_D layout: +(\d+) bytes", "the replay's capacities")
    if m and int(m.group(2)) >= int(m.group(1)):
        c.failures.append("M_D's capacity %s is not below the general layout's %s" % (m.group(2), m.group(1)))
    m = c.find(r"^  general  fails at event \d+: .* requested (\d+) bytes .*; free (\d+) bytes of \d+, "
               r"largest free block (\d+) bytes\n +free bytes >= the request: fragmentation\n  M_D +fits$",
               "the replay's fragmentation failure")
    if m:
        request, free, largest = (int(g) for g in m.groups())
        if not free >= request > largest:
            c.failures.append("replay: free %d, request %d, largest hole %d is not fragmentation" % (free, request, largest))
    c.find(r"--allocator general\n.*out of memory", "the general allocator's out-of-memory line")
    m = c.find(r"--allocator zero\n  loss  step 1: \S+   step 2: \S+\n  peak %s B \(predicted %s\) of the arena's %s B$"
               % (NUM, NUM, NUM), "the zero allocator's run")
    if m:
        peak, predicted, arena = (num(g) for g in m.groups())
        c.equal(arena, int(5.9 * 2 ** 20), "the arena of --memory-budget-mb 5.9")
        c.equal(peak, predicted, "the zero allocator's measured peak")
        if peak > arena:
            c.failures.append("the zero allocator's peak %d exceeds the arena %d" % (peak, arena))


def main(argv):
    checks = {"10": check_chapter10, "11": check_chapter11, "12": check_chapter12}
    if len(argv) != 2 or argv[1] not in checks:
        sys.exit("usage: check_printed_lesson.py 10|11|12 < run.sh's output")
    c = Checker(sys.stdin.read())
    checks[argv[1]](c)
    lines = c.out.count("\n")
    if lines > 58:
        c.failures.append("%d lines printed; make's two header lines leave 58" % lines)
    for f in c.failures:
        print("chapter %s's run.sh: %s" % (argv[1], f))
    if not c.failures:
        print("check_printed_lesson: chapter %s's printed lesson agrees with its closed forms" % argv[1])
    return 1 if c.failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
