#!/usr/bin/env bash
# Issue 45's device check, one prepared run on a GPU machine (about 7 minutes): the PTN and HydraGAN tests on
# CUDA, bench/ptn.py's GPU budget on Lorenz and on the weather sites, and the search's leave-the-start curve.
#
# The step timings are taken first, alone on the machine (--calibrate-only, kept in $OUT/costs.json); then the
# tests, both benches and the curve run side by side. The runs count steps, so sharing the machine changes
# their wall time, not their numbers. SCALE shrinks the GPU budget's seconds (1: about 8 minutes per data set).
#
#   OUT=/tmp/out SCALE=0.5 bash scripts/gpu_check.sh
set -u
OUT=${OUT:-/tmp/i45_gpu_out}
SCALE=${SCALE:-0.5}
mkdir -p "$OUT"
if ls .whl/*.whl >/dev/null 2>&1; then  # the app's packages that a bare GPU image lacks (plotly), carried as wheels
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  export PYTHONPATH=/tmp/site
fi
export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}$PWD PYTHONUNBUFFERED=1 FAIRNESS_AUDIT_STORE=sqlite:// OMP_NUM_THREADS=4
{
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
  python3 -c "import torch; print(torch.__version__, torch.cuda.get_device_name(), torch.get_num_threads(), 'threads')"
  for d in lorenz weather; do
    timeout 150 python3 bench/ptn.py --dataset $d --budget gpu --scale "$SCALE" --calibration "$OUT/costs.json" \
      --calibrate-only
  done
} > "$OUT/calibration.log" 2>&1
( timeout 330 python3 -m pytest -q -x -n 4 --timeout 240 -p no:cacheprovider -o addopts="" \
    tests/test_ptn.py tests/test_hydragan.py --durations=10 > "$OUT/tests.log" 2>&1; echo "rc=$?" >> "$OUT/tests.log" ) &
for d in lorenz weather; do
  ( timeout 400 python3 bench/ptn.py --dataset $d --budget gpu --scale "$SCALE" --calibration "$OUT/costs.json" \
      > "$OUT/bench_$d.log" 2>&1; echo "rc=$?" >> "$OUT/bench_$d.log" ) &
done
( timeout 300 python3 bench/ptn.py --dataset lorenz --leave-curve 4 > "$OUT/leave.log" 2>&1; echo "rc=$?" >> "$OUT/leave.log" ) &
wait
tail -n 3 "$OUT"/*.log
