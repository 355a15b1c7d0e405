#!/usr/bin/env bash
# scripts/run_main.sh BUILD — the project's main job on its embedded default dataset.
set -euo pipefail
build=$1
if [[ -x "$build/bin/zero-train" ]]; then
  exec "$build/bin/zero-train" --summary-json "$build/run-summary.json"
fi
exec "$build/bin/chapter-01"
