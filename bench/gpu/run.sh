#!/usr/bin/env bash
# One GPU check, under 8 minutes on one H200: actor-update time, unmerged vs merged batches.
# Writes RESULTS-gpu.md and results-gpu.json to $OUT (the device tool's folder) or bench/gpu/results.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT_DIR="${OUT:-bench/gpu/results}"
mkdir -p "$OUT_DIR"
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true; } | tee "$OUT_DIR/gpu.txt"
python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__, 'cuda', torch.cuda.is_available())" | tee -a "$OUT_DIR/gpu.txt"
exec timeout "${BENCH_TIMEOUT_S:-470}" python3 bench/gpu/actor_update.py --out "$OUT_DIR" "$@"
