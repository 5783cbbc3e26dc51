import { strict as assert } from 'node:assert';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { readFolderFile } from '../../src/env/tasks/folderFile';
import { loadTaskFolder } from '../../src/env/tasks/tasks';

// A folder prepared by someone else changes while we read it. A real attacker (a separate process)
// swaps a path of the folder back and forth with a link, a fifo or a huge file as fast as it can,
// with two renames per swap, while readFolderFile reads in a loop. Whatever the interleaving, a
// read returns the folder's own text or a refusal: never the text of a file outside, never a
// blocked reader, never more than the limit. The old check-then-open returned /proc/self/environ.
const made: string[] = [];
const attackers: ChildProcess[] = [];
after(() => {
  for (const a of attackers) if (a.exitCode === null && a.signalCode === null) a.kill('SIGKILL');
  made.forEach((d) => rmSync(d, { recursive: true, force: true }));
});
function folder(): string {
  const d = mkdtempSync(join(tmpdir(), 'forgeenv-folder-race-'));
  made.push(d);
  return d;
}
const hasMkfifo = spawnSync('mkfifo', ['--version']).status === 0;

const SWAPPER = `
import os, sys
d, name = sys.argv[1], sys.argv[2]
os.chdir(d)
sys.stdout.write("ready\\n"); sys.stdout.flush()
while True:
    os.rename(name, name + ".hold")
    os.rename(name + ".swap", name)
    os.rename(name, name + ".swap")
    os.rename(name + ".hold", name)
`;

