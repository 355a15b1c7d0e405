#!/usr/bin/env python3
"""The lines of a zero-train summary that chapters 10 and 11 talk about.

Prints rank 0's activation categories from the ledger and, when the run had a model-parallel
group that communicated, that group's calls and bytes per step. Reads the JSON that
`zero-train --summary-json FILE` wrote; it is a display helper for the chapters' run.sh
scripts, not a checker (the chapters' tests compare the printed lines with quotes.json).
usage: scripts/show_activations.py SUMMARY.json
"""
import json
import sys

if len(sys.argv) != 2:
    sys.exit("usage: show_activations.py SUMMARY.json")
with open(sys.argv[1]) as f:
    j = json.load(f)
m = j["memory"]["per_rank"][0]["by_category"]
print(f"  rank 0 activations {m['activations']:,} B, "
      f"activation_checkpoints {m.get('activation_checkpoints', 0):,} B")
mp = j.get("comm", {}).get("groups", {}).get("mp", {})
if mp.get("calls_per_step"):
    print(f"  model-parallel group per step: calls {mp['calls_per_step']}, "
          f"bytes sent {mp['bytes_sent_per_step']}")
