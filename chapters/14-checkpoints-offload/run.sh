#!/usr/bin/env bash
# Chapter 14's demonstration: a run saved every 100 steps and killed (SIGKILL) after step 100,
# resumed at two other layouts, each ending bitwise where the uninterrupted run ends; the
# checkpoint inspected, consolidated into one FP32 file and exported as safetensors.
# Every layout uses micro-batches of 8 sequences (the global batch of 32 is 4 of them), so each
# meets chapter 6's schedule conditions and the uninterrupted run is also the one-device one.
set -euo pipefail
build=${1:-build}
work=$(mktemp -d /tmp/zt-ch14-XXXXXX)
trap 'rm -rf "$work"' EXIT
zt="$build/bin/zero-train"
ckpt="$build/bin/zero-ckpt"
run=(--steps 200 --eval-every 100 --micro-batch 8 --ranks-as threads)
echo "--- 1. 200 steps straight through: stage 2 on 4 ranks"
"$zt" "${run[@]}" --stage 2 --world-size 4 --dump-params "$work/whole.params" | grep -E "^step|loss  step"
echo "--- 2. the same run, saving every 100 steps, killed with SIGKILL right after the save of step 100"
# (in a subshell whose stderr is dropped: bash reports the kill of a foreground job there)
status=$( (ZT_KILL_AFTER_STEP=100 "$zt" "${run[@]}" --stage 2 --world-size 4 --save-dir "$work/ckpt" \
  --save-every 100 >/dev/null 2>&1; echo $?) 2>/dev/null)
echo "  exit status $status (128 + 9: SIGKILL); what the save directory holds: $(ls "$work/ckpt" | tr '\n' ' ')"
echo "--- 3. zero-ckpt inspect --verify"
"$ckpt" inspect "$work/ckpt" --verify | sed "s|$work|<work>|g"
echo "--- 4. resumed from it at other layouts"
for layout in "--stage 3 --world-size 2" "--stage 0 --world-size 1"; do
  echo "  $layout:"
  # shellcheck disable=SC2086 # the layout is two flags
  "$zt" "${run[@]}" $layout --resume "$work/ckpt" --dump-params "$work/resumed.params" |
    grep -E "^step|loss  step|resumed" | sed -e "s|$work|<work>|g" -e 's/^/  /'
  if cmp -s "$work/whole.params" "$work/resumed.params"; then
    echo "    final FP32 master weights: bitwise equal to the uninterrupted run"
  else
    echo "    final FP32 master weights: DIFFERENT from the uninterrupted run"
    exit 1
  fi
done
echo "--- 5. one FP32 file (as --dump-params writes it) and a safetensors export"
"$ckpt" consolidate "$work/ckpt" "$work/step100.fp32" | sed "s|$work|<work>|g"
"$ckpt" export "$work/ckpt" "$work/export" --format safetensors | sed "s|$work|<work>|g"
echo "  sizes: step100.fp32 $(stat -c %s "$work/step100.fp32") B, $(cd "$work/export" && stat -c '%n %s B' -- * | paste -sd ' ')"
