#!/usr/bin/env bash
# Verify d2k-profile on one H200 in a single device call (about 9 minutes); everything lands in $OUT
# (at most 8 files). Run from the repository root:
#     OUT=/some/dir bash benchmarks/profile_h200.sh
# STEPS selects steps (default "ae f c d"):
#   ae  full pilot run (tasks/ + corpus/ + reference self-check = noise floor), SIGKILLed part-way
#       and finished with --resume; checks nothing finished was lost or duplicated; wall time
#   f   adversarial suite on the GPU, statuses against tests/adversarial/expected.toml
#   c   event medians vs torch.profiler kernel times on every pilot workload
#   d   ncu --nvtx --nvtx-include on one of our range names
# Every step has its own time limit; a failing step never stops the others.
set -u
export PYTHONPATH=.${PYTHONPATH:+:$PYTHONPATH} TORCH_CUDA_ARCH_LIST=9.0 PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/d2k-h200-out}
STEPS=${STEPS:-"ae f c d"}
BUDGET=${BUDGET:-0.25}
WORK=${WORK:-/tmp/d2k-h200-work}
mkdir -p "$OUT" "$WORK"
LOG="$OUT/console.log"          # 1: everything printed by every step
SUM="$OUT/summary.txt"          # 2: the step table and the key numbers
: > "$LOG"; : > "$SUM"
ROWS=()

note() { echo "$*" | tee -a "$SUM"; }
row() { ROWS+=("$(printf '%-34s %-6s %6ss  %s' "$1" "$2" "$3" "$4")"); }

nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm --format=csv >> "$SUM" 2>&1
python3 -c "import torch, triton; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__)" >> "$SUM" 2>&1

# --- (a)+(e): pilot run, killed mid-way, resumed ------------------------------------------------
if [[ " $STEPS " == *" ae "* ]]; then
  P="$WORK/pilot"; rm -rf "$P"
  args=(tasks corpus --self-check --out "$P" --budget "$BUDGET" --jobs 16 --timeout 120 --build-timeout 300)
  echo "== (a) pilot run, first part" >> "$LOG"
  t0=$(date +%s.%N)
  python3 -m d2k_profile.cli "${args[@]}" >> "$LOG" 2>&1 &
  pid=$!
  KILL_AT=${KILL_AT:-24}
  for _ in $(seq 1 240); do
    kill -0 "$pid" 2>/dev/null || break
    n=$(cat "$P/results.jsonl" 2>/dev/null | wc -l)
    [ "$n" -ge "$KILL_AT" ] && break
    sleep 1
  done
  kill -KILL "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
  t1=$(date +%s.%N)
  cp "$P/results.jsonl" "$WORK/before_kill.jsonl" 2>/dev/null || : > "$WORK/before_kill.jsonl"
  sleep 2  # workers die with their parent (PR_SET_PDEATHSIG)
  echo "== (e) SIGKILLed after $(wc -l < "$WORK/before_kill.jsonl") records; resuming" >> "$LOG"
  timeout -k 10 330 python3 -m d2k_profile.cli "${args[@]}" --resume >> "$LOG" 2>&1
  rc=$?
  t2=$(date +%s.%N)
  wall=$(python3 -c "print(f'{$t1-$t0+$t2-$t1:.0f}')")
  cp "$P/results.jsonl" "$OUT/pilot_results.jsonl" 2>/dev/null   # 3
  cp "$P/environment.json" "$OUT/environment.json" 2>/dev/null    # 4
  n=$(cat "$OUT/pilot_results.jsonl" 2>/dev/null | wc -l)
  row "(a) pilot run (kill + resume)" "$rc" "$wall" "$n records; wall = first part $(python3 -c "print(f'{$t1-$t0:.0f}')") s + resume $(python3 -c "print(f'{$t2-$t1:.0f}')") s"
  { echo; echo "== (a) summary"; cat "$P/summary.csv" 2>/dev/null; } >> "$SUM"
  res=$(python3 benchmarks/profile_check_results.py resume "$WORK/before_kill.jsonl" "$P/results.jsonl" 2>&1); rc=$?
  note "== (e) resume: $res"
  row "(e) resume after SIGKILL" "$rc" "-" "$res"
  { echo; echo "== (b) noise floor (reference vs itself)"; python3 benchmarks/profile_check_results.py noise "$P/results.jsonl"; } >> "$SUM" 2>&1
  row "(b) noise floor" "$?" "-" "see summary.txt"
fi

# --- (f): adversarial suite -------------------------------------------------------------------
if [[ " $STEPS " == *" f "* ]]; then
  A="$WORK/adv"; rm -rf "$A"
  s=$(date +%s)
  echo "== (f) adversarial suite" >> "$LOG"
  timeout -k 10 240 python3 -m d2k_profile.cli tests/adversarial/cases --task tests/profile/fixtures/toy_softmax \
      --workloads m8192_n8192 --timeout 30 --budget 0.2 --jobs 16 --out "$A" >> "$LOG" 2>&1
  rc=$?
  cp "$A/results.jsonl" "$OUT/adversarial_results.jsonl" 2>/dev/null  # 5
  { echo; echo "== (f) adversarial suite on the GPU (rc $rc)"; python3 benchmarks/profile_check_results.py adversarial "$A/results.jsonl"; } >> "$SUM" 2>&1
  row "(f) adversarial suite" "$?" "$(( $(date +%s) - s ))" "$(tail -1 "$SUM")"
fi

# --- (c): events vs torch.profiler ------------------------------------------------------------
if [[ " $STEPS " == *" c "* ]]; then
  s=$(date +%s)
  timeout -k 10 120 python3 benchmarks/profile_crosscheck.py softmax layernorm gemm_bf16 > "$OUT/crosscheck.txt" 2>&1  # 6
  rc=$?
  row "(c) events vs torch.profiler" "$rc" "$(( $(date +%s) - s ))" "$(tail -1 "$OUT/crosscheck.txt")"
fi

# --- (d): ncu on one NVTX range ---------------------------------------------------------------
if [[ " $STEPS " == *" d "* ]]; then
  s=$(date +%s)
  NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
  RANGE="d2k/softmax/m8192_n1024/expert"
  {
    echo "ncu: ${NCU:-not found}"
    # ncu splits --nvtx-include on '/' (nested push/pop ranges), and our names contain '/':
    # escape them; the unescaped and regex forms are kept to show the difference.
    for inc in "${RANGE//\//\\/}/" "regex:${RANGE//\//.}" "$RANGE/"; do
      [ -z "$NCU" ] && break
      echo "== ncu --nvtx --nvtx-include \"$inc\" --clock-control none"
      rm -rf "$WORK/ncu"
      timeout -k 10 100 "$NCU" --target-processes all --nvtx --nvtx-include "$inc" --clock-control none \
          --metrics gpu__time_duration.sum \
          python3 -m d2k_profile.cli tasks/softmax --workloads m8192_n1024 --budget 0.05 --no-prebuild --out "$WORK/ncu" 2>&1 \
        | grep -v "^d2k-profile\|━" | tail -60
      echo "rc=${PIPESTATUS[0]}"
    done
  } > "$OUT/ncu.txt" 2>&1  # 7
  row "(d) ncu --nvtx-include" "-" "$(( $(date +%s) - s ))" "see ncu.txt ($(grep -c 'gpu__time_duration.sum' "$OUT/ncu.txt") kernel metric lines)"
fi

{
  echo
  echo "== steps"
  printf '%-34s %-6s %7s  %s\n' step rc seconds result
  for r in "${ROWS[@]}"; do echo "$r"; done
} | tee -a "$SUM"
