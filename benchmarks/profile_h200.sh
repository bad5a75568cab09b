#!/usr/bin/env bash
# Verify d2k-profile on one H200; everything lands in $OUT (at most 8 files). Run from the
# repository root:
#     OUT=/some/dir STEPS="a" bash benchmarks/profile_h200.sh
# STEPS selects steps (default "a"; each step has its own time limit and a failing step never stops
# the others; "a" alone takes about 7 minutes, "f c d" about 5):
#   a   full pilot run in one go (tasks/ + corpus/ + reference self-check = noise floor): wall time,
#       statuses, noise floor, and event medians against the CUPTI kernel times of every record
#   e   the same run SIGKILLed part-way and finished with --resume: nothing lost or duplicated
#   t   kernel trace on vs off (--no-kernel-trace) on softmax + layernorm: tracing must not move
#       the event medians of later workloads
#   f   adversarial suite on the GPU, statuses against tests/adversarial/expected.toml
#   c   event medians vs torch.profiler kernel times per stream-hold length, every pilot workload
#   d   ncu --nvtx --nvtx-include on one of our range names
set -u
export PYTHONPATH=.${PYTHONPATH:+:$PYTHONPATH} TORCH_CUDA_ARCH_LIST=9.0 PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/d2k-h200-out}
STEPS=${STEPS:-"a"}
BUDGET=${BUDGET:-0.25}
WORK=${WORK:-/tmp/d2k-h200-work}
mkdir -p "$OUT" "$WORK"
LOG="$OUT/console.log"          # 1: everything printed by every step
SUM="$OUT/summary.txt"          # 2: the step table and the key numbers
: > "$LOG"; : > "$SUM"
ROWS=()
CHECK="python3 benchmarks/profile_check_results.py"

note() { echo "$*" | tee -a "$SUM"; }
row() { ROWS+=("$(printf '%-34s %-6s %6ss  %s' "$1" "$2" "$3" "$4")"); }
secs() { python3 -c "print(f'{$2-$1:.0f}')"; }

nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm --format=csv >> "$SUM" 2>&1
python3 -c "import torch, triton; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__)" >> "$SUM" 2>&1
PILOT=(tasks corpus --self-check --budget "$BUDGET" --jobs 16 --timeout 120 --build-timeout 300)

# --- (a): the whole pilot run, uninterrupted --------------------------------------------------
if [[ " $STEPS " == *" a "* ]]; then
  P="$WORK/pilot"; rm -rf "$P"
  echo "== (a) pilot run" >> "$LOG"
  t0=$(date +%s.%N)
  timeout -k 10 ${A_LIMIT:-450} python3 -m d2k_profile.cli "${PILOT[@]}" --out "$P" >> "$LOG" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  cp "$P/results.jsonl" "$OUT/pilot_results.jsonl" 2>/dev/null   # 3
  cp "$P/environment.json" "$OUT/environment.json" 2>/dev/null    # 4
  res=$($CHECK walltime "$P/results.jsonl" 2>&1)
  note "== (a) pilot run: wall $(secs "$t0" "$t1") s (whole command: discovery, parallel pre-build, every pair, summary); $res"
  row "(a) pilot run" "$rc" "$(secs "$t0" "$t1")" "$res"
  { echo; echo "== (a) summary"; cat "$P/summary.csv" 2>/dev/null; } >> "$SUM"
  { echo; echo "== (b) noise floor (reference vs itself)"; $CHECK noise "$P/results.jsonl"; } >> "$SUM" 2>&1
  row "(b) noise floor" "$?" "-" "see summary.txt"
  $CHECK kernels "$P/results.jsonl" > "$OUT/kernels.txt" 2>&1  # 5
  row "(k) events vs CUPTI, every record" "$?" "-" "$(tail -1 "$OUT/kernels.txt")"
fi

# --- (e): killed mid-way, resumed -------------------------------------------------------------
if [[ " $STEPS " == *" e "* ]]; then
  P="$WORK/resume"; rm -rf "$P"
  echo "== (e) pilot run, first part" >> "$LOG"
  t0=$(date +%s.%N)
  python3 -m d2k_profile.cli "${PILOT[@]}" --out "$P" >> "$LOG" 2>&1 &
  pid=$!
  KILL_AT=${KILL_AT:-24}
  for _ in $(seq 1 240); do
    kill -0 "$pid" 2>/dev/null || break
    n=$(cat "$P/results.jsonl" 2>/dev/null | wc -l)
    [ "$n" -ge "$KILL_AT" ] && break
    sleep 1
  done
  kill -KILL "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
  cp "$P/results.jsonl" "$WORK/before_kill.jsonl" 2>/dev/null || : > "$WORK/before_kill.jsonl"
  sleep 2  # workers die with their parent (PR_SET_PDEATHSIG)
  echo "== (e) SIGKILLed after $(wc -l < "$WORK/before_kill.jsonl") records; resuming" >> "$LOG"
  timeout -k 10 400 python3 -m d2k_profile.cli "${PILOT[@]}" --out "$P" --resume >> "$LOG" 2>&1
  rc=$?
  res=$($CHECK resume "$WORK/before_kill.jsonl" "$P/results.jsonl" 2>&1); rc2=$?
  note "== (e) resume (rc $rc): $res"
  row "(e) resume after SIGKILL" "$rc2" "$(secs "$t0" "$(date +%s.%N)")" "$res"
