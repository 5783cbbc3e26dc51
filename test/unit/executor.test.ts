import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import {
  executeScript,
  killAllRuns,
  liveRunCount,
  probeInterpreter,
  RUN_FILES_MTIME,
  type RunOptions,
  type RunResult,
} from '../../src/env/run/executor';
import { simlibsDir } from '../../src/env/paths';
import { SANDBOX_RUN_DIR } from '../../src/env/sandbox/bwrap';
import { forceKill, hostPid, uniqueMarker, waitUntilDead } from './processHelpers';

const VERSIONS = { transformers: '4.50.0', datasets: '3.2.0', trl: '0.12.0' };
const parentDir = mkdtempSync(join(tmpdir(), 'forgeenv-exec-test-'));
after(() => rmSync(parentDir, { recursive: true, force: true }));

const exec = (script: string, over: Partial<RunOptions> = {}): Promise<RunResult> =>
  executeScript({ script, mode: 'real', libraryVersions: VERSIONS, parentDir, timeoutMs: 30_000, ...over });

// Spawns a grandchild that ignores SIGTERM (so only the SIGKILL after the grace period ends it)
// and prints its pid; validation is off because the validator forbids subprocess. The marker in
// the grandchild's command line finds it on the host (inside the sandbox pids are namespaced).
const MARKER = uniqueMarker('grandchild');
const GRANDCHILD_SCRIPT = [
  'import subprocess, sys, time',
  `child = 'import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60) # ${MARKER}'`,
  'p = subprocess.Popen([sys.executable, "-c", child])',
  'time.sleep(0.2)',
  'print(f"GRANDCHILD {p.pid}", flush=True)',
  'time.sleep(60)',
].join('\n');

function watchForPid(onPid: (pid: number) => void, marker = MARKER): RunOptions['onOutput'] {
  let buf = '';
  return (stream, chunk) => {
    if (stream !== 'stdout') return;
    buf += chunk;
    const m = /GRANDCHILD (\d+)\n/.exec(buf);
    if (m) {
      buf = '';
      const pid = hostPid(marker, Number(m[1]));
      if (pid !== undefined) onPid(pid);
    }
  };
}

