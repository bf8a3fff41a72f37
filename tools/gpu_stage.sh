#!/bin/bash
# Issue #44's model run on a GPU: the bundled model (stage 7 since 2026-11-26) trained on the grey families and the `domain` family
# (every printer's convention on its own), then scored on what it never saw and held to the trust tests.
# usage: DATA=dir-with-foreign/scans/cases tools/gpu_stage.sh [STEPS]   (default 12000; DEV=cpu STEPS=4 for a dry run)
#   TRAIN_S=470: the training's wall-clock box in this lease (a drawn task gets 15 minutes of device time); the run
#     keeps a checkpoint every 50 steps in $OUT/stage.ckpt, which comes back when the box cuts the run
#   RESUME=path: continue from such a checkpoint (carried), on the same schedule of STEPS steps; without it the run
#     starts a fresh schedule from the bundled model's weights (stage 7's own checkpoint was not kept)
#   SCORE=1: score and run the trust tests here once the run has finished (else do it on a CPU: close the
#     checkpoint with `welltrace train synthetic --resume stage.ckpt --steps <its step> ...same flags...`, which
#     trains no further, writes the model file and fits its calibrator beside it (train's default since the
#     eighteenth round: no separate fit-confidence), then eval-styles and tests/core/digitize/rules/test_trust.py).
#     The new model's calibrator is fitted first (`welltrace fit-confidence --device $DEV`: $OUT/stage.confidence.json,
#     beside it; the 100 fit logs read with the network on the run's device: ~3 s a log on two CPU cores, not
#     measured on a GPU)
#     so that it is scored with CONF calibrated on it, not the bundled network's fit (the train command's own fit is
#     off, --no-fit-confidence: it would run inside the training's box and be cut there, and SCORE=1 fits once);
#     it needs scikit-learn
#     (carried as wheels with scipy, joblib, threadpoolctl); without it the run says so and scores with the shipped one
# Measured 2026-11-26 on an H100 (docs/model-card.md, stage 6): 1,374 steps of 8 x 1,024 x 480 px in 470 s,
# 8 workers, beside the CUDA test suite; the 12,000-step schedule takes about 9 such leases.
# needs lasio and platformdirs importable (on the device tool: carried as wheels, PYTHONPATH set), and DATA holding
# copies of ../shared/data/{foreign,scans,cases} (carried: about 21 MB)
#
# A model is fit to bundle when, on ../shared/data/foreign (never trained on), hard r >= 0.95 with NULL <= 5 %,
# log-scale r >= 0.95 and broken-curve NULL <= 10 % (issue #44), every set's confidently wrong share <= 3 %
# (issue #43), the held-out families no worse than stage 3 (docs/model-card.md), and tests/core/digitize/rules/test_trust.py passes.
#   STYLES=...: the stream's families (default stage 7's; the sixteenth round's `neighbours`, close curves of distinct
#     line styles, is the one to add next: docs/model-card.md, stage 8)
STEPS=${1:-12000}; DEV=${DEV:-cuda}; DATA=${DATA:-../shared/data}; TRAIN_S=${TRAIN_S:-470}
STYLES=${STYLES:-classic,uniform,dark_grid,annotated,fax,worn,domain,domain,domain}
export PYTHONUNBUFFERED=1
WT="python3 -m app.launch"
OUT=${OUT:-/tmp/gpuout}; mkdir -p $OUT
log() { echo "=== $(date +%T) $*" | tee -a $OUT/log.txt; }
log "machine"; (nvidia-smi --query-gpu=name,memory.total --format=csv 2>/dev/null; python3 -c "import torch;print(torch.__version__, torch.cuda.is_available())"; nproc) 2>&1 | tee -a $OUT/log.txt
log "train to step $STEPS${RESUME:+, from $RESUME}, for at most $TRAIN_S s"
timeout -s INT $TRAIN_S $WT train synthetic --device $DEV --out $OUT/stage.safetensors --preset demo --stage multiclass \
    --init-model resources/models/demo.safetensors ${RESUME:+--resume $RESUME} \
    --styles $STYLES \
    --effective-batch 8 --crop-along 1024 --stream-size 2400x480 --steps $STEPS --lr 5e-4 --precision bf16 \
    --freeze-encoder 0.1 --seed 47 --eval-every 0 --workers 8 --events $OUT/train.jsonl --no-fit-confidence \
    2>&1 | tail -5 | tee -a $OUT/log.txt
if [ ! -f $OUT/stage.safetensors ]; then
    [ -f $OUT/stage.ckpt ] && log "cut by the box: $OUT/stage.ckpt holds the run (RESUME it next lease)" \
        || log "cut by the box before the first checkpoint (step 50): nothing to keep"
    exit 0
fi
[ -n "$SCORE" ] || { log "finished: score $OUT/stage.safetensors on a CPU (see the header)"; exit 0; }
log "the new model's calibrator (beside it: reads by it use it)"
$WT fit-confidence --model $OUT/stage.safetensors --device $DEV 2>&1 | tail -3 | tee -a $OUT/log.txt
log "foreign prints"
$WT eval-styles --model $OUT/stage.safetensors --foreign $DATA/foreign/plain $DATA/foreign/hard $DATA/foreign/colour \
    2>&1 | tee -a $OUT/log.txt
log "held-out families"
$WT eval-styles --model $OUT/stage.safetensors --families log_decades,dotted_fax,dense,random --count 4 2>&1 | tee -a $OUT/log.txt
log "trust tests"
cp resources/models/demo.safetensors $OUT/stage3.safetensors
trap 'cp $OUT/stage3.safetensors resources/models/demo.safetensors; rm -f resources/models/demo.confidence.json' EXIT  # the bundled model back, whatever happens
cp $OUT/stage.safetensors resources/models/demo.safetensors
# its calibrator beside it too (names its digest: the copy reads calibrated on it), removed with the bundled model's return
[ -f $OUT/stage.confidence.json ] && cp $OUT/stage.confidence.json resources/models/demo.confidence.json
WELLTRACE_SHARED_DATA=$DATA timeout 600 python3 -m pytest -q -p no:cacheprovider tests/core/digitize/rules/test_trust.py 2>&1 | tail -8 | tee -a $OUT/log.txt
log done
