#!/usr/bin/python3
"""scripts/test_report.py BUILD PHASES — the table `make test` prints at its end: where the time went.

PHASES is the file scripts/test_all.sh writes, one line per phase: NAME<TAB>SECONDS<TAB>EXIT.
The ctest phase is broken down from CTest's own records: BUILD/test-report/junit.xml (each test's
seconds) and `ctest --show-only=json-v1` (each test's labels). Each test is counted once, under its
most specific label (replay, figures, then its first chapter label chN, then docs, setup, fuzz,
gpu); tests run TEST_JOBS at a time, so these test-seconds add up to more than the ctest phase's
wall time. Then the ten slowest tests. The table is a measurement of this machine and this run only.
It is also written to BUILD/test-report/phases.txt. It prints nothing it cannot read (a build that
failed leaves no junit file), and never fails the run it reports on.
"""
import json
import os
import platform
import subprocess
import sys
import xml.etree.ElementTree as ET

# A test's row: the first of these labels it carries, else its first chapter label, else "other".
SPECIFIC = ["replay", "figures"]
GENERAL = ["docs", "setup", "fuzz", "gpu"]


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def test_labels(build):
    """Test name -> its CTest labels."""
    try:
        out = subprocess.run(["ctest", "--test-dir", build, "--show-only=json-v1"], capture_output=True, text=True,
                             check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return {}
    labels = {}
    for t in json.loads(out).get("tests", []):
        for p in t.get("properties", []):
            if p["name"] == "LABELS":
                labels[t["name"]] = p["value"]
    return labels


def row_of(labels):
    for name in SPECIFIC:
        if name in labels:
            return name
    chapters = [lab for lab in labels if lab.startswith("ch") and lab[2:].isdigit()]
    if chapters:
        return chapters[0]
    for name in GENERAL:
        if name in labels:
            return name
    return "other"


def row_order(name):
    if name.startswith("ch") and name[2:].isdigit():
        return (0, int(name[2:]), name)
    order = GENERAL + SPECIFIC + ["other"]
    return (1, order.index(name) if name in order else len(order), name)


def test_times(build):
    """[(seconds, name, status)] from CTest's junit file; [] if there is none."""
    path = os.path.join(build, "test-report", "junit.xml")
    if not os.path.exists(path):
        return []
    rows = []
    for case in ET.parse(path).getroot().iter("testcase"):
        rows.append((float(case.get("time", 0)), case.get("name"), case.get("status", "")))
    return rows


PHASE_TITLES = {
    "install": "install (make deps)",
    "configure": "configure (cmake)",
    "build": "build",
    "ctest": "ctest (wall time)",
    "gpu-build-check": "GPU build check",
    "doxygen": "Doxygen",
    "notebooks": "notebooks",
}


def main(build, phases_file):
    jobs = os.environ.get("JOBS", str(os.cpu_count() or 1))
    test_jobs = os.environ.get("TEST_JOBS", jobs)
    phases = []
    with open(phases_file) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) == 3:
                phases.append((parts[0], float(parts[1]), int(parts[2])))
    lines = ["make test: where the time went (%s CPUs, %s; %s compiles, %s tests at a time)" %
             (os.cpu_count(), cpu_model(), jobs, test_jobs),
             "  %-44s %8s" % ("phase", "seconds")]
    times = test_times(build)
    labels = test_labels(build) if times else {}
    for name, secs, rc in phases:
        title = PHASE_TITLES.get(name, name)
        lines.append("  %-44s %8.1f%s" % (title, secs, "" if rc == 0 else "   FAILED (exit %d)" % rc))
        if name == "ctest" and times:
            by_row = {}
            for secs_t, test, _ in times:
                row = row_of(labels.get(test, []))
                n, s = by_row.get(row, (0, 0.0))
                by_row[row] = (n + 1, s + secs_t)
            lines.append("    test-seconds by label (%s tests at a time, so they add up to more):" % test_jobs)
            for row in sorted(by_row, key=row_order):
                n, s = by_row[row]
                title = {"replay": "docs replay (quoted runs, exercises)", "figures": "figures (runs, drawings)"}.get(
                    row, row)
                lines.append("      %-42s %8.0f   %3d tests" % (title, s, n))
    lines.append("  %-44s %8.1f" % ("total", sum(s for _, s, _ in phases)))
    if times:
        lines.append("  the ten slowest tests (seconds):")
        for secs_t, test, status in sorted(times, reverse=True)[:10]:
            lines.append("    %7.1f  %s%s" % (secs_t, test, "" if status in ("run", "") else "  (" + status + ")"))
    text = "\n".join(lines)
    print(text)
    out_dir = os.path.join(build, "test-report")
    if os.path.isdir(out_dir):
        with open(os.path.join(out_dir, "phases.txt"), "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: test_report.py BUILD PHASES")
    try:
        main(sys.argv[1], sys.argv[2])
    except Exception as e:  # noqa: BLE001 - the report must never hide the run's own result
        print("test_report: could not print the table: %s" % e)