describe('executeScript', () => {
  test('runs real Python in a fresh directory and reports the run', async () => {
    const r = await exec('import sys\nprint("out", flush=True)\nprint("err", file=sys.stderr)\nsys.exit(3)\n');
    assert.equal(r.exit_code, 3);
    assert.equal(r.stdout, 'out\n');
    assert.equal(r.stderr, 'err\n');
    assert.equal(r.mode, 'real');
    assert.equal(r.interpreter, 'python3');
    assert.equal(r.timed_out, false);
    assert.equal(r.killed, false);
    assert.equal(r.output_truncated, false);
    assert.deepEqual(r.violations, []);
    assert.ok(r.run_dir.startsWith(parentDir));
    assert.equal(existsSync(r.run_dir), false, 'the run dir is removed by default');
    assert.ok(r.wall_time_ms >= 0);
  });

  test('the script runs as train.py from its own directory, and output is UTF-8', async () => {
    const r = await exec('import pathlib, sys\nprint(pathlib.Path.cwd().name, pathlib.Path(sys.argv[0]).name)\nprint("données ✓ 完成")\n', {
      keepRunDir: true,
    });
    const [cwdName, argv0] = r.stdout.split('\n')[0].split(' ');
    // Sandboxed, the run folder is at one path inside, every run (SANDBOX_RUN_DIR).
    assert.equal(cwdName, r.isolation === 'bubblewrap' ? SANDBOX_RUN_DIR.split('/').pop() : r.run_dir.split('/').pop());
    assert.equal(argv0, 'train.py');
    assert.equal(r.stdout.split('\n')[1], 'données ✓ 完成');
    assert.equal(readFileSync(join(r.run_dir, 'train.py'), 'utf8'), r.script_content);
    rmSync(r.run_dir, { recursive: true, force: true });
  });

  test('simulated mode: the simulated libraries and the versions reach the script', async () => {
    const script = [
      'import json, os, sys',
      'print(json.dumps({k: os.environ.get(k) for k in ["PYTHONPATH", "FORGEENV_LIBRARY_VERSIONS", "PYTHONHASHSEED", "PYTHONDONTWRITEBYTECODE", "PYTHONIOENCODING", "PYTHONPYCACHEPREFIX"]}))',
      'print(json.dumps(sys.path))',
    ].join('\n');
    // A caller's PYTHONPATH is refused outright (sandbox/options.ts DANGEROUS_ENV), not silently replaced.
    const refused = await exec(script, { mode: 'simulated', validate: false, extraEnv: { PYTHONPATH: '/not/this' } });
    assert.equal(refused.exit_code, null);
    assert.match(refused.stderr, /PYTHONPATH may not be set for a script/);
    const r = await exec(script, { mode: 'simulated', validate: false, extraEnv: { MY_FLAG: 'x' } });
    assert.equal(r.exit_code, 0, r.stderr);
    const [envLine, pathLine] = r.stdout.trim().split('\n');
    const env = JSON.parse(envLine);
    // Output is scrubbed of machine paths (scrubPaths.ts): the stand-ins' folder reads `site-packages`.
    assert.equal(env.PYTHONPATH, 'site-packages');
    assert.deepEqual(JSON.parse(env.FORGEENV_LIBRARY_VERSIONS), VERSIONS);
    assert.equal(env.PYTHONHASHSEED, '0');
    // The stand-in libraries compile once into a shared cache, outside the run directory.
    assert.equal(env.PYTHONDONTWRITEBYTECODE, null);
    assert.ok(typeof env.PYTHONPYCACHEPREFIX === 'string' && !env.PYTHONPYCACHEPREFIX.startsWith(r.run_dir), env.PYTHONPYCACHEPREFIX);
    assert.equal(env.PYTHONIOENCODING, 'utf-8');
    assert.equal((JSON.parse(pathLine) as string[])[1], 'site-packages', 'PYTHONPATH comes right after the script folder');
    assert.ok(!r.stdout.includes(simlibsDir()));
    assert.equal(r.mode, 'simulated');
  });

  test('real mode: an inherited PYTHONPATH is replaced by the shims folder and no versions are passed', async () => {
    const saved = process.env.PYTHONPATH;
    process.env.PYTHONPATH = '/inherited/path';
    try {
      const r = await exec(
        'import os\nprint(os.environ.get("PYTHONPATH"), os.environ.get("FORGEENV_LIBRARY_VERSIONS"), os.environ.get("MY_FLAG"))\n',
        {
          validate: false,
          extraEnv: { MY_FLAG: 'set' },
        },
      );
      // resources/shims only (its sitecustomize seeds the RNGs), shown as an installed folder like every stand-in path.
      assert.equal(r.stdout.trim(), 'site-packages None set');
    } finally {
      if (saved === undefined) delete process.env.PYTHONPATH;
      else process.env.PYTHONPATH = saved;
    }
  });

  test('a script with forbidden constructs is not run', async () => {
    const r = await exec('import os\nos.system("touch should_not_exist")\n');
    assert.equal(r.exit_code, null);
    assert.deepEqual(r.violations, ["line 1: import of forbidden module 'os'", 'line 2: use of os.system']);
    assert.match(r.stderr, /did not run train\.py: it uses constructs the environment forbids:\nline 1: import of forbidden module 'os'/);
    assert.match(r.stderr, /not a security boundary: the sandbox is what contains a run/);
    assert.equal(r.run_dir, '', 'nothing was written');
  });

  test('validate: { baseline } refuses only what the script adds to the baseline; false runs anything', async () => {
    const broken = 'import os\nprint(os.getcwd() != "", os.system("true"))\n';
    const same = await exec(broken, { validate: { baseline: broken } });
    assert.deepEqual(same.violations, []);
    assert.equal(same.exit_code, 0, same.stderr);
    const added = await exec(broken + 'os.system("touch should_not_exist")\n', { validate: { baseline: broken } });
    assert.equal(added.exit_code, null);
    assert.deepEqual(added.violations, ['line 3: use of os.system (the broken script has 1, the repair 2)']);
    assert.match(added.stderr, /the repair adds constructs the environment forbids/);
    assert.equal(added.run_dir, '', 'nothing was written');
    const off = await exec(broken, { validate: false });
    assert.equal(off.exit_code, 0, off.stderr);
  });

  test('timeout: an endless loop is killed', async () => {
    const r = await exec('while True:\n    pass\n', { timeoutMs: 1000 });
    assert.equal(r.timed_out, true);
    assert.equal(r.killed, true);
    assert.equal(r.exit_code, null);
    assert.match(r.stderr, /\[forgeenv\] timed out after 1000 ms/);
  });

  test('output cap: a print flood stops, is marked truncated and stays within the cap', async () => {
    const cap = 64 * 1024;
    const r = await exec('while True:\n    print("x" * 1000)\n', { outputCapBytes: cap });
    assert.equal(r.output_truncated, true);
    assert.equal(r.killed, true);
    assert.equal(r.timed_out, false);
    assert.ok(Buffer.byteLength(r.stdout) <= cap, `${Buffer.byteLength(r.stdout)} bytes kept`);
    assert.ok(Buffer.byteLength(r.stdout) >= cap - 1001, 'collected up to the cap');
    assert.match(r.stderr, /stdout exceeded 65536 bytes/);
  });

  test('output cap applies to stderr too', async () => {
    const r = await exec('import sys\nwhile True:\n    sys.stderr.write("e" * 4096)\n', { outputCapBytes: 10_000 });
    assert.equal(r.output_truncated, true);
    assert.ok(r.stderr.startsWith('e'.repeat(10_000)));
    assert.match(r.stderr, /stderr exceeded 10000 bytes/);
  });

  test('cancel via AbortSignal kills the whole tree, including a grandchild that ignores SIGTERM', async () => {
    const controller = new AbortController();
    let grandchild: number | undefined;
    try {
      const r = await exec(GRANDCHILD_SCRIPT, {
        validate: false,
        signal: controller.signal,
        onOutput: watchForPid((pid) => {
          grandchild = pid;
          controller.abort();
        }),
      });
      assert.ok(grandchild, 'the grandchild pid was printed');
      assert.equal(r.killed, true);
      assert.equal(r.timed_out, false);
      assert.equal(r.exit_code, null);
      assert.match(r.stderr, /\[forgeenv\] cancelled/);
      assert.equal(await waitUntilDead(grandchild), true, `grandchild ${grandchild} is still alive`);
    } finally {
      forceKill(grandchild);
    }
  });

  test('timeout kills the grandchild too', async () => {
    let grandchild: number | undefined;
    try {
      const r = await exec(GRANDCHILD_SCRIPT, { validate: false, timeoutMs: 1500, onOutput: watchForPid((pid) => (grandchild = pid)) });
      assert.equal(r.timed_out, true);
      assert.ok(grandchild);
      assert.equal(await waitUntilDead(grandchild), true);
    } finally {
      forceKill(grandchild);
    }
  });

  test('a script that exits leaving a background child does not hang, and the child is ended', async () => {
    const marker = uniqueMarker('background');
    const script = [
      'import subprocess, sys, time',
      `p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60) # ${marker}"])`,
      'time.sleep(0.2)',
      'print(f"GRANDCHILD {p.pid}", flush=True)',
      'time.sleep(0.5)  # time for the test to find the child on the host',
    ].join('\n');
    let grandchild: number | undefined;
    try {
      const r = await exec(script, { validate: false, onOutput: watchForPid((pid) => (grandchild = pid), marker) });
      assert.equal(r.exit_code, 0, r.stderr);
      assert.equal(r.killed, false);
      assert.ok(grandchild);
      assert.equal(await waitUntilDead(grandchild), true);
    } finally {
      forceKill(grandchild);
    }
  });

  test('a signal already aborted means no run', async () => {
    const controller = new AbortController();
    controller.abort();
    const r = await exec('print("x")\n', { signal: controller.signal });
    assert.equal(r.exit_code, null);
    assert.equal(r.stdout, '');
    assert.equal(r.killed, true);
    assert.match(r.stderr, /cancelled before the run started/);
  });

  test('a missing interpreter is a clear result, never a throw', async () => {
    const r = await exec('print(1)\n', { interpreter: 'python3-does-not-exist' });
    assert.equal(r.exit_code, null);
    assert.equal(r.stderr, 'python3-does-not-exist not found: set forgeenv.pythonPath\n');
    assert.equal(r.interpreter, 'python3-does-not-exist');
    const abs = await exec('print(1)\n', { interpreter: '/nonexistent/bin/python3' });
    assert.match(abs.stderr, /^\/nonexistent\/bin\/python3 not found: set forgeenv\.pythonPath/);
  });

  test('invalid options are reported, not thrown', async () => {
    const r = await exec('print(1)\n', { scriptName: '../escape.py' });
    assert.equal(r.exit_code, null);
    assert.match(r.stderr, /invalid run options: scriptName: a plain file name ending in \.py/);
    const t = await exec('print(1)\n', { timeoutMs: -5 });
    assert.match(t.stderr, /invalid run options: timeoutMs/);
  });

  test('a script that deletes itself and its directory does not break the executor', async () => {
    const r1 = await exec('import pathlib\npathlib.Path(__file__).unlink()\nprint("gone")\n');
    assert.equal(r1.exit_code, 0, r1.stderr);
    assert.equal(r1.stdout, 'gone\n');
    // In the sandbox the run folder is a mount point: its contents go, the folder itself stays.
    const r2 = await exec(
      'import pathlib, shutil\nopen("model.pt", "w").write("x")\nshutil.rmtree(pathlib.Path.cwd(), ignore_errors=True)\nprint("dir gone")\n',
    );
    assert.equal(r2.exit_code, 0, r2.stderr);
    assert.equal(r2.checkpoint_exists, false, 'the checkpoint was deleted with the directory');
    assert.equal(existsSync(r2.run_dir), false);
  });

  test('checkpoint detection: weights files and checkpoint-* folders, anywhere in the run dir', async () => {
    const none = await exec(
      'open("model.bin", "w").write("x")\nopen("notes.txt", "w").write("x")\nimport pathlib\npathlib.Path("ckpt").mkdir()\n',
    );
    assert.equal(none.checkpoint_exists, false);
    assert.deepEqual(none.checkpoints, []);
    for (const [file, path] of [
      ['model.safetensors', 'model.safetensors'],
      ['pytorch_model.bin', 'pytorch_model.bin'],
      ['w.pt', 'w.pt'],
      ['w.pth', 'w.pth'],
      ['last.ckpt', 'last.ckpt'],
    ]) {
      const r = await exec(`import pathlib\np = pathlib.Path("out/final")\np.mkdir(parents=True)\n(p / "${file}").write_text("1234")\n`);
      assert.equal(r.checkpoint_exists, true, file);
      assert.deepEqual(r.checkpoints, [{ path: `out/final/${path}`, kind: 'file', bytes: 4 }]);
    }
    const dir = await exec(
      'import pathlib\np = pathlib.Path("out/checkpoint-10")\np.mkdir(parents=True)\n(p / "config.json").write_text("{}")\n(p / "sub").mkdir()\n(p / "sub" / "a.txt").write_text("abc")\n',
    );
    assert.deepEqual(dir.checkpoints, [{ path: 'out/checkpoint-10', kind: 'dir', bytes: 5 }]);
    const empty = await exec('open("model.safetensors", "w").close()\n');
    assert.deepEqual(empty.checkpoints, [{ path: 'model.safetensors', kind: 'file', bytes: 0 }]);
  });

  test('keepRunDir keeps the directory and its files', async () => {
    const r = await exec('open("model.safetensors", "w").write("w")\n', { keepRunDir: true });
    assert.equal(existsSync(join(r.run_dir, 'model.safetensors')), true);
    rmSync(r.run_dir, { recursive: true, force: true });
  });

  test("the script, its files and their folders have one fixed time in every run; a link keeps its target's", async () => {
    // datasets names a local data file's cache folder by its time: a fresh time per run made two runs differ.
    const target = join(parentDir, 'link-target.txt');
    writeFileSync(target, 'hub file');
    const before = statSync(target).mtimeMs;
    const script = [
      'import json, os',
      'paths = ["train.py", "data/raw/train.jsonl", "data/raw", "data", "config.yaml", "hub"]',
      'print(json.dumps({p: os.stat(p).st_mtime for p in paths}))',
    ].join('\n');
    const over: Partial<RunOptions> = {
      files: { 'data/raw/train.jsonl': '{"a": 1}\n', 'config.yaml': 'a: 1\n' },
      links: { 'hub/file.txt': target },
    };
    const [a, b] = [await exec(script, { ...over, validate: false }), await exec(script, { ...over, validate: false })];
    assert.equal(a.exit_code, 0, a.stderr);
    const times = JSON.parse(a.stdout) as Record<string, number>;
    assert.deepEqual(JSON.parse(b.stdout), times, 'the same in two runs');
    const fixed = RUN_FILES_MTIME.getTime() / 1000;
    for (const p of ['train.py', 'data/raw/train.jsonl', 'data/raw', 'data', 'config.yaml', 'hub']) assert.equal(times[p], fixed, p);
    assert.equal(statSync(target).mtimeMs, before, "the link's target keeps its time");
  });

  test('sandboxed, every run sees its folder at one path (what a path hashes to is the same); the path is scrubbed', async (t) => {
    // datasets names a local data file's cache folder by a hash of its absolute path: two runs differed.
    const script = [
      'import hashlib, os',
      'print(hashlib.sha1(os.path.abspath("data.jsonl").encode()).hexdigest(), os.environ["HOME"] == os.getcwd())',
      'print(os.getcwd())',
    ].join('\n');
    const [a, b] = [await exec(script, { validate: false }), await exec(script, { validate: false })];
    if (a.isolation !== 'bubblewrap') return t.skip(`runs are not sandboxed here (${a.isolation})`);
    assert.equal(a.exit_code, 0, a.stderr);
    assert.notEqual(a.run_dir, b.run_dir, 'two run folders on the host');
    assert.equal(a.stdout, b.stdout);
    const [hash, home] = a.stdout.split('\n')[0].split(' ');
    assert.equal(hash, createHash('sha1').update(`${SANDBOX_RUN_DIR}/data.jsonl`).digest('hex'));
    assert.equal(home, 'True');
    assert.equal(a.stdout.split('\n')[1], '.', 'the path inside is scrubbed like the run folder');
  });

  test('live output arrives in order; a throwing listener does not break the run', async () => {
    const chunks: string[] = [];
    const r = await exec('import time\nfor i in range(3):\n    print(f"line {i}", flush=True)\n    time.sleep(0.05)\n', {
      onOutput: (stream, chunk) => {
        chunks.push(chunk);
        throw new Error('listener bug');
      },
    });
    assert.equal(r.exit_code, 0);
    assert.equal(chunks.join(''), 'line 0\nline 1\nline 2\n');
    assert.equal(r.stdout, 'line 0\nline 1\nline 2\n');
  });

  test('a process ended by a signal it raised itself is reported', async () => {
    const r = await exec('import signal\nsignal.raise_signal(signal.SIGTERM)\n');
    assert.equal(r.exit_code, null);
    assert.equal(r.killed, false);
    assert.match(r.stderr, /ended by signal SIGTERM/);
  });

  test('peak memory is sampled on Linux', { skip: process.platform !== 'linux' ? 'Linux only' : false }, async () => {
    const r = await exec(
      'import time\nblock = bytearray(60 * 1024 * 1024)\nfor i in range(0, len(block), 4096):\n    block[i] = 1\ntime.sleep(0.5)\n',
    );
    assert.equal(r.exit_code, 0, r.stderr);
    assert.ok(r.peak_memory_mb >= 50, `peak ${r.peak_memory_mb} MB`);
  });
});

