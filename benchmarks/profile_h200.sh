#!/usr/bin/env bash
# Verify d2k-profile on one H200. Run from the repository root:
#     OUT=/some/dir STEPS="0 b s k g n f" bash benchmarks/profile_h200.sh
# Steps run in the order below (0 b s k g n o a c f), whatever the order in STEPS. A whole-run
# deadline (DEADLINE seconds from the start, default 540) caps every step's own limit: a step
# that would start with under 15 s left is skipped and says so; f runs last and gets what is left
# (~340 s on an H200 for 31 judges).
# Everything lands in $OUT: summary.txt (the step table and key numbers), console.log (everything
# printed) and raw.tgz (every results file, log and table; rebuilt after each step), plus
# adversarial_partial.jsonl while step f runs (31 judges, ~5 minutes on an H200: a run stopped
# part-way still returns the records it finished). Steps (each with its own time limit; a failing
# step never stops the others):
#   0  the machine: GPU, driver, CUDA, ncu, CUPTI, Landlock
#   b  build the native call loop (nvcc, once per machine) and time it
#   k  CUPTI kernel times of every pilot reference and expert call per L2 flush (none, the old
#      write-only, the new write-then-read, read), against ncu --cache-control all; with NCU_WARM=N a
#      second ncu pass makes N unprofiled calls before each profiled one (clocks up, as in the timed loop);
#      the ncu passes run the configurations the CUPTI pass's autotuners chose (tuned.json); with
#      CUPTI_GAP_MS=G a second CUPTI pass idles G ms before each call (ncu's power state: no power cap)
#   s  d2k-profile tasks/softmax --self-check (the expert, and the reference against itself: the
#      noise floor on 4 workloads), default budget: when the expert's job ended after the command
#      started (environment.json), against the whole command of the code before the split (.old/)
#   f  the adversarial suite (every case, or only the cases named in ADV_CASES="a b ...") against
#      tests/adversarial/expected.toml (gpu column)
#   g  --mode graph: side_stream_sleep (capture fails: timed eagerly, still caught) and honest
#      (graph replays: ok, no false stream-join finding on graph nodes)
#   n  --no-kernel-trace: side_stream_sleep and slow_reference (which check catches them without
#      the trace; side_stream_sleep needs the trace)
#   o  with .old/ present: the issue-11 cases on the code before the split (does each really cheat?)
#   a  tasks/ --self-check: experts and references, noise floor, clean-vs-sandbox reference times,
#      events against CUPTI kernel times
#   c  corpus kernels of the three pilot tasks on one workload each (CUDA builds under the sandbox)
set -u
export PYTHONPATH=.${PYTHONPATH:+:$PYTHONPATH} TORCH_CUDA_ARCH_LIST=9.0 PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/d2k-h200-out}
STEPS=${STEPS:-"0 b s k g n f"}
DEADLINE=${DEADLINE:-540}
T_START=$(date +%s)
WORK=${WORK:-/tmp/d2k-h200-work}
mkdir -p "$OUT" "$WORK"
LOG="$OUT/console.log"
SUM="$OUT/summary.txt"
: > "$LOG"; : > "$SUM"
CHECK="python3 benchmarks/profile_check_results.py"
ADV=(tests/adversarial/cases --task tests/profile/fixtures/toy_softmax --workloads m8192_n8192 --timeout 15 --budget 0.2 --jobs 16)
NEW_CASES=(harness_frames predict_rechecks forge_via_channel patch_compare patch_flush_fill patch_tensor_sub patch_reference_module
           library_op_cpp library_op_unobserved side_stream_sleep race_the_hold slow_reference)
ROOT=$PWD

note() { echo "$*" | tee -a "$SUM"; }
left() { echo $(( DEADLINE - ($(date +%s) - T_START) )); }
# lim N: a time limit for one command: N seconds, or what is left before the deadline if less (at
# least 1: "timeout 0" would mean no limit at all)
lim() { local l; l=$(left); local n=$1; (( l < n )) && n=$l; (( n < 1 )) && n=1; echo "$n"; }
# want STEP: the step is asked for and at least 15 s are left (else a note says why it did not run)
want() { [[ " $STEPS " == *" $1 "* ]] || return 1; [ "$(left)" -ge 15 ] && return 0; note "== ($1) skipped: the ${DEADLINE} s deadline is reached"; return 1; }
secs() { python3 -c "print(f'{$2-$1:.1f}')"; }
pack() { (cd "$WORK" && find . -path ./build -prune -o -path '*/build' -prune -o -type f \( -name '*.jsonl' -o -name '*.txt' -o -name '*.csv' \
          -o -name '*.json' -o -name '*.log' \) -print | tar czf "$OUT/raw.tgz" -T - 2>/dev/null); }

