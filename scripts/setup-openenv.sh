#!/usr/bin/env bash
# The OpenEnv conformance tier: a virtual environment with openenv-core (pinned, from PyPI, with
# every dependency locked in test/fixtures/openenv/requirements.lock), used by the tests in which
# openenv-core's own client drives `forgeenv serve` and our RemoteBackend drives a real
# openenv-core server. Idempotent and fast when nothing changed: a ready marker records the lock's
# hash, so a second run does nothing.
#
# Env: FORGEENV_CACHE_DIR (default ~/.cache/forgeenv); the venv is $FORGEENV_CACHE_DIR/openenv-venv.
#      FORGEENV_SKIP_OPENENV=1 skips the tier (the conformance tests then skip, except under CI).
# To update: edit requirements.in, then
#   uv pip compile --universal --python-version 3.10 test/fixtures/openenv/requirements.in \
#     -o test/fixtures/openenv/requirements.lock --no-header
set -euo pipefail
cd "$(dirname "$0")/.."
[ "${FORGEENV_SKIP_OPENENV:-}" != "1" ] || { echo "openenv: FORGEENV_SKIP_OPENENV=1, conformance tier skipped"; exit 0; }
cache="${FORGEENV_CACHE_DIR:-$HOME/.cache/forgeenv}"
venv="$cache/openenv-venv"
lock="test/fixtures/openenv/requirements.lock"
marker="$venv/.forgeenv-openenv-ready"
want="$(sha256sum "$lock" | cut -d' ' -f1)"
if [ -f "$marker" ] && [ "$(cat "$marker")" = "$want" ] && [ -x "$venv/bin/python" ]; then
  echo "openenv: $venv is ready"
  exit 0
fi
. scripts/lib/ensure-uv.sh
mkdir -p "$cache"
rm -f "$marker"
[ -x "$venv/bin/python" ] || uv venv --quiet --python "$(command -v python3)" "$venv"
uv pip install --quiet --python "$venv/bin/python" -r "$lock"
# Compile the bytecode once here, so the first test run does not pay for it.
"$venv/bin/python" -c "import openenv.core, openenv.core.env_server.http_server" > /dev/null
echo "$want" > "$marker"
echo "openenv: $venv ready (openenv-core $("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("openenv-core"))'))"