describe('live runs', () => {
  test('liveRunCount and killAllRuns', async () => {
    let ready = 0;
    let release: () => void = () => undefined;
    const bothReady = new Promise<void>((r) => (release = r));
    const onOutput: RunOptions['onOutput'] = (_s, chunk) => {
      if (chunk.includes('ready') && ++ready === 2) release();
    };
    const runs = [0, 1].map(() => exec('import time\nprint("ready", flush=True)\ntime.sleep(60)\n', { onOutput }));
    await bothReady;
    assert.equal(liveRunCount(), 2);
    await killAllRuns();
    const results = await Promise.all(runs);
    assert.equal(liveRunCount(), 0);
    for (const r of results) {
      assert.equal(r.killed, true);
      assert.match(r.stderr, /shutting down/);
    }
  });
});

describe('probeInterpreter', () => {
  test('python3 reports its version', async () => {
    const p = await probeInterpreter('python3');
    assert.ok(p.ok, !p.ok ? p.error : '');
    assert.match(p.version, /^3\.\d+\.\d+$/);
  });
  test('a missing interpreter is a clear error', async () => {
    assert.deepEqual(await probeInterpreter('python-nope'), { ok: false, error: 'python-nope not found: set forgeenv.pythonPath' });
    const notPython = await probeInterpreter('false');
    assert.equal(notPython.ok, false);
    assert.match(!notPython.ok ? notPython.error : '', /is not a working Python/);
  });
});