# --- 0: the machine ----------------------------------------------------------------------------
if want 0; then
  NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
  {
    echo "== (0) machine"
    nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv
    python3 -c "import torch, triton, sys; print('python', sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__)"
    echo "nvcc: $(command -v nvcc) $(nvcc --version 2>/dev/null | tail -1)"; echo "ncu: ${NCU:-not found} $($NCU --version 2>/dev/null | tail -1)"
    timeout -k 5 60 python3 -c "from d2k_profile import native, confine; print('cupti:', native.cupti_library()); print('landlock ABI:', confine.landlock_abi())"
    uname -r; id -u
  } >> "$SUM" 2>&1
fi

# --- b: the native module --------------------------------------------------------------------------
if want b; then
  t0=$(date +%s.%N)
  timeout -k 5 "$(lim 300)" python3 -c "from d2k_profile import native; print(native.build(True))" >> "$LOG" 2>&1
  note "== (b) native build rc=$? in $(secs "$t0" "$(date +%s.%N)") s"
fi

# --- s: wall time of one submission over four workloads, and the noise floor -------------------------
if want s; then
  rm -rf "$WORK/s_new" "$WORK/s_old"
  t0=$(date +%s.%N); timeout -k 5 "$(lim 120)" python3 -m d2k_profile.cli tasks/softmax --self-check --out "$WORK/s_new" >> "$LOG" 2>&1
  note "== (s) d2k-profile tasks/softmax --self-check (new): rc=$? wall $(secs "$t0" "$(date +%s.%N)") s; $($CHECK walltime "$WORK/s_new/results.jsonl" 2>&1)"
  python3 -c "import json; e = json.load(open('$WORK/s_new/environment.json')); print('jobs:', [(j['submission'], round(j['wall_s'], 1), round(j['finished_at'] - e['started_at'], 1)) for j in e['jobs']]); print('sandbox:', json.dumps(e['sandbox'].get('enforced'))[:600])" >> "$SUM" 2>&1
  { echo "== (s) noise floor"; $CHECK noise "$WORK/s_new/results.jsonl"; $CHECK clean "$WORK/s_new/results.jsonl" | tail -6; } >> "$SUM" 2>&1
  if [ -d .old ]; then
    t0=$(date +%s.%N)
    (cd .old && timeout -k 5 "$(lim 150)" env PYTHONPATH="$ROOT/.old" python3 -m d2k_profile.cli "$ROOT/tasks/softmax" --tasks-root "$ROOT/tasks" --out "$WORK/s_old") >> "$LOG" 2>&1
    note "== (s) d2k-profile tasks/softmax (before the split): rc=$? wall $(secs "$t0" "$(date +%s.%N)") s; $($CHECK walltime "$WORK/s_old/results.jsonl" 2>&1)"
  fi
  { $CHECK statuses "$WORK/s_new/results.jsonl"; $CHECK devices "$WORK/s_new/results.jsonl"; } >> "$SUM" 2>&1
  pack
fi

