#!/usr/bin/env bash
# The family-2 tuning sweeps on one GPU, in one device command, from the repository root:
#     OUT=/some/dir [ONLY="gemm_splitk_skinny w4a16_gemm"] [EACH=150] bash benchmarks/family2_tune.sh
# Runs benchmarks/tune_<task>.py for each family-2 task that has one (ONLY narrows the list),
# each under its own time limit of EACH seconds so that one slow sweep cannot take the others'
# time, and writes each one's output to $OUT/tune_<task>.txt (stdout and stderr together), plus
# $OUT/machine.txt (GPU, driver, torch/triton versions). EXTRA, when set, is one more command
# run last, its output in $OUT/extra.txt (e.g. EXTRA="python3 benchmarks/family1_tune.py --only rowdep").
set -u
export PYTHONPATH=.${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/d2k-family2-tune}
EACH=${EACH:-150}
mkdir -p "$OUT"
{
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader 2>/dev/null || echo "no nvidia-smi"
  python3 -c "import torch, triton; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__)"
} > "$OUT/machine.txt" 2>&1
for t in ${ONLY:-gemm_splitk_skinny grouped_gemm_moe fp8_gemm_blockscale w4a16_gemm conv2d_nhwc}; do
  script="benchmarks/tune_$t.py"
  [ -f "$script" ] || { echo "$t: no $script" | tee -a "$OUT/machine.txt"; continue; }
  t0=$(date +%s.%N)
  timeout -k 5 "$EACH" python3 "$script" > "$OUT/tune_$t.txt" 2>&1
  rc=$?
  echo "$t: rc=$rc in $(python3 -c "print(f'{$(date +%s.%N)-$t0:.1f}')") s" | tee -a "$OUT/machine.txt"
done
if [ -n "${EXTRA:-}" ]; then
  timeout -k 5 "$EACH" bash -c "$EXTRA" > "$OUT/extra.txt" 2>&1
  echo "extra: rc=$?" | tee -a "$OUT/machine.txt"
fi
