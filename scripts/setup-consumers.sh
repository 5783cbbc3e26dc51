#!/usr/bin/env bash
# The export consumers' venv: the real readers our exports are checked against in
# test/unit/exportConsumers.test.ts (Hugging Face `datasets`, TRL's data utilities and SFTTrainer
# with torch on CPU, pyarrow, and the SWE-bench harness's own loaders), from PyPI with uv.
# The ML packages are pinned to the 2026-11 snapshot's requirements (read from
# resources/snapshots/snapshots.json), so uv takes them from the cache setup-snapshots.sh filled
# (hardlinks, no second torch download). Idempotent: a venv whose marker names the same
# requirements is kept.
#
# Env: FORGEENV_TEST_CONSUMERS (default 1; 0 skips), FORGEENV_CACHE_DIR (default ~/.cache/forgeenv).
set -euo pipefail
cd "$(dirname "$0")/.."
[ "${FORGEENV_TEST_CONSUMERS-1}" != "0" ] || { echo "consumers: FORGEENV_TEST_CONSUMERS=0, export consumer checks skipped"; exit 0; }
# Pins of our own (besides the snapshot's): keep in step with test/consumers/README.md.
extra=(swebench==5.0.2 pyarrow==26.0.1)
snapshot=2026-11
cache="${FORGEENV_CACHE_DIR:-$HOME/.cache/forgeenv}"
venv="$cache/consumers-venv"
marker="$venv/.forgeenv-consumers.txt"
mapfile -t reqs < <(python3 - "$snapshot" <<'EOF'
import json, sys
snap = next(s for s in json.load(open("resources/snapshots/snapshots.json"))["snapshots"] if s["id"] == sys.argv[1])
for name, v in snap["versions"].items():
    print(f"{name.replace('_', '-')}=={snap.get('torch_runtime') or v if name == 'torch' else v}")
for r in snap.get("extra_requirements", []):
    print(r)
EOF
)
want="$(printf '%s\n' "${reqs[@]}" "${extra[@]}")"
if [ -f "$marker" ] && [ "$(cat "$marker")" = "$want" ] && [ -x "$venv/bin/python" ]; then
  echo "consumers: $venv is ready"
  exit 0
fi
. scripts/lib/ensure-uv.sh
python="$(python3 -c 'import json; print(json.load(open("resources/snapshots/snapshots.json"))["python"])' 2>/dev/null || echo 3.11)"
rm -rf "$venv.staging"
uv venv --quiet --relocatable --no-project --python "$python" "$venv.staging"
uv pip install --quiet --python "$venv.staging/bin/python" "${reqs[@]}" "${extra[@]}"
printf '%s\n' "$want" > "$venv.staging/.forgeenv-consumers.txt"
rm -rf "$venv"
mv "$venv.staging" "$venv"
echo "consumers: built $venv"
