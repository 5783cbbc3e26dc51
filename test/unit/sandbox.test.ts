// The fault suite of the sandbox (issue 11): each attack a running script could make, really run,
// with the outcome asserted. Needs a working bubblewrap (Linux); without one the sandboxed tests
// skip and say why (FORGEENV_REQUIRE_SANDBOX=1 makes that a failure, for CI). The fallback tests
// (forgeenv.sandbox.mode "off") run everywhere.
import assert from 'node:assert/strict';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statfsSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { after, before, describe, test, type TestContext } from 'node:test';
import { ForgeEnvironment } from '../../src/env/episode/environment';
import { executeScript, simulatedBytecodeCache, type RunOptions, type RunResult } from '../../src/env/run/executor';
import { startHumanEpisode } from '../../src/env/episode/humanEpisode';
import { buildDemonstration } from '../../src/store/demonstrationBuilder';
import { resourcesDir } from '../../src/env/paths';
import { rolloutOneEpisode } from '../../src/env/episode/rollout';
import { checkPrimitives, scriptsWithManifest } from '../../src/env/primitives/checkPrimitives';
import { bwrapArgs, normalizeReadOnly } from '../../src/env/sandbox/bwrap';
import { encodeEnv, launcherPrefix, parseLaunchStatus, perlLauncherPrefix } from '../../src/env/sandbox/launcher';
import { CLONE_NEW_FLAGS, seccompArch, seccompProgram } from '../../src/env/sandbox/seccomp';
import { acquireRunUid, RUN_UID_BASE } from '../../src/env/sandbox/uids';
import { MemoryLedger, MIN_ADDRESS_SPACE_MIB } from '../../src/env/sandbox/memory';
import { cleanEnvironment } from '../../src/env/sandbox/cleanEnv';
import { findExecutable, probeSandbox, resetSandboxProbe } from '../../src/env/sandbox/detect';
import { etcCopy, etcEntries } from '../../src/env/sandbox/etcView';
import { pythonLimitPrefix } from '../../src/env/sandbox/limits';
import { DEFAULT_LIMITS, ScriptEnvSchema } from '../../src/env/sandbox/options';
import { forceKill, pidsWithMarker, uniqueMarker } from './processHelpers';

const VERSIONS = { transformers: '4.50.0', datasets: '3.2.0' };
const parentDir = mkdtempSync(join(tmpdir(), 'forgeenv-sandbox-test-'));
const SECRET = `hunter2-${Math.random().toString(36).slice(2)}`;
// Planted where a script must not reach: beside the run folders, and in the home folder.
const outsideFile = join(parentDir, 'outside-secret.txt');
const homeFile = join(homedir(), `.forgeenv-sandbox-test-${process.pid}`);
let sandboxReason: string | undefined;

before(async () => {
  writeFileSync(outsideFile, SECRET);
  writeFileSync(homeFile, SECRET);
  process.env.FORGEENV_TEST_SECRET = SECRET;
  process.env.AWS_SECRET_ACCESS_KEY = SECRET;
  const probe = await probeSandbox();
  if (!probe.ok) {
    sandboxReason = `bubblewrap is unavailable: ${probe.reason}`;
    console.log(`# sandbox.test.ts: sandboxed tests skip: ${sandboxReason}`);
  }
});
after(() => {
  rmSync(parentDir, { recursive: true, force: true });
  rmSync(homeFile, { force: true });
  delete process.env.FORGEENV_TEST_SECRET;
  delete process.env.AWS_SECRET_ACCESS_KEY;
});

/** Skips a sandboxed test where bubblewrap cannot work (a failure when the sandbox is required). */
function needsSandbox(t: TestContext): boolean {
  if (!sandboxReason) return true;
  if (process.env.FORGEENV_REQUIRE_SANDBOX === '1') assert.fail(`FORGEENV_REQUIRE_SANDBOX=1 but ${sandboxReason}`);
  t.skip(sandboxReason);
  return false;
}

/** FORGEENV_WARM=force runs the whole suite on the warm runtime: every sandboxed run must then say so. */
const WARM_FORCED = process.env.FORGEENV_WARM === 'force';
const run = async (script: string, over: Partial<RunOptions> = {}): Promise<RunResult> => {
  const r = await executeScript({
    script,
    mode: 'real',
    libraryVersions: VERSIONS,
    parentDir,
    timeoutMs: 30_000,
    validate: false,
    sandbox: { mode: 'bubblewrap' },
    ...over,
  });
  if (WARM_FORCED && r.isolation === 'bubblewrap')
    assert.equal(r.runtime, 'warm', `FORGEENV_WARM=force but the run was cold: ${r.stderr.slice(0, 300)}`);
  return r;
};
const off = (script: string, over: Partial<RunOptions> = {}) => run(script, { ...over, sandbox: { mode: 'off', ...over.sandbox } });

const ENV_DUMP = [
  'import os, sys',
  'seen = dict(os.environ)',
  'try:',
  '    seen["/proc/self/environ"] = open("/proc/self/environ", "rb").read().decode("utf-8", "replace")',
  'except OSError as e:',
  '    seen["/proc/self/environ"] = repr(e)',
  'try:',
  '    seen["parent"] = open("/proc/%s/environ" % sys.argv[1], "rb").read().decode("utf-8", "replace")',
  'except OSError as e:',
  '    seen["parent"] = "denied: %r" % e',
  'print(seen)',
].join('\n');

