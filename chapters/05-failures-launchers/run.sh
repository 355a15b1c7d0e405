#!/usr/bin/env bash
# Chapter 5's demonstration: what the other ranks see when one fails, and how ranks are launched.
# 1. chapter-04's thread-ranks with rank 1 told to quit, then to stall past a 1 s timeout;
# 2. zero-launch starting 3 processes, then a 2-rank zero-train meeting through the launcher's
#    TCP store;
# 3. a 2-rank zero-train resumed from a checkpoint with one damaged byte: the cause and its echo;
# 4. a 2-rank zero-train whose rank 0 is killed with SIGKILL after step 2 (ZT_KILL_AFTER_STEP).
# Every failure is on purpose: each step prints its exit status and the script goes on.
set -uo pipefail
build=${1:-build}
bin=$(cd "$build/bin" && pwd)
export PATH="$bin:$PATH"
work=$(mktemp -d /tmp/zt-ch05-XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 2
status() { echo "(exit status $1)"; echo; }

echo "--- 1a. chapter-04, rank 1 quits before the first collective"
chapter-04 --fail-rank 1 --fail-how quit 2>&1; status $?
echo "--- 1b. chapter-04, rank 1 stalls; every other rank gives up after --timeout 1"
chapter-04 --fail-rank 1 --fail-how stall --timeout 1 2>&1; status $?

echo "--- 2a. zero-launch -n 3: the variables each rank gets"
# shellcheck disable=SC2016  # each rank's shell expands them, not this one
zero-launch -n 3 -- sh -c 'echo RANK=$RANK LOCAL_RANK=$LOCAL_RANK WORLD_SIZE=$WORLD_SIZE MASTER=$MASTER_ADDR:$MASTER_PORT' 2>&1
status $?
echo "--- 2b. zero-launch -n 2 -- zero-train: two processes meet through the launcher's TCP store"
zero-launch -n 2 -- zero-train --digits 1 --steps 2 --global-batch 16 --eval-every 0 2>&1 | grep -E "loss  step|error"
status "${PIPESTATUS[0]}"

echo "--- 3. a damaged checkpoint: rank 0 finds it (status 2), rank 1 only echoes (status 3)"
zero-train --digits 1 --steps 2 --global-batch 16 --world-size 2 --stage 1 --save-dir ck > /dev/null 2>&1
printf '\xff' | dd of=ck/step-00000002/rank-00000.bin bs=1 seek=600000 conv=notrunc 2> /dev/null
zero-train --digits 1 --steps 4 --global-batch 16 --world-size 2 --stage 1 --resume ck 2>&1 | grep -v "thread per rank"
status "${PIPESTATUS[0]}"

echo "--- 4. ZT_KILL_AFTER_STEP=2: rank 0 killed by SIGKILL after step 2 (status 128 + 9)"
ZT_KILL_AFTER_STEP=2 zero-train --digits 1 --steps 5 --global-batch 16 --world-size 2 --ranks-as processes \
  --stage 1 2>&1 | grep -v "thread per rank"
status "${PIPESTATUS[0]}"