# --- k: CUPTI against ncu, per flush ------------------------------------------------------------------
if want k; then
  K="$WORK/ncu"; rm -rf "$K"; mkdir -p "$K"
  t0=$(date +%s.%N)
  timeout -k 5 "$(lim 100)" python3 benchmarks/profile_ncu_compare.py cupti "$K/cupti.json" --tuned "$K/tuned.json" > "$K/cupti.txt" 2>&1
  echo "cupti pass rc=$? $(secs "$t0" "$(date +%s.%N)") s" >> "$SUM"
  NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
  if [ -n "$NCU" ] && [ "$(left)" -ge 30 ]; then
    INC=(); while read -r r; do INC+=(--nvtx-include "$r/"); done < <(python3 benchmarks/profile_ncu_compare.py ranges)
    RENAME=(); "$NCU" --help 2>/dev/null | grep -q "print-nvtx-rename" && RENAME=(--print-nvtx-rename kernel)
    t0=$(date +%s.%N)
    timeout -k 5 "$(lim 90)" "$NCU" --target-processes all --nvtx "${INC[@]}" --cache-control all --clock-control none \
        --metrics gpu__time_duration.sum --csv --page raw "${RENAME[@]}" \
        python3 benchmarks/profile_ncu_compare.py ncu "$K/manifest.json" --pinned "$K/tuned.json" > "$K/ncu.csv" 2> "$K/ncu.err"
    echo "ncu pass rc=$? $(secs "$t0" "$(date +%s.%N)") s; rename: ${RENAME[*]:-no}" >> "$SUM"
    tail -5 "$K/ncu.err" >> "$SUM"
    python3 benchmarks/profile_ncu_compare.py table "$K/cupti.json" "$K/manifest.json" "$K/ncu.csv" > "$K/table.txt" 2>&1
    { echo; echo "== (k) CUPTI vs ncu --cache-control all"; cat "$K/table.txt"; } >> "$SUM"
    if [ "${CUPTI_GAP_MS:-0}" != 0 ] && [ "$(left)" -ge 60 ]; then  # CUPTI again, idle before each call (the power state of ncu's replays)
      t0=$(date +%s.%N)
      timeout -k 5 "$(lim 150)" python3 benchmarks/profile_ncu_compare.py cupti "$K/cupti_gap.json" --pinned "$K/tuned.json" --gap-ms "$CUPTI_GAP_MS" > "$K/cupti_gap.txt" 2>&1
      echo "cupti pass with ${CUPTI_GAP_MS} ms idle before each call rc=$? $(secs "$t0" "$(date +%s.%N)") s" >> "$SUM"
      python3 benchmarks/profile_ncu_compare.py table "$K/cupti_gap.json" "$K/manifest.json" "$K/ncu.csv" > "$K/table_gap.txt" 2>&1
      { echo; echo "== (k) CUPTI with ${CUPTI_GAP_MS} ms idle before each call vs ncu --cache-control all"; cat "$K/table_gap.txt"; } >> "$SUM"
    fi
    if [ "${NCU_WARM:-0}" -gt 0 ] && [ "$(left)" -ge 30 ]; then  # again, each profiled call preceded by NCU_WARM unprofiled ones
      t0=$(date +%s.%N)
      timeout -k 5 "$(lim 120)" "$NCU" --target-processes all --nvtx "${INC[@]}" --cache-control all --clock-control none \
          --metrics gpu__time_duration.sum --csv --page raw "${RENAME[@]}" \
          python3 benchmarks/profile_ncu_compare.py ncu "$K/manifest_warm.json" --warm "$NCU_WARM" --pinned "$K/tuned.json" > "$K/ncu_warm.csv" 2> "$K/ncu_warm.err"
      echo "ncu warm pass ($NCU_WARM calls before each) rc=$? $(secs "$t0" "$(date +%s.%N)") s" >> "$SUM"
      python3 benchmarks/profile_ncu_compare.py table "$K/cupti.json" "$K/manifest_warm.json" "$K/ncu_warm.csv" > "$K/table_warm.txt" 2>&1
      { echo; echo "== (k) CUPTI vs ncu --cache-control all, $NCU_WARM unprofiled calls before each profiled one"; cat "$K/table_warm.txt"; } >> "$SUM"
    fi
  else
    note "== (k) ncu not found or no time left for it"; tail -30 "$K/cupti.txt" >> "$SUM"
  fi
  pack
fi

# --- g: graph mode ----------------------------------------------------------------------------------
if want g; then
  D="$WORK/cases_g"; rm -rf "$D"; mkdir -p "$D"; for c in ${G_CASES:-side_stream_sleep honest}; do cp -r "tests/adversarial/cases/$c" "$D/"; done
  t0=$(date +%s.%N)
  timeout -k 10 "$(lim 75)" python3 -m d2k_profile.cli "$D" "${ADV[@]:1}" --mode graph --out "$WORK/graph" >> "$LOG" 2>&1
  { echo; echo "== (g) --mode graph (rc $?, $(secs "$t0" "$(date +%s.%N)") s; expected: side_stream_sleep cheat_suspected, honest ok)"
    $CHECK statuses "$WORK/graph/results.jsonl"
    python3 -c "import json,sys; [print(' ', r['submission'], 'mode', r['mode'], 'notes:', ' | '.join(n[:150] for n in r.get('notes') or [])) for r in map(json.loads, open(sys.argv[1]))]" "$WORK/graph/results.jsonl"; } >> "$SUM" 2>&1
  pack
fi

# --- n: without the kernel trace --------------------------------------------------------------------
if want n; then
  D="$WORK/cases_n"; rm -rf "$D"; mkdir -p "$D"; for c in ${N_CASES:-side_stream_sleep slow_reference}; do cp -r "tests/adversarial/cases/$c" "$D/"; done
  t0=$(date +%s.%N)
  timeout -k 10 "$(lim 75)" python3 -m d2k_profile.cli "$D" "${ADV[@]:1}" --no-kernel-trace --out "$WORK/notrace" >> "$LOG" 2>&1
  { echo; echo "== (n) --no-kernel-trace (rc $?, $(secs "$t0" "$(date +%s.%N)") s; slow_reference: cheat_suspected by the clean-reference check; side_stream_sleep: needs the trace)"
    $CHECK statuses "$WORK/notrace/results.jsonl"; } >> "$SUM" 2>&1
  pack
fi