describe('sandboxed runs (bubblewrap)', () => {
  test('a planted secret in the environment is absent, also from /proc; the host processes are invisible', async (t) => {
    if (!needsSandbox(t)) return;
    const r = await run(ENV_DUMP, { args: [String(process.pid)] });
    assert.equal(r.exit_code, 0, r.stderr);
    assert.equal(r.isolation, 'bubblewrap');
    assert.ok(!r.stdout.includes(SECRET), 'the secret reached the script');
    assert.match(r.stdout, /'parent': "denied: FileNotFoundError/, 'the editor process is not visible inside the pid namespace');
  });

  test('reads outside the run folder fail: a file beside it, the home folder', async (t) => {
    if (!needsSandbox(t)) return;
    const script = [
      'import os, sys',
      'for p in sys.argv[1:]:',
      '    try:',
      '        print(p, "READ", open(p).read())',
      '    except OSError as e:',
      '        print(p, "DENIED", type(e).__name__)',
      'try:',
      '    print("HOME", sorted(os.listdir(sys.argv[3])))',
      'except OSError as e:',
      '    print("HOME DENIED", type(e).__name__)',
    ].join('\n');
    const r = await run(script, { args: [outsideFile, homeFile, homedir()] });
    assert.equal(r.exit_code, 0, r.stderr);
    assert.ok(!r.stdout.includes(SECRET), r.stdout);
    assert.match(r.stdout, /outside-secret\.txt DENIED FileNotFoundError/);
    assert.match(r.stdout, /forgeenv-sandbox-test-\d+ DENIED FileNotFoundError/);
    const home = /HOME (\[.*\])/.exec(r.stdout);
    if (home) assert.ok(!home[1].includes('.forgeenv-sandbox-test'), `the home folder's files are visible: ${home[1]}`);
  });

  test('writes outside the run folder never reach the host: beside it, home, resources, bytecode cache', async (t) => {
    if (!needsSandbox(t)) return;
    const tag = uniqueMarker('escape');
    const cache = simulatedBytecodeCache();
    const targets = [
      join(parentDir, `${tag}.txt`),
      join(homedir(), `${tag}.txt`),
      join(resourcesDir(), `${tag}.txt`),
      join(cache, `${tag}.txt`),
      `/usr/${tag}.txt`,
    ];
    const script = [
      'import sys',
      'for p in sys.argv[1:]:',
      '    try:',
      '        open(p, "w").write("escaped")',
      '        print(p, "WROTE (inside the sandbox only)")',
      '    except OSError as e:',
      '        print(p, "DENIED", type(e).__name__)',
      'open("inside.txt", "w").write("ok")',
    ].join('\n');
    try {
      const r = await run(script, { mode: 'simulated', args: targets, keepRunDir: true });
      assert.equal(r.exit_code, 0, r.stderr);
      for (const p of targets) assert.equal(existsSync(p), false, `${p} was written on the host`);
      assert.match(r.stdout, new RegExp(`${tag}\\.txt DENIED`), 'read-only places refuse writes');
      assert.equal(existsSync(join(r.run_dir, 'inside.txt')), true, 'the run folder is writable');
      rmSync(r.run_dir, { recursive: true, force: true });
    } finally {
      for (const p of targets) rmSync(p, { force: true });
    }
  });

  test('the shared bytecode cache cannot be poisoned: it is read-only inside, and runs still use it', async (t) => {
    if (!needsSandbox(t)) return;
    const script = [
      'import os, sys',
      'import json  # the standard library compiles into the shared cache',
      'prefix = sys.pycache_prefix',
      'target = os.path.join(prefix, "poison.txt")',
      'try:',
      '    open(target, "w").write("x")',
      '    print("WROTE")',
      'except OSError as e:',
      '    print("DENIED", e.errno)',
      'import transformers',
      'print("CACHED", os.path.exists(os.path.join(prefix, os.path.dirname(transformers.__file__).lstrip("/"), "__pycache__")) or any(os.scandir(prefix)))',
    ].join('\n');
    const r = await run(script, { mode: 'simulated' });
    assert.equal(r.exit_code, 0, r.stderr);
    assert.match(r.stdout, /DENIED 30/, 'EROFS: the cache is mounted read-only');
    assert.match(r.stdout, /CACHED True/);
    assert.equal(existsSync(join(simulatedBytecodeCache(), 'poison.txt')), false);
  });

  test('the network is refused: a loopback server of the host gets no connection (and does with allowNetwork)', async (t) => {
    if (!needsSandbox(t)) return;
    let connections = 0;
    const server: Server = createServer((sock) => {
      connections++;
      sock.end('hello\n');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const script = [
      'import socket, sys',
      'try:',
      '    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)',
      '    print("CONNECTED", s.recv(16))',
      'except OSError as e:',
      '    print("REFUSED", type(e).__name__)',
    ].join('\n');
    try {
      const denied = await run(script, { args: [String(port)] });
      assert.equal(denied.exit_code, 0, denied.stderr);
      assert.match(denied.stdout, /^REFUSED/);
      assert.equal(connections, 0);
      const allowed = await run(script, { args: [String(port)], sandbox: { mode: 'bubblewrap', allowNetwork: true } });
      assert.match(allowed.stdout, /^CONNECTED b'hello/, allowed.stderr);
      assert.equal(connections, 1);
    } finally {
      server.close();
    }
  });

  test('a setsid() child dies with the run (the whole pid namespace ends), and the run does not hang', async (t) => {
    if (!needsSandbox(t)) return;
    const marker = uniqueMarker('setsid');
    const script = [
      'import subprocess, sys, time',
      // start_new_session: the child calls setsid() and leaves our process group and session.
      `subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120) # ${marker}"], start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)`,
      'time.sleep(0.3)',
      'print("parent exits")',
    ].join('\n');
    const r = await run(script);
    try {
      assert.equal(r.exit_code, 0, r.stderr);
      assert.equal(r.killed, false);
      for (let i = 0; i < 40 && pidsWithMarker(marker).length; i++) await new Promise((res) => setTimeout(res, 50));
      assert.deepEqual(pidsWithMarker(marker), [], 'the setsid child survived the run');
    } finally {
      for (const pid of pidsWithMarker(marker)) forceKill(pid);
    }
  });

  test('a 2 GiB write stops at the file-size limit', async (t) => {
    if (!needsSandbox(t)) return;
    assert.ok(DEFAULT_LIMITS.fileSizeMiB > 0 && DEFAULT_LIMITS.fileSizeMiB < 2048, 'the default stops a 2 GiB file');
    const script = [
      'import errno',
      'chunk = b"x" * (1 << 20)',
      'written = 0',
      'try:',
      '    with open("big.bin", "wb") as f:',
      '        while written < (2 << 30):',
      '            f.write(chunk)',
      '            f.flush()',
      '            written += len(chunk)',
      'except OSError as e:',
      '    print("STOPPED", errno.errorcode[e.errno], written >> 20)',
      'else:',
      '    print("WROTE 2 GiB")',
    ].join('\n');
    const r = await run(script, { sandbox: { mode: 'bubblewrap', limits: { fileSizeMiB: 16 } } });
    assert.equal(r.exit_code, 0, r.stderr);
    assert.match(r.stdout, /^STOPPED EFBIG 1[56]\n/);
  });

  test('a fork bomb is bounded by the process limit, and its processes end with the run', async (t) => {
    if (!needsSandbox(t)) return;
    const marker = uniqueMarker('forkbomb');
    const script = [
      'import os, time',
      'n = 0',
      'try:',
      '    for _ in range(10_000):',
      '        if os.fork() == 0:',
      '            time.sleep(120)',
      '            os._exit(0)',
      '        n += 1',
      'except OSError as e:',
      '    print("BOUNDED", n, e.errno)',
      'else:',
      '    print("UNBOUNDED", n)',
    ].join('\n');
    const r = await run(script, { args: [marker], sandbox: { mode: 'bubblewrap', limits: { processes: 32 } } });
    try {
      assert.equal(r.exit_code, 0, r.stderr);
      const m = /^BOUNDED (\d+) 11$/m.exec(r.stdout);
      assert.ok(m, r.stdout);
      assert.ok(Number(m[1]) > 0 && Number(m[1]) < 32, `${m[1]} forks`);
      for (let i = 0; i < 40 && pidsWithMarker(marker).length; i++) await new Promise((res) => setTimeout(res, 50));
      assert.deepEqual(pidsWithMarker(marker), []);
    } finally {
      for (const pid of pidsWithMarker(marker)) forceKill(pid);
    }
  });

  test('CPU time and address space limits', async (t) => {
    if (!needsSandbox(t)) return;
    const cpu = await run('while True:\n    pass\n', { sandbox: { mode: 'bubblewrap', limits: { cpuSeconds: 1 } } });
    assert.equal(cpu.exit_code, null);
    assert.equal(cpu.timed_out, false);
    assert.match(cpu.stderr, /ended by signal SIG(XCPU|KILL)/);
    const mem = await run('try:\n    b = bytearray(1 << 30)\n    print("ALLOCATED")\nexcept MemoryError:\n    print("MEMORY ERROR")\n', {
      sandbox: { mode: 'bubblewrap', limits: { addressSpaceMiB: 512 } },
    });
    assert.equal(mem.stdout, 'MEMORY ERROR\n', mem.stderr);
  });

  test("a task's mounts: the script writes /opt/ml/model unmodified, into its run folder, never the host's", async (t) => {
    if (!needsSandbox(t)) return;
    const target = '/opt/forgeenv-mount-test/model';
    const r = await run(
      `import os\nos.makedirs("${target}/code", exist_ok=True)\nopen("${target}/pytorch_model.bin", "wb").write(b"x" * 10)\nprint(sorted(os.listdir("${target}")))\n`,
      { mounts: [target], keepRunDir: true },
    );
    try {
      assert.equal(r.exit_code, 0, r.stderr);
      assert.equal(r.stdout.trim(), "['code', 'pytorch_model.bin']");
      assert.equal(existsSync('/opt/forgeenv-mount-test'), false, 'nothing written on the host');
      // The folder lives in the run folder, so checkpoints written there count.
      assert.ok(
        r.checkpoints.some((c) => c.path.endsWith('pytorch_model.bin')),
        JSON.stringify(r.checkpoints),
      );
    } finally {
      rmSync(r.run_dir, { recursive: true, force: true });
    }
  });

  test("a task's mount is the run's own folder, and writes beside it never reach the host", async (t) => {
    if (!needsSandbox(t)) return;
    const target = '/opt/forgeenv-mount-own/ml/model';
    const script = [
      'import os',
      `open("${target}/weights.bin", "wb").write(b"w")`,
      'def attempt(p):',
      '    try:',
      '        os.makedirs(os.path.dirname(p), exist_ok=True)',
      '        open(p, "w").write("x")',
      '        return "written"',
      '    except OSError as e:',
      '        return type(e).__name__',
      'for p in ["/opt/forgeenv-mount-own/ml/escape.txt", "/opt/forgeenv-mount-own-2/escape.txt", "/usr/forgeenv-escape.txt"]:',
      '    print(p, attempt(p))',
    ].join('\n');
    const [a, b] = await Promise.all([
      run(script, { mounts: [target], keepRunDir: true }),
      run(script, { mounts: [target], keepRunDir: true }),
    ]);
    try {
      for (const r of [a, b]) {
        assert.equal(r.exit_code, 0, r.stderr);
        // The mount is a folder of this run's own folder.
        assert.equal(readFileSync(join(r.run_dir, '.forgeenv-mounts', '0', 'weights.bin'), 'utf8'), 'w');
        assert.match(r.stdout, /\/usr\/forgeenv-escape\.txt (PermissionError|OSError)/);
      }
      assert.notEqual(a.run_dir, b.run_dir, 'two runs, two folders');
      for (const p of ['/opt/forgeenv-mount-own', '/opt/forgeenv-mount-own-2', '/usr/forgeenv-escape.txt'])
        assert.equal(existsSync(p), false, `${p} on the host`);
    } finally {
      for (const r of [a, b]) rmSync(r.run_dir, { recursive: true, force: true });
    }
  });

  test('a sandboxed episode records its isolation in the observation and the demonstration', async (t) => {
    if (!needsSandbox(t)) return;
    const env = new ForgeEnvironment({ mode: 'simulated', parentDir, sandbox: { mode: 'bubblewrap' } });
    try {
      const start = await startHumanEpisode(env, { taskId: 'distilbert_sst2', seed: 3 });
      assert.equal(start.brokenExecution.isolation, 'bubblewrap');
      assert.equal(start.observation.info.isolation, 'bubblewrap');
      assert.equal(start.observation.info.sandbox_warning, undefined);
      const final = await env.evaluateRepair(env.oracleDiff());
      assert.equal(final.execution?.isolation, 'bubblewrap');
      const provenance = {
        session_id: 's',
        annotator_id: 'a',
        mode: 'simulated' as const,
        interpreter: 'python3',
        extension_version: '0',
        env_version: '0',
        started_at: new Date().toISOString(),
        submitted_at: new Date().toISOString(),
        active_ms: 0,
        wall_ms: 0,
        runs: 1,
      };
      const demo = buildDemonstration({ start, final, provenance });
      assert.equal(demo.info.isolation, 'bubblewrap');
    } finally {
      await env.dispose();
    }
  });
});

// Issue "A reward that cannot be faked, and the sandbox holes closed": each hole, attacked for real.
describe('sandbox holes closed', () => {
  test("a manifest's LD_PRELOAD is refused at every boundary, and never runs (a real preload library where gcc exists)", async () => {
    const dir = mkdtempSync(join(parentDir, 'preload-'));
    const pwned = join(dir, 'PWNED');
    writeFileSync(join(dir, 'a.py'), 'print("ran")\n');
    let lib = join(dir, 'evil.so');
    const gcc = findExecutable('gcc');
    if (gcc) {
      writeFileSync(
        join(dir, 'evil.c'),
        `#include <stdio.h>\n__attribute__((constructor)) static void pwn(void) { FILE *f = fopen("${pwned}", "a"); if (f) { fputs("preloaded\\n", f); fclose(f); } }\n`,
      );
      const cc = spawnSync(gcc, ['-shared', '-fPIC', '-o', lib, join(dir, 'evil.c')], { encoding: 'utf8' });
      if (cc.status !== 0) lib = '/nonexistent/evil.so';
    }
    const manifest = join(dir, 'm.json');
    for (const name of ['LD_PRELOAD', 'LD_LIBRARY_PATH', 'PYTHONSTARTUP', 'PYTHONPATH', 'BASH_ENV', 'GLIBC_TUNABLES', 'PATH']) {
      writeFileSync(manifest, JSON.stringify([{ file: 'a.py', env: { [name]: lib } }]));
      assert.throws(() => scriptsWithManifest(dir, manifest), new RegExp(`${name} may not be set for a script`));
    }
    assert.equal(ScriptEnvSchema.safeParse({ SM_CHANNEL_TRAIN: 'train' }).success, true, 'ordinary names pass');
    // Past the manifest (a CheckScript built in code, the executor called directly): refused again.
    const r = await run('print("ran")\n', { extraEnv: { LD_PRELOAD: lib } });
    assert.equal(r.exit_code, null);
    assert.match(r.stderr, /invalid run options: .*LD_PRELOAD may not be set for a script/);
    const check = await checkPrimitives([{ name: 'a.py', script: 'print("ran")\n', env: { LD_PRELOAD: lib } }], {
      mode: 'simulated',
      primitives: [],
      sandbox: { mode: 'off' },
    });
    assert.equal(check.scripts[0]?.original_runs, null, JSON.stringify(check.scripts));
    if (gcc && lib.endsWith('evil.so')) {
      // The library works: loaded by an ordinary process it writes its file.
      spawnSync('/bin/true', [], { env: { LD_PRELOAD: lib } });
      assert.equal(existsSync(pwned), true, 'the preload library is a real one');
      rmSync(pwned);
      await run('print(1)\n', { extraEnv: { LD_PRELOAD: lib } });
      assert.equal(existsSync(pwned), false, 'the preload library ran');
    }
  });

  test("extra variables reach the script only: bwrap's and the launcher's environments stay empty", async (t) => {
    if (!needsSandbox(t)) return;
    const marker = uniqueMarker('envmarker');
    const script = 'import os, sys, time\nprint("SEEN", os.environ.get("FORGEENV_HOLE_MARKER"), flush=True)\ntime.sleep(30)\n';
    const controller = new AbortController();
    let seen = '';
    const running = run(script, {
      args: [marker],
      extraEnv: { FORGEENV_HOLE_MARKER: marker },
      signal: controller.signal,
      onOutput: (_s, c) => (seen += c),
    });
    try {
      // The whole line: unbuffered, print writes its parts apart, and a loaded machine delivers them apart.
      for (let i = 0; i < 200 && !seen.includes(`SEEN ${marker}`); i++) await new Promise((res) => setTimeout(res, 50));
      assert.match(seen, new RegExp(`SEEN ${marker}`), 'the script sees its variable');
      // A warm run's processes carry the zygote's command line (the script's argv came through its stdin).
      const procs = pidsWithMarker(WARM_FORCED ? 'forgeenv-zygote' : marker).map((pid) => ({
        argv0: readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0],
        cmdline: readFileSync(`/proc/${pid}/cmdline`, 'utf8'),
        environ: readFileSync(`/proc/${pid}/environ`, 'utf8'),
      }));
      const bwrap = procs.filter((p) => p.argv0.endsWith('bwrap'));
      assert.ok(bwrap.length >= 1, JSON.stringify(procs.map((p) => p.argv0)));
      for (const p of bwrap) {
        assert.equal(p.environ, '', 'bwrap starts with an empty environment');
        assert.ok(!p.cmdline.includes(`FORGEENV_HOLE_MARKER`), 'nor are the variables in its (world-readable) argv');
      }
      const launcher = procs.filter((p) => !p.argv0.endsWith('bwrap') && p.cmdline.includes('forgeenv-launcher'));
      assert.equal(launcher.length, 1);
      assert.ok(!launcher[0].environ.includes(marker), 'the launcher runs without the variables');
      const script = procs.filter(
        (p) =>
          p.cmdline.includes(WARM_FORCED ? 'forgeenv-zygote' : 'train.py') &&
          !p.argv0.endsWith('bwrap') &&
          !p.cmdline.includes('forgeenv-launcher'),
      );
      assert.equal(script.length, 1);
      assert.match(script[0].environ, new RegExp(`FORGEENV_HOLE_MARKER=${marker}`));
    } finally {
      controller.abort();
      await running;
    }
  });

  test('each concurrent run has its own uid: a run at its process limit does not starve another', async (t) => {
    if (!needsSandbox(t)) return;
    const limits = { processes: 24 };
    const full = [
      'import os, sys, time',
      'n = 0',
      'try:',
      '    while n < 1000:',
      '        if os.fork() == 0:',
      '            time.sleep(60)',
      '            os._exit(0)',
      '        n += 1',
      'except OSError as e:',
      '    print("FULL", n, e.errno, os.getuid(), flush=True)',
      'time.sleep(60)',
    ].join('\n');
    const controller = new AbortController();
    let seen = '';
    const a = run(full, {
      sandbox: { mode: 'bubblewrap', limits },
      signal: controller.signal,
      timeoutMs: 90_000,
      onOutput: (_s, c) => (seen += c),
    });
    try {
      // The whole line: print() writes its arguments one by one (python -u), so "FULL" may come alone first.
      for (let i = 0; i < 400 && !/FULL .*\n/.test(seen); i++) await new Promise((res) => setTimeout(res, 50));
      assert.match(seen, /FULL \d+ 11 \d+/, 'run A reached its process limit');
      const b = await run(
        [
          'import getpass, os, subprocess, threading',
          'ts = [threading.Thread(target=lambda: None) for _ in range(8)]',
          'for t in ts: t.start()',
          'for t in ts: t.join()',
          'print("THREADS OK", sum(subprocess.run(["true"]).returncode for _ in range(4)), os.getuid(), getpass.getuser())',
        ].join('\n'),
        { sandbox: { mode: 'bubblewrap', limits } },
      );
      assert.equal(b.exit_code, 0, b.stderr);
      assert.match(b.stdout, /^THREADS OK 0 \d+ \S+$/m, 'threads, processes and a user name (no passwd entry for the uid)');
      if (process.getuid?.() === 0) {
        const uidA = Number(/FULL \d+ 11 (\d+)/.exec(seen)![1]);
        const uidB = Number(/THREADS OK 0 (\d+)/.exec(b.stdout)![1]);
        assert.ok(uidA >= RUN_UID_BASE && uidB >= RUN_UID_BASE && uidA !== uidB, `uids ${uidA} and ${uidB}`);
      }
    } finally {
      controller.abort();
      await a;
    }
  });

  test("uid slots: distinct while held, given back on release, a dead owner's slot taken over", () => {
    const dir = join(parentDir, 'uid-locks');
    const a = acquireRunUid(dir);
    const b = acquireRunUid(dir);
    assert.notEqual(a.uid, b.uid);
    a.release();
    a.release();
    b.release();
    // A lock left by a process that is gone (pid far above pid_max) does not block its slot forever.
    mkdirSync(dir, { recursive: true });
    const c = acquireRunUid(dir);
    c.release();
    writeFileSync(join(dir, String(c.uid - RUN_UID_BASE + 1)), '999999999');
    const d = acquireRunUid(dir);
    assert.equal(d.uid, c.uid + 1);
    d.release();
  });

  test('exit codes 129-255 are exit codes; a real signal is still a signal', async (t) => {
    if (!needsSandbox(t)) return;
    for (const code of [129, 137, 200, 255]) {
      const r = await run(`import sys\nsys.exit(${code})\n`);
      assert.equal(r.exit_code, code, r.stderr);
      assert.doesNotMatch(r.stderr, /ended by signal/);
    }
    const killed = await run('import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n');
    assert.equal(killed.exit_code, null);
    assert.match(killed.stderr, /ended by signal SIGKILL/);
    const term = await run('import signal\nsignal.raise_signal(signal.SIGTERM)\n');
    assert.equal(term.exit_code, null);
    assert.match(term.stderr, /ended by signal SIGTERM/);
    assert.deepEqual(parseLaunchStatus('exit 200'), { exitCode: 200, signal: null });
    assert.deepEqual(parseLaunchStatus('signal 9'), { exitCode: null, signal: 9 });
    assert.equal(parseLaunchStatus(''), undefined);
    assert.equal(encodeEnv({ A: '1', B: 'x=y' }).toString(), 'A=1\0B=x=y\0');
  });

  test('no new namespaces, mounts or ptrace inside (seccomp, --disable-userns); threads, processes and pools still work', async (t) => {
    if (!needsSandbox(t)) return;
    const script = [
      'import ctypes, errno, multiprocessing, os, subprocess, threading',
      'libc = ctypes.CDLL(None, use_errno=True)',
      'def call(name, *a):',
      '    r = getattr(libc, name)(*a)',
      '    return "ok" if r == 0 else errno.errorcode[ctypes.get_errno()]',
      'print("unshare", call("unshare", 0x10000000))',
      'print("unshare-ns", call("unshare", 0x00020000))',
      'print("setns", call("setns", os.open("/proc/self/ns/uts", os.O_RDONLY), 0))',
      'print("mount", call("mount", b"none", b"/tmp", b"tmpfs", 0, None))',
      'print("ptrace", call("ptrace", 16, 1, None, None))',
      'print("bpf", call("syscall", 321 if os.uname().machine == "x86_64" else 280, 0, None, 0))',
      // clone() with CLONE_NEWUSER, raw: a child that somehow got through exits at once.
      'r = libc.syscall(56 if os.uname().machine == "x86_64" else 220, 0x10000000 | 17, None, None, None, None)',
      'if r == 0:',
      '    os._exit(0)',
      'print("clone-newuser", "ok" if r > 0 else errno.errorcode[ctypes.get_errno()])',
      'p = subprocess.run(["unshare", "-U", "true"], capture_output=True, text=True)',
      'print("unshare-U", p.returncode)',
      'p = subprocess.run(["unshare", "-Ur", "true"], capture_output=True, text=True)',
      'print("unshare-Ur", p.returncode)',
      'box = []',
      'ts = [threading.Thread(target=box.append, args=(i,)) for i in range(16)]',
      'for x in ts: x.start()',
      'for x in ts: x.join()',
      'with multiprocessing.Pool(2) as pool:',
      '    squares = pool.map(abs, [-1, -2, -3])',
      'import numpy as np',
      'print("work", len(box), squares, subprocess.run(["true"]).returncode, float(np.array([1.0, 2.0]).sum()))',
    ].join('\n');
    const r = await run(script, { mode: 'simulated' });
    assert.equal(r.exit_code, 0, r.stderr);
    for (const what of ['unshare', 'unshare-ns', 'setns', 'mount', 'ptrace', 'bpf', 'clone-newuser'])
      assert.match(r.stdout, new RegExp(`^${what} EPERM$`, 'm'), r.stdout);
    assert.match(r.stdout, /^unshare-U 1$/m);
    assert.match(r.stdout, /^unshare-Ur 1$/m);
    assert.match(r.stdout, /^work 16 \[1, 2, 3\] 0 3\.0$/m);
  });

  test("the tasks' unbroken originals and the drift catalog are nowhere inside the sandbox, and runs still work", async (t) => {
    if (!needsSandbox(t)) return;
    const original = readFileSync(join(resourcesDir(), 'tasks', 'distilbert_sst2.py'));
    // A line only the original has (not an import the stand-ins share), and the whole file.
    const lines = original
      .toString('utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l.length > 25 && !l.startsWith('from ') && !l.startsWith('import '));
    const needles = [lines[Math.floor(lines.length / 2)], original.toString('utf8')].map((n) => Buffer.from(n).toString('base64'));
    const script = [
      'import base64, os, sys',
      'needles = [base64.b64decode(n) for n in sys.argv[1:]]',
      'hits, read = [], 0',
      'for root, dirs, files in os.walk("/"):',
      '    if root in ("/proc", "/sys", "/dev"):',
      '        dirs[:] = []',
      '        continue',
      '    for d in dirs:',
      '        if d in ("tasks", "drifts") and not root.startswith("/usr"):',
      '            hits.append("dir " + os.path.join(root, d))',
      '    for f in files:',
      '        p = os.path.join(root, f)',
      '        if f in ("distilbert_sst2.py", "tasks.json", "catalog.json"):',
      '            hits.append("name " + p)',
      // /usr is the host's own system, read-only; everything else inside is read whole.
      '        if root.startswith("/usr") or not f.endswith((".py", ".json", ".txt", ".yaml")):',
      '            continue',
      '        try:',
      '            with open(p, "rb") as fh:',
      '                data = fh.read(4 << 20)',
      '        except OSError:',
      '            continue',
      '        read += 1',
      '        if any(n in data for n in needles) and p != os.path.abspath(sys.argv[0]):',
      '            hits.append("content " + p)',
      'print("READ", read > 100, "HITS", hits)',
      'import transformers',
      'print("RUNS", transformers.__version__)',
    ].join('\n');
    const r = await run(script, { mode: 'simulated', args: needles, timeoutMs: 120_000 });
    assert.equal(r.exit_code, 0, r.stderr);
    assert.match(r.stdout, /^READ True HITS \[\]$/m);
    assert.match(r.stdout, /^RUNS 4\.50\.0$/m);
  });

  test('the run folder has a disk quota: many files past it fail (root: ENOSPC on a tmpfs), the host disk is untouched, outputs stay readable', async (t) => {
    if (!needsSandbox(t)) return;
    const script = [
      'import errno',
      'open("pytorch_model.bin", "wb").write(b"w" * 4096)',
      'chunk = b"x" * (1 << 20)',
      'written = 0',
      'try:',
      '    for i in range(3 << 10):',
      // Many files, each far below fileSizeMiB: RLIMIT_FSIZE alone would not stop this.
      '        with open("blob-%d.bin" % (i // 4), "ab") as f:',
      '            f.write(chunk)',
      '        written += 1',
      'except OSError as e:',
      '    print("STOPPED", errno.errorcode[e.errno], written, flush=True)',
      'else:',
      '    print("WROTE", written)',
    ].join('\n');
    const before = statfsSync(parentDir);
    const r = await run(script, { keepRunDir: true, sandbox: { mode: 'bubblewrap', limits: { diskMiB: 48, fileSizeMiB: 1024 } } });
    try {
      const after = statfsSync(parentDir);
      if (process.getuid?.() === 0) {
        assert.equal(r.exit_code, 0, r.stderr);
        const m = /^STOPPED ENOSPC (\d+)$/m.exec(r.stdout);
        assert.ok(m && Number(m[1]) <= 48, r.stdout);
        assert.match(r.stderr, /the run folder reached its disk quota of 48 MiB \(forgeenv\.sandbox\.diskMiB\)/);
      } else {
        assert.equal(r.killed, true, r.stdout);
        assert.match(r.stderr, /the run folder grew past its disk quota of 48 MiB/);
      }
      // The host's disk lost at most the quota (and whatever else the machine wrote meanwhile), never 3 GiB.
      assert.ok((before.bavail - after.bavail) * before.bsize < 512 * 1024 * 1024, 'the host disk filled');
      // After the script: the host still reads what it wrote (checkpoints verified later).
      assert.ok(
        r.checkpoints.some((c) => c.path === 'pytorch_model.bin'),
        JSON.stringify(r.checkpoints),
      );
      assert.equal(readFileSync(join(r.run_dir, 'pytorch_model.bin')).length, 4096);
      assert.ok(!readFileSync('/proc/self/mounts', 'utf8').includes(r.run_dir), 'the quota was unmounted');
    } finally {
      rmSync(r.run_dir, { recursive: true, force: true });
    }
    const kept = await run('open("model.safetensors", "wb").write(b"m")\n', { sandbox: { mode: 'bubblewrap', limits: { diskMiB: 16 } } });
    assert.equal(kept.exit_code, 0, kept.stderr);
    assert.deepEqual(
      kept.checkpoints.map((c) => c.path),
      ['model.safetensors'],
    );
    assert.equal(existsSync(kept.run_dir), false, 'removed after the run');
  });

  test(
    'fallback: a run folder growing past the quota is stopped by the size watch',
    { skip: process.platform === 'win32' ? 'no fallback quota on Windows' : false },
    async () => {
      const r = await off('import time\nfor i in range(400):\n    open("b%d" % i, "wb").write(b"x" * (1 << 20))\ntime.sleep(30)\n', {
        sandbox: { mode: 'off', limits: { diskMiB: 32 } },
      });
      assert.equal(r.killed, true, r.stderr);
      assert.match(r.stderr, /grew past its disk quota of 32 MiB/);
    },
  );

  test('a run allocating past its memory cap fails with a message naming the limit', async (t) => {
    if (!needsSandbox(t)) return;
    const r = await run('b = bytearray(3 << 30)\nprint("ALLOCATED")\n', {
      sandbox: { mode: 'bubblewrap', limits: { addressSpaceMiB: 1024 } },
    });
    assert.notEqual(r.exit_code, 0);
    assert.doesNotMatch(r.stdout, /ALLOCATED/);
    assert.match(r.stderr, /MemoryError/);
    assert.match(r.stderr, /the run hit its memory limit: 1024 MiB of address space per process \(forgeenv\.sandbox\.addressSpaceMiB\)/);
  });

  test('memory caps of concurrent runs never add up to more than the machine: shares, then waiting', async () => {
    // A 24 GiB machine with 2 cores: the budget is 22 GiB; the old flat 16 GiB gave two runs 32.
    const ledger = new MemoryLedger({ budgetMiB: 24 * 1024 - 2048, concurrency: 2 });
    const overhead = 2048 + 512;
    const a = await ledger.acquire(16_384, overhead);
    const b = await ledger.acquire(16_384, overhead);
    assert.ok(a.addressSpaceMiB >= MIN_ADDRESS_SPACE_MIB && a.addressSpaceMiB < 16_384, String(a.addressSpaceMiB));
    assert.ok(a.addressSpaceMiB + b.addressSpaceMiB + 2 * overhead <= 24 * 1024 - 2048, `${a.addressSpaceMiB} + ${b.addressSpaceMiB}`);
    let third: number | undefined;
    const c = ledger.acquire(16_384, overhead).then((g) => ((third = g.addressSpaceMiB), g));
    await new Promise((res) => setTimeout(res, 20));
    assert.equal(third, undefined, 'a third run waits instead of over-committing');
    const aborted = new AbortController();
    const d = ledger.acquire(16_384, overhead, aborted.signal);
    aborted.abort();
    assert.equal((await d).addressSpaceMiB, 0, 'an aborted wait ends at once');
    a.release();
    a.release();
    const cg = await c;
    assert.equal(cg.addressSpaceMiB, a.addressSpaceMiB);
    assert.equal(ledger.reservedMiB, b.addressSpaceMiB + cg.addressSpaceMiB + 2 * overhead);
    b.release();
    cg.release();
    assert.equal(ledger.reservedMiB, 0);
    assert.equal((await ledger.acquire(512, overhead)).addressSpaceMiB, 512, 'a smaller setting is kept');
    assert.equal((await ledger.acquire(0, overhead)).addressSpaceMiB, 0, '0 = no limit, nothing reserved');
  });

  test(
    'both launchers (Perl under prlimit, and the Python fallback): the environment only for the command, its exact status, the rlimits',
    { skip: process.platform !== 'linux' ? 'Linux only' : false },
    async (t) => {
      const python = findExecutable('python3')!;
      const perl = findExecutable('perl');
      const prlimit = findExecutable('prlimit');
      const limits = { ...DEFAULT_LIMITS, fileSizeMiB: 3 };
      const launchers: [string, string[]][] = [['python', launcherPrefix(python, limits)]];
      if (perl && prlimit) launchers.push(['perl', perlLauncherPrefix(perl, prlimit, limits)]);
      else t.diagnostic('perl or prlimit missing: only the Python launcher is checked');
      const go = (prefix: string[], code: string) =>
        new Promise<{ out: string; status: string; rc: number | null }>((resolve) => {
          const argv = [...prefix, python, '-c', code];
          const c = spawn(argv[0], argv.slice(1), { env: { LAUNCHER_OWN: 'no' }, stdio: ['ignore', 'pipe', 'inherit', 'pipe', 'pipe'] });
          (c.stdio[3] as NodeJS.WritableStream).end(encodeEnv({ ONLY_SCRIPT: 'yes', EQ: 'a=b' }));
          let out = '';
          let status = '';
          c.stdout!.on('data', (b: Buffer) => (out += b));
          (c.stdio[4] as NodeJS.ReadableStream).on('data', (b: Buffer) => (status += b));
          c.on('close', (rc) => resolve({ out, status, rc }));
        });
      for (const [name, prefix] of launchers) {
        const env = await go(
          prefix,
          'import os, resource\nprint(os.environ.get("ONLY_SCRIPT"), os.environ.get("EQ"), os.environ.get("LAUNCHER_OWN"), resource.getrlimit(resource.RLIMIT_FSIZE)[0] >> 20, "status fd open:", 4 in [int(f) for f in os.listdir("/proc/self/fd")])\nraise SystemExit(200)',
        );
        assert.match(env.out, /^yes a=b None 3 status fd open: False$/m, `${name}: ${env.out}`);
        assert.equal(env.status, 'exit 200', name);
        assert.equal(env.rc, 200, name);
        const killed = await go(prefix, 'import os, signal\nos.kill(os.getpid(), signal.SIGKILL)');
        assert.equal(killed.status, 'signal 9', name);
      }
    },
  );

  test('the seccomp program: arch check first, clone checked for CLONE_NEW*, every jump in range', () => {
    for (const arch of ['x64', 'arm64']) {
      const a = seccompArch(arch)!;
      const p = seccompProgram(a);
      assert.equal(p.length % 8, 0);
      assert.equal(p.readUInt16LE(0), 0x20);
      assert.equal(p.readUInt32LE(4), 4, 'loads seccomp_data.arch');
      assert.equal(p.readUInt32LE(12), a.audit);
      const ks = Array.from({ length: p.length / 8 }, (_, i) => p.readUInt32LE(i * 8 + 4));
      assert.ok(ks.includes(CLONE_NEW_FLAGS));
      assert.ok(ks.includes(a.nr.unshare) && ks.includes(a.nr.mount) && ks.includes(a.nr.ptrace));
    }
    assert.equal(seccompArch('ia32'), undefined);
  });
});

describe('without bubblewrap', () => {
  test('auto falls back with a warning; "bubblewrap" refuses to run; isolation says which', async () => {
    const saved = process.env.FORGEENV_BWRAP;
    process.env.FORGEENV_BWRAP = '/nonexistent/bwrap';
    resetSandboxProbe();
    try {
      const auto = await run('print("ran")\n', { sandbox: { mode: 'auto' } });
      assert.equal(auto.stdout, 'ran\n');
      assert.equal(auto.isolation, process.platform === 'win32' ? 'none' : 'process-group');
      assert.match(auto.sandbox_warning ?? '', /not sandboxed: .*(not installed|needs Linux)/);
      const strict = await run('open("ran.txt", "w")\n', { sandbox: { mode: 'bubblewrap' } });
      assert.equal(strict.exit_code, null);
      assert.match(strict.stderr, /forgeenv\.sandbox\.mode is "bubblewrap" but/);
      assert.equal(strict.run_dir, '', 'nothing was run');
      const chosen = await off('print("ran")\n');
      assert.equal(chosen.sandbox_warning, undefined, 'mode "off" is a choice: no warning');
      // The warning reaches observations (for the person at the machine) but not the rollout records.
      const env = new ForgeEnvironment({ mode: 'simulated', parentDir });
      try {
        const rollout = await rolloutOneEpisode(env, { taskId: 'distilbert_sst2', seed: 2 });
        assert.match(env.sandboxWarning ?? '', /not sandboxed/);
        assert.equal(rollout.info.isolation, process.platform === 'win32' ? 'none' : 'process-group');
        assert.equal(rollout.info.sandbox_warning, undefined);
      } finally {
        await env.dispose();
      }
    } finally {
      if (saved === undefined) delete process.env.FORGEENV_BWRAP;
      else process.env.FORGEENV_BWRAP = saved;
      resetSandboxProbe();
    }
  });

  test('fallback: the environment is clean too, HOME is the run folder, passEnv passes what it names', async () => {
    process.env.FORGEENV_TEST_PASSED = 'visible';
    try {
      const r = await off(
        ENV_DUMP + '\nprint("HOME", os.environ["HOME"] == os.getcwd(), "TMP", os.environ["TMPDIR"].startswith(os.getcwd()))\n',
        {
          args: [String(process.pid)],
          sandbox: { mode: 'off', passEnv: ['FORGEENV_TEST_PASSED'] },
        },
      );
      assert.equal(r.exit_code, 0, r.stderr);
      const ownEnv = r.stdout.split("'/proc/self/environ'")[0];
      assert.ok(!ownEnv.includes(SECRET), 'the secret reached the script environment');
      assert.match(r.stdout, /'FORGEENV_TEST_PASSED': 'visible'/);
      assert.match(r.stdout, /HOME True TMP True/);
      assert.ok(!/'AWS_SECRET_ACCESS_KEY'/.test(ownEnv));
    } finally {
      delete process.env.FORGEENV_TEST_PASSED;
    }
  });

  test('fallback: a task with mounts is refused with the reason; mounts of system folders are invalid', async () => {
    const r = await executeScript({
      script: 'print(1)\n',
      mode: 'real',
      libraryVersions: VERSIONS,
      parentDir,
      validate: false,
      sandbox: { mode: 'off' },
      mounts: ['/opt/ml/model'],
    });
    assert.equal(r.exit_code, null);
    assert.match(r.stderr, /writes to \/opt\/ml\/model, outside its run folder, which only the bubblewrap sandbox can map/);
    const bad = await executeScript({
      script: 'print(1)\n',
      mode: 'real',
      libraryVersions: VERSIONS,
      parentDir,
      validate: false,
      mounts: ['/usr/lib/x'],
    });
    assert.equal(bad.exit_code, null);
    assert.match(bad.stderr, /invalid run options: .*mounts.*not \/, nor under \/usr/);
  });

  test('fallback: rlimits still apply (file size)', { skip: process.platform === 'win32' ? 'no rlimits on Windows' : false }, async () => {
    const r = await off(
      'try:\n    open("big.bin", "wb").write(b"x" * (8 << 20))\n    print("WROTE")\nexcept OSError as e:\n    print("STOPPED", e.errno)\n',
      { sandbox: { mode: 'off', limits: { fileSizeMiB: 1 } } },
    );
    assert.equal(r.stdout, 'STOPPED 27\n', r.stderr);
  });

  test(
    'the Python rlimit wrapper (used where prlimit is missing) sets the limits and runs the command in place',
    { skip: process.platform === 'win32' ? 'no rlimits on Windows' : false },
    () => {
      const python = findExecutable('python3');
      assert.ok(python);
      const dir = mkdtempSync(join(parentDir, 'wrapper-'));
      const argv = [
        ...pythonLimitPrefix(python, { cpuSeconds: 0, addressSpaceMiB: 0, fileSizeMiB: 1, processes: 0, diskMiB: 0 }),
        python,
        '-c',
        'import resource, sys\nprint(resource.getrlimit(resource.RLIMIT_FSIZE), sys.argv[1:])\nopen("f", "wb").write(b"x" * (4 << 20))\n',
        'a b',
      ];
      const r = spawnSync(argv[0], argv.slice(1), { cwd: dir, encoding: 'utf8' });
      assert.match(r.stdout, /^\(1048576, 1048576\) \['a b'\]/);
      assert.match(r.stderr, /File too large/);
      assert.ok(statSync(join(dir, 'f')).size <= 1 << 20);
      assert.deepEqual(
        pythonLimitPrefix(python, { cpuSeconds: 0, addressSpaceMiB: 0, fileSizeMiB: 0, processes: 0, diskMiB: 0 }),
        [],
        'no limits: no wrapper',
      );
    },
  );
});

describe('sandbox building blocks', () => {
  test('the clean environment keeps only the allowlist, passEnv and what it sets', () => {
    const parent = {
      PATH: '/usr/bin',
      LANG: 'C.UTF-8',
      LC_ALL: 'C',
      TZ: 'UTC',
      HF_TOKEN: 'x',
      AWS_SECRET_ACCESS_KEY: 'y',
      SSH_AUTH_SOCK: '/s',
      PYTHONPATH: '/p',
      MINE: 'm',
      HOME: '/home/u',
    };
    const env = cleanEnvironment(parent, { passEnv: ['MINE'], home: '/run', tmpDir: '/run/tmp', platform: 'linux' });
    assert.deepEqual(env, { PATH: '/usr/bin', LANG: 'C.UTF-8', LC_ALL: 'C', TZ: 'UTC', MINE: 'm', HOME: '/run', TMPDIR: '/run/tmp' });
    const win = cleanEnvironment(
      { Path: 'C:\\w', SystemRoot: 'C:\\Windows', Secret: 's', mine: '1' },
      { passEnv: ['MINE'], home: 'C:\\r', tmpDir: 'C:\\r\\t', platform: 'win32' },
    );
    assert.deepEqual(Object.keys(win).sort(), ['HOME', 'Path', 'SystemRoot', 'TEMP', 'TMP', 'TMPDIR', 'USERPROFILE', 'mine']);
  });

  test('read-only binds never include /, the home folder or its parents, and nest nothing twice', () => {
    assert.deepEqual(
      normalizeReadOnly(
        ['/', '/home', '/home/u', '/home/u/.venv', '/home/u/.venv/lib', '/usr/lib/python3', '/opt/x/', 'relative'],
        '/home/u',
      ),
      ['/opt/x', '/home/u/.venv'],
    );
  });

  test('the command line: no network unless allowed, the run folder the only writable bind, nobody when root', () => {
    const plan = {
      tools: { bwrap: '/usr/bin/bwrap', prlimit: '/usr/bin/prlimit', setpriv: '/usr/bin/setpriv', asRoot: true },
      runDir: '/tmp/r/forgeenv-run-1',
      readOnly: ['/opt/py'],
      allowNetwork: false,
      command: ['/opt/py/bin/python', '-u', 'train.py'],
    };
    const a = bwrapArgs(plan);
    assert.ok(a.includes('--unshare-net') && a.includes('--unshare-pid') && a.includes('--die-with-parent') && a.includes('--new-session'));
    const binds = a.flatMap((x, i) => (x === '--bind' ? [a[i + 1]] : []));
    assert.deepEqual(binds, ['/tmp/r/forgeenv-run-1']);
    assert.ok(!a.includes(homedir()) || homedir() === '/tmp', 'the home folder is not bound');
    assert.deepEqual(a.slice(a.indexOf('--') + 1, a.indexOf('--') + 6), [
      '/usr/bin/setpriv',
      '--reuid=65534',
      '--regid=65534',
      '--clear-groups',
      '--',
    ]);
    const own = bwrapArgs({ ...plan, uid: 2_000_000_007, seccompFd: 5 });
    assert.deepEqual(own.slice(own.indexOf('--') + 1, own.indexOf('--') + 3), ['/usr/bin/setpriv', '--reuid=2000000007']);
    assert.deepEqual(own.slice(own.indexOf('--seccomp'), own.indexOf('--seccomp') + 2), ['--seccomp', '5']);
    const user = bwrapArgs({ ...plan, tools: { ...plan.tools, asRoot: false }, allowNetwork: true });
    assert.ok(
      !user.includes('--unshare-net') &&
        user.includes('--unshare-user') &&
        user.includes('--disable-userns') &&
        !user.includes('/usr/bin/setpriv'),
    );
  });

  test('/etc is one prepared copy: links kept, reused while nothing changes, rebuilt when something does', () => {
    const fakeEtc = mkdtempSync(join(parentDir, 'etc-'));
    writeFileSync(join(fakeEtc, 'passwd'), 'root:x:0:0::/root:/bin/sh\n');
    writeFileSync(join(fakeEtc, 'shadow'), 'secret');
    symlinkSync('/usr/share/zoneinfo/UTC', join(fakeEtc, 'localtime'));
    const entries = etcEntries(false, fakeEtc);
    assert.deepEqual(
      entries.map((e) => e.split('/').pop()),
      ['localtime', 'passwd'],
      'only allowlisted entries',
    );
    const root = join(parentDir, 'etc-copies');
    const first = etcCopy(entries, root)!;
    assert.deepEqual(readdirSync(first).sort(), ['localtime', 'passwd']);
    assert.equal(readlinkSync(join(first, 'localtime')), '/usr/share/zoneinfo/UTC');
    assert.equal(etcCopy(entries, root), first, 'reused');
    writeFileSync(join(fakeEtc, 'passwd'), 'root:x:0:0::/root:/bin/sh\nnobody:x:65534:65534::/:/bin/false\n');
    const second = etcCopy(entries, root)!;
    assert.notEqual(second, first);
    assert.match(readFileSync(join(second, 'passwd'), 'utf8'), /nobody/);
  });

  test('a shared bytecode cache that others can write is not used', async () => {
    const open = mkdtempSync(join(parentDir, 'cache-'));
    chmodSync(open, 0o777);
    const r = await off('import os\nprint(os.environ.get("PYTHONPYCACHEPREFIX"), os.environ.get("PYTHONDONTWRITEBYTECODE"))\n', {
      mode: 'simulated',
      bytecodeCache: open,
    });
    assert.equal(r.stdout, 'None 1\n', r.stderr);
    const mine = mkdtempSync(join(parentDir, 'cache-'));
    chmodSync(mine, 0o755);
    const ok = await off('import os\nprint(os.environ.get("PYTHONPYCACHEPREFIX") is not None)\n', {
      mode: 'simulated',
      bytecodeCache: mine,
    });
    assert.equal(ok.stdout, 'True\n', ok.stderr);
  });

  test('the sandbox shows no more of /etc than the allowlist', () => {
    const a = bwrapArgs({
      tools: { bwrap: 'bwrap', asRoot: false },
      runDir: undefined,
      readOnly: [],
      allowNetwork: false,
      command: ['true'],
    });
    const etc = a.flatMap((x, i) => (x === '--ro-bind-try' ? [a[i + 1]] : []));
    for (const e of etc) assert.ok(!/shadow|ssh|sudoers|machine-id/.test(e), e);
    assert.ok(readdirSync('/etc').length > etc.length);
  });
});
