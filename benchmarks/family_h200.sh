#!/usr/bin/env bash
# Profile a task family on one H200, in one command, from the repository root:
#     OUT=/some/dir [FAMILY=1|2] bash benchmarks/family_h200.sh
# What it runs: d2k-profile over tasks/<id> (the expert, with the reference timed beside it),
# corpus/<id> (every corpus kernel) and tests/adversarial/task_cases/<id> (the task's adversarial
# cases, expected statuses in tests/adversarial/task_cases/expected.toml) of each task, on every
# timed workload and seed, plus
# --self-check (the reference against itself: the noise floor), all in ONE d2k-profile command
# whose wall time is the family's profiling time. Then benchmarks/family_summary.py prints, per
# task x workload x submission: status, median ms, speedup vs the reference and vs the expert, the
# achieved GB/s from reference.py's minimum-traffic bytes_moved as a fraction of the H200's
# measured ~4.3 TB/s copy bandwidth (PEAK_GBPS), the achieved TFLOP/s from reference.py's flops as
# a fraction of the measured tensor-core peak of the operand type (PEAK_TFLOPS), and the experts'
# roofline fractions (the larger of the two) at the end.
# Settings (environment):
#   FAMILY    1 (default): the memory-bound tasks rmsnorm_residual swiglu reduce_sum transpose
#             cross_entropy rope prefix_scan histogram; 2: the GEMM variants and convolution
#             gemm_splitk_skinny grouped_gemm_moe fp8_gemm_blockscale w4a16_gemm conv2d_nhwc
#   TASKS     task ids (default: the tasks of FAMILY that exist here; any task id, pilots too)
#   CORPUS=0  the experts only (each with its reference and self-check), no corpus kernels and no
#             adversarial cases: the table of the present experts in a few minutes
#   BUDGET    d2k-profile --budget, timing seconds per workload (default 0.5: the family then runs
#             in ~3-5 minutes; the pilot run took 366 s for 92 records at 1.0)
#   DEADLINE  seconds for the whole d2k-profile command (default 480, under a 10-minute limit)
#   SMOKE=1   CPU check of this script: --smoke --cpu (no timing; CUDA C++ marked skipped)
#   PHASE     all (default): run in the foreground, then summarise.
#             start: copy the repository to $WORK/repo and start the run there in its own process
#             session (it outlives this command), then wait up to WAIT seconds; wait: wait up to
#             WAIT seconds more for a run started earlier. Either summarises once the run is done.
#             For a run longer than one device command: PHASE=start, then PHASE=wait calls while
#             the machine is still warm (the run's wall time is the one d2k-profile command's).
#   WAIT      seconds a start/wait call waits (default 540)
# Results in $OUT (at most 4 files): summary.txt (machine, the command's wall time, the table),
# console.log (everything printed), raw.tgz (results.jsonl, summary.csv, environment.json, logs).
set -u
export PYTHONPATH=.${PYTHONPATH:+:$PYTHONPATH} TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0} PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/d2k-family-out}
WORK=${WORK:-/tmp/d2k-family-work}
BUDGET=${BUDGET:-0.5}
DEADLINE=${DEADLINE:-480}
PEAK_GBPS=${PEAK_GBPS:-4300}
PEAK_TFLOPS=${PEAK_TFLOPS:-bf16=790,fp8=1411}
case "${FAMILY:-1}" in
  1) MEMBERS="rmsnorm_residual swiglu reduce_sum transpose cross_entropy rope prefix_scan histogram" ;;
  2) MEMBERS="gemm_splitk_skinny grouped_gemm_moe fp8_gemm_blockscale w4a16_gemm conv2d_nhwc" ;;
  *) echo "FAMILY must be 1 or 2, not ${FAMILY}" >&2; exit 2 ;;
esac
mkdir -p "$OUT" "$WORK"
SUM="$OUT/summary.txt"; LOG="$OUT/console.log"
: > "$SUM"; : > "$LOG"
note() { echo "$*" | tee -a "$SUM"; }

paths=(); names=()
for t in ${TASKS:-$MEMBERS}; do
  [ -f "tasks/$t/task.toml" ] || { [ -n "${TASKS:-}" ] && note "task $t: no tasks/$t/task.toml, left out"; continue; }
  paths+=("tasks/$t"); names+=("$t")
  [ "${CORPUS:-1}" = 0 ] && continue
  [ -d "corpus/$t" ] && paths+=("corpus/$t")
  [ -d "tests/adversarial/task_cases/$t" ] && paths+=("tests/adversarial/task_cases/$t")
