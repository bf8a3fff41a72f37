#!/bin/bash
# GPU measurements of issue #33's closing note; every result goes to $OUT as it is made.
# Measured so far: everything but the whole suite on CUDA in one run. 2026-11-26 on an H100, beside a training run:
# 259 of tests/core's tests ended in 330 s, 6 failed, named and mended (docs/benchmarks.md); of the rest, 38 more
# ended in a second call with 2 failures left unnamed: run the pytest part again with nothing beside it.
# SKIP_DONE=1 runs only the pytest and workspace parts.
# usage: tools/gpu_measurements.sh [WIDTH HEIGHT STEPS]  (defaults 12800 640 50; DEV=cpu OUT=dir for a dry run at small sizes)
# needs lasio and platformdirs importable (on the device tool: carried as wheels, PYTHONPATH set)
W=${1:-12800}; H=${2:-640}; STEPS=${3:-50}; DEV=${DEV:-cuda}
export PYTHONUNBUFFERED=1
WT="python3 -m app.launch"
OUT=${OUT:-/tmp/gpuout}; mkdir -p $OUT
log() { echo "=== $(date +%T) $*" | tee -a $OUT/log.txt; }
run() { log "$*"; timeout ${T:-120} "$@" 2>&1 | tee -a $OUT/log.txt; }
log "machine"; (nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv; python3 -c "import torch;print(torch.__version__, torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else '')"; nproc) 2>&1 | tee -a $OUT/log.txt
if [ -z "$SKIP_DONE" ]; then
T=150 run $WT bench --device $DEV --width $W --height $H --precisions fp32,bf16 --json
T=150 run $WT bench --device $DEV --preset full --width $W --height $H --precisions fp32,bf16 --json
T=90 run $WT budget --device $DEV --width $W --height $H --measure --precision bf16 --json
T=150 run python3 tools/compiled_gradients.py $DEV tiny
T=60 run $WT synth $OUT/../folder --count 8 --width 3200 --height 480 --seed 3
for P in bf16 fp32; do  # whole 12,800 x 640 logs, as the H100 row of 5251d18
  T=150 run $WT train synthetic --device $DEV --preset demo --precision $P --steps 20 --compile --effective-batch 1 --stream-size ${W}x${H} --crop-along 0 --workers 8 --events $OUT/compiled_$P.jsonl --out /tmp/c_$P.safetensors
done
T=100 run $WT train synthetic --device $DEV --preset demo --precision bf16 --steps $STEPS --effective-batch 1 --stream-size 3200x480 --events $OUT/stream.jsonl --out /tmp/s.safetensors
T=100 run $WT train $OUT/../folder --device $DEV --preset demo --precision bf16 --steps $STEPS --effective-batch 1 --events $OUT/folder.jsonl --out /tmp/f.safetensors
fi
log "pytest"  # -v: each test's name as it ends, so a run cut short by its limit still names its failures
timeout ${PYT:-420} python3 -m pytest -v -p no:cacheprovider tests/core -n 15 --timeout 240 2>&1 \
    | grep -E "PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS| passed| failed" | tee $OUT/pytest.txt | grep -vE "PASSED|SKIPPED|XFAIL"
log "pytest: the failures again, one process, with their tracebacks"
grep -oE "(FAILED|ERROR) tests/[^ ]+" $OUT/pytest.txt | awk '{print $2}' | sort -u | head -10 > $OUT/failed.txt
[ -s $OUT/failed.txt ] && timeout 240 python3 -m pytest -q -p no:cacheprovider --tb=short $(cat $OUT/failed.txt) 2>&1 | tail -150 | tee $OUT/failures.txt
log "the transient of a CUDA step (core/engine/transient.py's table): tools/workspace_probe.py --fit workspace.jsonl"
T=200 run python3 tools/workspace_probe.py $OUT/workspace.jsonl
log done
