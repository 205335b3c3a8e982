#!/usr/bin/env bash
# One GPU check, under 8 minutes on one H200: actor-update time, unmerged vs merged vs prefix-tree batches.
# Writes RESULTS-gpu.md and results-gpu.json to $OUT (the device tool's folder) or bench/gpu/results.
# `run.sh --smoke` runs the plain-torch tiny model instead (CPU or GPU, no transformers, seconds).
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT_DIR="${OUT:-bench/gpu/results}"
PYTHON="${PYTHON:-python3}"
mkdir -p "$OUT_DIR"
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true; } | tee "$OUT_DIR/gpu.txt"
"$PYTHON" -c "
import importlib.util, torch
hf = importlib.util.find_spec('transformers')
print('torch', torch.__version__, 'transformers', __import__('transformers').__version__ if hf else 'absent', 'cuda', torch.cuda.is_available())
" | tee -a "$OUT_DIR/gpu.txt"
exec timeout "${BENCH_TIMEOUT_S:-470}" "$PYTHON" bench/gpu/actor_update.py --out "$OUT_DIR" "$@"
