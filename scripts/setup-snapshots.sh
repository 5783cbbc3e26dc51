#!/usr/bin/env bash
# The real-library tier: uv (from PyPI) and the managed virtual environments of the snapshots the
# tests run in real mode (each holds the pinned transformers, datasets, trl, peft, accelerate,
# evaluate, tokenizers, huggingface_hub and torch of its snapshot, from PyPI, as of the snapshot's
# cut-off date: uv installs with --exclude-newer). Idempotent: a venv that is already complete is
# kept. From a cold uv cache: 45 s for 2024-09, 54 s for 2026-11 on the dev machine (2 shared cores)
# (torch from PyPI brings its CUDA libraries, ~3.5 GB per torch version; uv caches and hardlinks them).
#
# Env: FORGEENV_TEST_SNAPSHOTS (default "2024-09 2026-11"; empty skips the tier),
#      FORGEENV_CACHE_DIR (default ~/.cache/forgeenv).
set -euo pipefail
cd "$(dirname "$0")/.."
snapshots="${FORGEENV_TEST_SNAPSHOTS-2024-09 2026-11}"
[ -n "$snapshots" ] || { echo "snapshots: FORGEENV_TEST_SNAPSHOTS is empty, real-library tier skipped"; exit 0; }
. scripts/lib/ensure-uv.sh
# shellcheck disable=SC2086
FORGEENV_FROM_SOURCE=1 node bin/forgeenv.js snapshots build $snapshots --no-api
