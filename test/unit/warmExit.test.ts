// The zygote's prompt exit (zygote.ts): after the script, the driver does what the interpreter's
// shutdown does that a script can observe, for the run's own objects, then os._exit; a run whose
// objects a library or a builtin keeps, with a finalizer, takes the interpreter's own shutdown. The
// driver is run directly (no sandbox, no pre-imports): which exit each script took, and that its
// outcome is the interpreter's (`python -u train.py`). The sandboxed warm-vs-cold identity probes
// are in warmRuntime.test.ts.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { encodeRequest, READY_MARKER, zygoteArgv } from '../../src/env/warm/zygote';

const dir = mkdtempSync(join(tmpdir(), 'forgeenv-warm-exit-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const python = process.env.FORGEENV_TEST_PYTHON ?? 'python3';

function run(script: string, unfreeze: boolean) {
  const path = join(dir, 'train.py');
  writeFileSync(path, script);
  const report = join(dir, `report-${Math.random().toString(36).slice(2)}`);
  const [exe, ...args] = zygoteArgv(python, [], [], [], unfreeze, report);
  const env = { PATH: process.env.PATH ?? '', LANG: 'C.UTF-8' };
  const warm = spawnSync(exe, args, { cwd: dir, input: encodeRequest({ argv: [path] }), env, timeout: 60_000 });
  const cold = spawnSync(python, ['-u', path], { cwd: dir, input: '', env, timeout: 60_000 });
  let exit = '';
  try {
    exit = readFileSync(report, 'utf8').trim();
  } catch {
    exit = 'no report';
  }
  const stdout = warm.stdout.toString();
  assert.ok(stdout.startsWith(READY_MARKER), stdout.slice(0, 200));
  return {
    exit,
    warm: { status: warm.status, signal: warm.signal, stdout: stdout.slice(READY_MARKER.length), stderr: warm.stderr.toString() },
    cold: { status: cold.status, signal: cold.signal, stdout: cold.stdout.toString(), stderr: cold.stderr.toString() },
  };
}

const LOUD = 'import os\nclass Loud:\n    def __init__(self, name):\n        self.name = name\n    def __del__(self):\n        print("del", self.name)\n';
const CASES: { name: string; script: string; exit: RegExp }[] = [
  { name: 'a plain script', script: 'print("hello")\n', exit: /^prompt$/ },
  { name: 'sys.exit("message")', script: 'import sys\nsys.exit("bye")\n', exit: /^prompt$/ },
  { name: 'sys.exit(3) in try/finally', script: 'import sys\ntry:\n    sys.exit(3)\nfinally:\n    print("finally")\n', exit: /^prompt$/ },
  { name: 'an uncaught exception', script: `${LOUD}def f():\n    x = Loud("frame")\n    1 / 0\nf()\n`, exit: /^prompt$/ },
  { name: 'finalizers of the script only', script: `${LOUD}a = Loud("global")\nb = Loud("cycle")\nb.me = b\nprint("end")\n`, exit: /^prompt$/ },
  {
    name: 'a finalizer kept by a module imported before the script',
    script: `${LOUD}a = Loud("global")\nos.KEPT = Loud("kept")\nprint("end")\n`,
    exit: /^slow: a __main__\.Loud with __del__$/,
  },
  { name: 'a file kept open by a module', script: 'import os\nos.KEPT = open("kept.txt", "w")\nos.KEPT.write("x")\n', exit: /^slow: an open / },
  { name: 'KeyboardInterrupt', script: `${LOUD}x = Loud("x")\nraise KeyboardInterrupt\n`, exit: /^prompt$/ },
];

for (const unfreeze of [false, true]) {
  for (const c of CASES) {
    test(`prompt exit (${unfreeze ? 'unfreeze' : 'frozen'}): ${c.name}: ${c.exit.source}, outcome of python -u`, () => {
      const r = run(c.script, unfreeze);
      assert.match(r.exit, c.exit);
      assert.deepEqual(r.warm, r.cold);
    });
  }
}