# --- o: the new cases on the code before the split --------------------------------------------------
if want o && [ -d .old ]; then
  D="$ROOT/.old/cases"; rm -rf "$D"; mkdir -p "$D"; for c in ${OLD_CASES:-${NEW_CASES[@]} honest}; do cp -r "tests/adversarial/cases/$c" "$D/"; done
  t0=$(date +%s.%N)
  (cd .old && timeout -k 10 "$(lim 150)" env PYTHONPATH="$ROOT/.old" python3 -m d2k_profile.cli "$D" --task "$ROOT/tests/profile/fixtures/toy_softmax" \
      --tasks-root "$ROOT/tasks" --workloads m8192_n8192 --timeout 15 --budget 0.2 --jobs 16 --out "$WORK/old_adv") >> "$LOG" 2>&1
  { echo; echo "== (o) issue-11 cases on the code before the split (rc $?, $(secs "$t0" "$(date +%s.%N)") s)"; $CHECK statuses "$WORK/old_adv/results.jsonl"; } >> "$SUM" 2>&1
  pack
fi

# --- a: experts, references, noise floor --------------------------------------------------------------
if want a; then
  t0=$(date +%s.%N)
  timeout -k 10 "$(lim 300)" python3 -m d2k_profile.cli tasks --self-check --budget "${BUDGET:-0.25}" --jobs 16 --out "$WORK/pilot" >> "$LOG" 2>&1
  rc=$?
  {
    echo; echo "== (a) tasks --self-check (rc $rc, $(secs "$t0" "$(date +%s.%N)") s): $($CHECK walltime "$WORK/pilot/results.jsonl" 2>&1)"
    $CHECK statuses "$WORK/pilot/results.jsonl"; echo; echo "== (a) noise floor"; $CHECK noise "$WORK/pilot/results.jsonl"
    echo; echo "== (a) clean vs sandbox"; $CHECK clean "$WORK/pilot/results.jsonl" | tail -3
  } >> "$SUM" 2>&1
  $CHECK kernels "$WORK/pilot/results.jsonl" > "$WORK/pilot/kernels.txt" 2>&1
  tail -8 "$WORK/pilot/kernels.txt" >> "$SUM"
  pack
fi

# --- c: corpus kernels, one workload each --------------------------------------------------------------
if want c; then
  t0=$(date +%s.%N)
  timeout -k 10 "$(lim 300)" python3 -m d2k_profile.cli corpus/softmax corpus/layernorm corpus/gemm_bf16 --workloads m8192_n1024 m16384_n1024 m4096_n4096_k4096 \
      --budget 0.25 --jobs 16 --out "$WORK/corpus" >> "$LOG" 2>&1
  { echo; echo "== (c) corpus, one workload each (rc $?, $(secs "$t0" "$(date +%s.%N)") s)"; $CHECK statuses "$WORK/corpus/results.jsonl"
    $CHECK clean "$WORK/corpus/results.jsonl" | tail -1; } >> "$SUM" 2>&1
  pack
fi

# --- f: adversarial suite (last: it gets the time that is left) ---------------------------------------
if want f; then
  t0=$(date +%s.%N)
  if [ -n "${ADV_CASES:-}" ]; then  # a subset: copies of the named case folders
    rm -rf "$WORK/adv_cases"; mkdir -p "$WORK/adv_cases"
    for c in $ADV_CASES; do cp -r "tests/adversarial/cases/$c" "$WORK/adv_cases/"; done
    ADV[0]="$WORK/adv_cases"
  fi
  # copy the records as they come: a run stopped part-way still returns what it finished
  ( while sleep 15; do cp "$WORK/adv/results.jsonl" "$OUT/adversarial_partial.jsonl" 2>/dev/null; done ) & copier=$!
  timeout -k 10 "$(lim "${F_LIMIT:-420}")" python3 -m d2k_profile.cli "${ADV[@]}" --out "$WORK/adv" >> "$LOG" 2>&1
  rc=$?
  kill "$copier" 2>/dev/null
  cp "$WORK/adv/results.jsonl" "$OUT/adversarial_partial.jsonl" 2>/dev/null
  { echo; echo "== (f) adversarial suite, new code (rc $rc, $(secs "$t0" "$(date +%s.%N)") s)"; $CHECK adversarial "$WORK/adv/results.jsonl"
    $CHECK devices "$WORK/adv/results.jsonl"
    python3 -c "import json,sys; [print('  side_stream_sleep:', r['status'], '|', r['reason'][:600]) for r in map(json.loads, open(sys.argv[1])) if r['submission'] == 'side_stream_sleep']" "$WORK/adv/results.jsonl"
    python3 -c "import json,sys; rs=[r for r in map(json.loads, open(sys.argv[1])) if r['status'] == 'ok']; [print('  ok record notes:', r['submission'], ' | '.join(n[:160] for n in r.get('notes') or [])) for r in rs]" "$WORK/adv/results.jsonl"
  } >> "$SUM" 2>&1
  pack
fi

note "== done in $(( $(date +%s) - T_START )) s (deadline ${DEADLINE} s)"
pack