fi

# --- (t): kernel trace on vs off --------------------------------------------------------------
if [[ " $STEPS " == *" t "* ]]; then
  s=$(date +%s)
  for arm in on off; do
    flag=(); [ "$arm" = off ] && flag=(--no-kernel-trace)
    rm -rf "$WORK/trace-$arm"
    timeout -k 10 150 python3 -m d2k_profile.cli tasks/softmax tasks/layernorm --self-check --budget 0.5 --no-prebuild \
        "${flag[@]}" --out "$WORK/trace-$arm" >> "$LOG" 2>&1
  done
  $CHECK compare "$WORK/trace-on/results.jsonl" "$WORK/trace-off/results.jsonl" > "$OUT/trace_on_off.txt" 2>&1  # 6
  row "(t) kernel trace on vs off" "$?" "$(( $(date +%s) - s ))" "$(tail -1 "$OUT/trace_on_off.txt")"
fi

# --- (f): adversarial suite -------------------------------------------------------------------
if [[ " $STEPS " == *" f "* ]]; then
  A="$WORK/adv"; rm -rf "$A"
  s=$(date +%s)
  echo "== (f) adversarial suite" >> "$LOG"
  timeout -k 10 240 python3 -m d2k_profile.cli tests/adversarial/cases --task tests/profile/fixtures/toy_softmax \
      --workloads m8192_n8192 --timeout 30 --budget 0.2 --jobs 16 --out "$A" >> "$LOG" 2>&1
  rc=$?
  cp "$A/results.jsonl" "$OUT/adversarial_results.jsonl" 2>/dev/null  # 7
  { echo; echo "== (f) adversarial suite on the GPU (rc $rc)"; $CHECK adversarial "$A/results.jsonl"; } >> "$SUM" 2>&1
  row "(f) adversarial suite" "$?" "$(( $(date +%s) - s ))" "$(tail -1 "$SUM")"
fi

# --- (c): events vs torch.profiler ------------------------------------------------------------
if [[ " $STEPS " == *" c "* ]]; then
  s=$(date +%s)
  timeout -k 10 120 python3 benchmarks/profile_crosscheck.py softmax layernorm gemm_bf16 > "$OUT/crosscheck.txt" 2>&1  # 8
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
    # ncu splits --nvtx-include on '/' (nested push/pop ranges), and our names contain '/': escape
    # them (the unescaped and regex: forms profile nothing; set NCU_FORMS=all to show it).
    forms=("${RANGE//\//\\/}/"); [ "${NCU_FORMS:-}" = all ] && forms+=("regex:${RANGE//\//.}" "$RANGE/")
    for inc in "${forms[@]}"; do
      [ -z "$NCU" ] && break
      echo "== ncu --nvtx --nvtx-include \"$inc\" --clock-control none"
      rm -rf "$WORK/ncu"
      timeout -k 10 100 "$NCU" --target-processes all --nvtx --nvtx-include "$inc" --clock-control none \
          --metrics gpu__time_duration.sum \
          python3 -m d2k_profile.cli tasks/softmax --workloads m8192_n1024 --budget 0.05 --no-prebuild --out "$WORK/ncu" 2>&1 \
        | grep -v "^d2k-profile\|━" | tail -60
      echo "rc=${PIPESTATUS[0]}"
      # under ncu the worker leaves the CUPTI kernel trace out (ncu owns CUPTI), and says so
      grep -o 'no kernel times: [^"]*' "$WORK/ncu/results.jsonl" 2>/dev/null | sort | uniq -c
    done
  } > "$WORK/ncu.txt" 2>&1
  { echo; echo "== (d) ncu"; cat "$WORK/ncu.txt"; } >> "$SUM"
  row "(d) ncu --nvtx-include" "-" "$(( $(date +%s) - s ))" "see summary.txt ($(grep -c 'gpu__time_duration.sum' "$WORK/ncu.txt") kernel metric lines)"
fi

{
  echo
  echo "== steps"
  printf '%-34s %-6s %7s  %s\n' step rc seconds result
  for r in "${ROWS[@]}"; do echo "$r"; done
} | tee -a "$SUM"