/** Starts a process that keeps swapping `dir/name` with `dir/name.swap` (prepared by the caller). */
async function startSwapper(dir: string, name: string): Promise<ChildProcess> {
  const child = spawn('python3', ['-c', SWAPPER, dir, name], { stdio: ['ignore', 'pipe', 'inherit'] });
  attackers.push(child);
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the swapper exited early (${code})`)));
    child.stdout.once('data', () => resolve());
  });
  return child;
}

async function stop(child: ChildProcess): Promise<void> {
  child.removeAllListeners('exit');
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGKILL');
  await exited;
}

type Tally = { ok: number; refused: number; problems: Set<string> };

/**
 * Reads in a tight loop while the swapper runs, checking every answer with `check`, until both an
 * answer and a refusal were seen after at least `min` reads (the race was live) or a bound is hit.
 */
function hammer(read: () => ReturnType<typeof readFolderFile>, check: (text: string) => void, min = 3000): Tally {
  const tally: Tally = { ok: 0, refused: 0, problems: new Set() };
  const stopAt = Date.now() + 8000; // a bound on the loop, not an assertion
  for (let i = 0; i < 400_000 && Date.now() < stopAt; i++) {
    const r = read();
    if (r.ok) {
      tally.ok++;
      check(r.text);
    } else {
      tally.refused++;
      tally.problems.add(r.problem.replace(/^.*?: /, ''));
    }
    if (i >= min && tally.ok > 0 && tally.refused > 0) break;
  }
  return tally;
}

const INSIDE = 'print("inside the folder")\n';
const SECRET = 'SECRET-OUTSIDE-THE-FOLDER\n';

describe('task folder reads race an attacker', () => {
  test('an intermediate folder swapped with a link to a folder outside never yields the outside file', async () => {
    const outside = folder();
    writeFileSync(join(outside, 'x.py'), SECRET);
    const d = folder();
    mkdirSync(join(d, 'sub'));
    writeFileSync(join(d, 'sub', 'x.py'), INSIDE);
    symlinkSync(outside, join(d, 'sub.swap'));
    const attacker = await startSwapper(d, 'sub');
    const t = hammer(
      () => readFolderFile(d, 'sub/x.py', 1024),
      (text) => assert.equal(text, INSIDE),
    );
    await stop(attacker);
    assert.ok(t.ok > 0 && t.refused > 0, `the race was live: ${JSON.stringify({ ok: t.ok, refused: t.refused })}`);
    for (const p of t.problems) assert.match(p, /symbolic link|does not exist|replaced/, p);
  });

  test('an intermediate folder swapped with a link to /proc/self never yields the environment', async () => {
    const d = folder();
    mkdirSync(join(d, 'sub'));
    writeFileSync(join(d, 'sub', 'environ'), INSIDE);
    symlinkSync('/proc/self', join(d, 'sub.swap'));
    const attacker = await startSwapper(d, 'sub');
    const t = hammer(
      () => readFolderFile(d, 'sub/environ', 64 * 1024),
      (text) => {
        assert.ok(!text.includes('PATH='), 'the environment was read');
        assert.equal(text, INSIDE);
      },
    );
    await stop(attacker);
    assert.ok(t.ok > 0 && t.refused > 0, `the race was live: ${JSON.stringify({ ok: t.ok, refused: t.refused })}`);
  });

  test('an intermediate folder swapped with a link to /etc never yields /etc/passwd', async () => {
    const d = folder();
    mkdirSync(join(d, 'sub'));
    writeFileSync(join(d, 'sub', 'passwd'), INSIDE);
    symlinkSync('/etc', join(d, 'sub.swap'));
    const attacker = await startSwapper(d, 'sub');
    const t = hammer(
      () => readFolderFile(d, 'sub/passwd', 64 * 1024),
      (text) => assert.equal(text, INSIDE),
    );
    await stop(attacker);
    assert.ok(t.ok > 0 && t.refused > 0, `the race was live: ${JSON.stringify({ ok: t.ok, refused: t.refused })}`);
  });

  test('a script swapped with a link out of the folder: loadTaskFolder never loads the outside text', async () => {
    const outside = folder();
    writeFileSync(join(outside, 'secret.py'), SECRET);
    const d = folder();
    writeFileSync(join(d, 'x.py'), INSIDE);
    symlinkSync(join(outside, 'secret.py'), join(d, 'x.py.swap'));
    const attacker = await startSwapper(d, 'x.py');
    let loaded = 0;
    let refused = 0;
    for (let i = 0; i < 2000 && (i < 300 || loaded === 0 || refused === 0); i++) {
      const { tasks, problems } = loadTaskFolder(d);
      for (const t of tasks) assert.equal(t.script_content, INSIDE);
      loaded += tasks.filter((t) => t.task_id === 'x').length;
      refused += problems.filter((p) => p.includes('x.py')).length;
    }
    await stop(attacker);
    assert.ok(loaded > 0 && refused > 0, `the race was live: ${JSON.stringify({ loaded, refused })}`);
  });

  test(
    'a script swapped with a fifo never blocks the reader',
    { skip: hasMkfifo ? false : 'mkfifo not installed', timeout: 60_000 },
    async () => {
      const d = folder();
      writeFileSync(join(d, 'x.py'), INSIDE);
      assert.equal(spawnSync('mkfifo', [join(d, 'x.py.swap')]).status, 0);
      const attacker = await startSwapper(d, 'x.py');
      const t = hammer(
        () => readFolderFile(d, 'x.py', 1024),
        (text) => assert.equal(text, INSIDE),
      );
      await stop(attacker);
      assert.ok(t.ok > 0 && t.refused > 0, `the race was live: ${JSON.stringify({ ok: t.ok, refused: t.refused })}`);
      for (const p of t.problems) assert.match(p, /fifo|does not exist/, p);
    },
  );

  test('a script swapped with a huge file never reads past the limit', async () => {
    const d = folder();
    writeFileSync(join(d, 'x.py'), INSIDE);
    writeFileSync(join(d, 'x.py.swap'), '');
    truncateSync(join(d, 'x.py.swap'), 20 * 1024 * 1024);
    const attacker = await startSwapper(d, 'x.py');
    const t = hammer(
      () => readFolderFile(d, 'x.py', 1024),
      (text) => assert.equal(text, INSIDE),
    );
    await stop(attacker);
    assert.ok(t.ok > 0 && t.refused > 0, `the race was live: ${JSON.stringify({ ok: t.ok, refused: t.refused })}`);
    for (const p of t.problems) assert.match(p, /over the 1\.0 KiB limit|does not exist/, p);
  });
});

describe('links at any component', () => {
  test('a link is refused as the folder below, the file, or deeper, even when it stays inside', () => {
    const d = folder();
    mkdirSync(join(d, 'real', 'deep'), { recursive: true });
    writeFileSync(join(d, 'real', 'deep', 'x.py'), INSIDE);
    symlinkSync('real', join(d, 'alias'));
    symlinkSync('deep', join(d, 'real', 'deeplink'));
    symlinkSync('x.py', join(d, 'real', 'deep', 'y.py'));
    assert.deepEqual(readFolderFile(d, 'real/deep/x.py', 1024), { ok: true, text: INSIDE, bytes: INSIDE.length });
    for (const [name, at, to] of [
      ['alias/deep/x.py', 'alias', 'real'],
      ['real/deeplink/x.py', 'real/deeplink', 'deep'],
      ['real/deep/y.py', 'real/deep/y.py', 'x.py'],
    ] as const) {
      const r = readFolderFile(d, name, 1024);
      assert.deepEqual(r, {
        ok: false,
        problem: `${join(d, at)}: a symbolic link to ${to}; symbolic links are not followed in a task folder (copy the file in instead)`,
      });
    }
  });

  test('names that leave the folder are refused before anything is opened', () => {
    const d = folder();
    for (const name of ['../x.py', 'a/../../x.py', '/etc/passwd', '', '.']) {
      const r = readFolderFile(d, name, 1024);
      assert.equal(r.ok, false, name);
      assert.match((r as { problem: string }).problem, /not a path inside the folder$/, name);
    }
  });

  test('a file under something that is not a folder, and a missing folder, are named', () => {
    const d = folder();
    writeFileSync(join(d, 'f'), 'x');
    assert.deepEqual(readFolderFile(d, 'f/x.py', 1024), { ok: false, problem: `${join(d, 'f')}: not a regular file, not a folder` });
    assert.deepEqual(readFolderFile(d, 'nope/x.py', 1024), { ok: false, problem: `${join(d, 'nope')}: does not exist`, missing: true });
  });
});
