#!/usr/bin/env bash
# `transformers serve` as evaluate-model's endpoint (docs/model-in-the-loop.md, "transformers serve"):
# a venv with transformers[serving] and torch from PyPI (pinned below; torch's PyPI wheel brings its
# CUDA libraries, ~5.6 GB in all, used on CPU here), then the server on 127.0.0.1, offline
# (HF_HUB_OFFLINE=1 unless set), loading the local Hugging Face-format folder each request names as
# its model. Prints the endpoint, then runs the server in the foreground (Ctrl-C stops it).
#
# Usage: scripts/transformers-serve.sh [--venv DIR] [--port N] [--setup-only] [--tiny-model DIR] [MODEL_DIR]
#   --venv DIR         the venv (default $FORGEENV_CACHE_DIR/transformers-serve-venv); reused when its pins match
#   --port N           default 8090
#   --setup-only       install the venv and stop
#   --tiny-model DIR   also write DIR: a tiny random Llama (RoPE, so any prompt length) with the offline
#                      hub's gpt2 tokenizer and a chat template, for plumbing tests; it does not repair
#   MODEL_DIR          preload it; requests must then name it as their model (HTTP 400 otherwise).
#                      Without it, each request's model is loaded on first use
set -euo pipefail
TRANSFORMERS_PIN="transformers[serving]==5.25.0"
TORCH_PIN="torch==2.15.0"
cache="${FORGEENV_CACHE_DIR:-$HOME/.cache/forgeenv}"
venv="$cache/transformers-serve-venv"
port=8090
setup_only=0
tiny=""
model=""
while [ $# -gt 0 ]; do
  case "$1" in
    --venv) venv="$2"; shift 2 ;;
    --port) port="$2"; shift 2 ;;
    --setup-only) setup_only=1; shift ;;
    --tiny-model) tiny="$2"; shift 2 ;;
    -h | --help) sed -n '2,16p' "$0"; exit 0 ;;
    -*) echo "transformers-serve: unknown option $1" >&2; exit 2 ;;
    *) model="$1"; shift ;;
  esac
done
# Paths as the caller gave them (relative to their folder), then the repository's root.
venv="$(realpath -m "$venv")"
[ -z "$tiny" ] || tiny="$(realpath -m "$tiny")"
[ ! -e "$model" ] || model="$(realpath "$model")"
cd "$(dirname "$0")/.."

want="$TRANSFORMERS_PIN $TORCH_PIN"
if [ -x "$venv/bin/transformers" ] && [ "$(cat "$venv/.forgeenv-pins" 2> /dev/null)" = "$want" ]; then
  echo "transformers-serve: $venv is ready"
else
  . scripts/lib/ensure-uv.sh
  started=$(date +%s)
  rm -rf "$venv.staging"
  mkdir -p "$(dirname "$venv")"
  uv venv --quiet --relocatable --no-project --python "$(command -v python3)" "$venv.staging"
  uv pip install --quiet --python "$venv.staging/bin/python" "$TRANSFORMERS_PIN" "$TORCH_PIN"
  echo "$want" > "$venv.staging/.forgeenv-pins"
  rm -rf "$venv"
  mv "$venv.staging" "$venv"
  echo "transformers-serve: installed $venv in $(($(date +%s) - started)) s ($(du -sh "$venv" | cut -f1))"
fi

if [ -n "$tiny" ]; then
  gpt2="$(ls -d "$cache"/hub/*/hub/models--gpt2/snapshots/*/ 2> /dev/null | tail -1)"
  [ -n "$gpt2" ] || { echo "transformers-serve: no gpt2 tokenizer in $cache/hub (run scripts/setup-snapshots.sh)" >&2; exit 1; }
  HF_HUB_OFFLINE=1 "$venv/bin/python" - "$gpt2" "$tiny" << 'EOF'
import json, shutil, sys, torch
from transformers import LlamaConfig, LlamaForCausalLM
src, dst = sys.argv[1], sys.argv[2]
torch.manual_seed(0)
cfg = LlamaConfig(vocab_size=600, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                  num_key_value_heads=2, max_position_embeddings=8192, bos_token_id=0, eos_token_id=0,
                  tie_word_embeddings=True)
model = LlamaForCausalLM(cfg)
model.generation_config.do_sample = True  # `transformers serve` samples only when the model's config says so
model.save_pretrained(dst)
for f in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
    shutil.copy(f"{src}/{f}", f"{dst}/{f}")
with open(f"{dst}/chat_template.jinja", "w") as fh:
    fh.write("{% for m in messages %}{{ '<|' + m['role'] + '|>\\n' + m['content'] + '\\n' }}{% endfor %}"
             "{% if add_generation_prompt %}{{ '<|assistant|>\\n' }}{% endif %}")
print(f"transformers-serve: wrote the tiny chat model {dst} (tokenizer from {src})")
EOF
fi
[ "$setup_only" = 0 ] || exit 0

echo "transformers-serve: endpoint http://127.0.0.1:$port/v1${model:+ (pinned to $model: requests name it as --model)}"
echo "  e.g. node bin/forgeenv.js evaluate-model --endpoint http://127.0.0.1:$port/v1 --model ${model:-/path/to/model-folder} --tasks simple_regression --k 1"
export HF_HUB_OFFLINE="${HF_HUB_OFFLINE-1}"
exec "$venv/bin/transformers" serve --host 127.0.0.1 --port "$port" --device cpu ${model:+"$model"}