done
if [ ${#paths[@]} -eq 0 ]; then note "no task folder of family ${FAMILY:-1} found under tasks/"; exit 2; fi

extra=(--budget "$BUDGET" --jobs "$(nproc 2>/dev/null || echo 4)")
[ "${SMOKE:-0}" = 1 ] && extra=(--smoke --cpu --jobs 2)
{
  echo "== machine"
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader 2>/dev/null || echo "no nvidia-smi"
  python3 -c "import torch, triton; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__)"
  echo "nvcc: $(nvcc --version 2>/dev/null | tail -1)"
  echo "tasks: ${names[*]}"
  echo "command: d2k-profile ${paths[*]} --self-check ${extra[*]} --out \$WORK/run"
} >> "$SUM" 2>&1

summarise() {  # rc and wall time from the run's own files, then the table and the raw files
  rc=$(cat "$WORK/rc"); wall=$(python3 -c "print(f'{$(cat "$WORK/t1")-$(cat "$WORK/t0"):.1f}')")
  what="experts, corpus, reference self-checks"; [ "${CORPUS:-1}" = 0 ] && what="experts and reference self-checks only"
  note "== d2k-profile rc=$rc wall $wall s (one command: ${#names[@]} tasks, $what)"
  [ "$rc" -eq 124 ] && note "   (stopped at the ${DEADLINE} s deadline: the records finished so far are kept; rerun with --resume semantics or a smaller BUDGET)"
  if [ -f "$WORK/run/results.jsonl" ]; then
    python3 benchmarks/family_summary.py "$WORK/run/results.jsonl" --peak-gbps "$PEAK_GBPS" --peak-tflops "$PEAK_TFLOPS" >> "$SUM" 2>> "$LOG" \
      || note "summary failed (see console.log)"
  else
    note "no results.jsonl (see console.log)"
  fi
  cp "$WORK/console.log" "$LOG" 2>/dev/null
  tail -n 25 "$LOG" > "$WORK/run/console_tail.txt" 2>/dev/null
  (cd "$WORK" && tar czf "$OUT/raw.tgz" --exclude='*/build/*' run 2>/dev/null)
  cat "$SUM"
  exit "$rc"
}

wait_for_run() {  # until the run wrote its rc, or $1 seconds; progress every minute
  local until=$(( $(date +%s) + $1 ))
  while [ ! -f "$WORK/rc" ] && [ "$(date +%s)" -lt "$until" ]; do
    sleep 10
    [ $(( $(date +%s) % 60 )) -lt 10 ] && echo "$(date +%T) records so far: $(wc -l < "$WORK/run/results.jsonl" 2>/dev/null || echo 0)"
  done
  [ -f "$WORK/rc" ]
}

PHASE=${PHASE:-all}
if [ "$PHASE" = wait ]; then
  [ -f "$WORK/t0" ] || { note "PHASE=wait: no run was started in $WORK"; exit 2; }
  wait_for_run "${WAIT:-540}" && summarise
  note "still running after this call's wait: $(wc -l < "$WORK/run/results.jsonl" 2>/dev/null || echo 0) records; call PHASE=wait again"
  cp "$WORK/console.log" "$LOG" 2>/dev/null; exit 3
fi

rm -rf "$WORK/run" "$WORK/rc" "$WORK/t1"
cmd=(timeout -k 10 "$DEADLINE" python3 -m d2k_profile.cli "${paths[@]}" --self-check "${extra[@]}" --out "$WORK/run")
if [ "$PHASE" = start ]; then
  # a copy of the tree: the device tool refreshes the checkout before the next call
  rm -rf "$WORK/repo"; mkdir -p "$WORK/repo"; cp -a . "$WORK/repo/"
  date +%s.%N > "$WORK/t0"
  (cd "$WORK/repo" && setsid bash -c '"$@" > "$0/console.log" 2>&1; echo $? > "$0/rc.tmp"; date +%s.%N > "$0/t1"; mv "$0/rc.tmp" "$0/rc"' \
     "$WORK" "${cmd[@]}" < /dev/null > /dev/null 2>&1 &)
  wait_for_run "${WAIT:-540}" && summarise
  note "started; still running after this call's wait: call PHASE=wait next (while the machine is warm)"
  cp "$WORK/console.log" "$LOG" 2>/dev/null; exit 3
fi
date +%s.%N > "$WORK/t0"
"${cmd[@]}" > "$WORK/console.log" 2>&1
echo $? > "$WORK/rc"; date +%s.%N > "$WORK/t1"
summarise
