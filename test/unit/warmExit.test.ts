// The zygote's prompt exit (zygote.ts): after the script, the driver does what the interpreter's
// shutdown does that a script can observe (threads, atexit, the first collection; the modules
// cleared when an object is left to finalize and a library keeps __main__, as torch's dill does),
// then os._exit; otherwise, with an object left to finalize, the interpreter's own shutdown. The
// driver is run directly (no sandbox, no pre-imports): which exit each script took, and that its
// outcome is the interpreter's (`python -u train.py`). The sandboxed warm-vs-cold identity probes
// are in warmRuntime.test.ts.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { encodeRequest, FAILED_MARKER, printedStep, READY_MARKER, zygoteArgv } from '../../src/env/warm/zygote';

const dir = mkdtempSync(join(tmpdir(), 'forgeenv-warm-exit-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const python = process.env.FORGEENV_TEST_PYTHON ?? 'python3';

function run(script: string) {
  const path = join(dir, 'train.py');
  writeFileSync(path, script);
  const report = join(dir, `report-${Math.random().toString(36).slice(2)}`);
  const [exe, ...args] = zygoteArgv(python, [], [], [], report);
  const env = { PATH: process.env.PATH ?? '', LANG: 'C.UTF-8' };
  const warm = spawnSync(exe, args, { cwd: dir, input: encodeRequest({ argv: [path] }), env, timeout: 60_000 });
  const cold = spawnSync(python, ['-u', path], { cwd: dir, input: '', env, timeout: 60_000 });
  const exit = existsSync(report) ? readFileSync(report, 'utf8').trim() : 'no report';
  const stdout = warm.stdout.toString();
  assert.ok(stdout.startsWith(READY_MARKER), stdout.slice(0, 200));
  return {
    exit,
    warm: { status: warm.status, signal: warm.signal, stdout: stdout.slice(READY_MARKER.length), stderr: warm.stderr.toString() },
    cold: { status: cold.status, signal: cold.signal, stdout: cold.stdout.toString(), stderr: cold.stderr.toString() },
  };
}

const LOUD =
  'import os\nclass Loud:\n    def __init__(self, name):\n        self.name = name\n    def __del__(self):\n        print("del", self.name)\n';
const WATCHED =
  'class Watched:\n    def __getattribute__(self, name):\n        print("touched", name)\n        return object.__getattribute__(self, name)\n    def __call__(self, r):\n        pass\n';
const CASES: { name: string; script: string; exit: RegExp }[] = [
  { name: 'a plain script', script: 'print("hello")\n', exit: /^prompt$/ },
  { name: 'sys.exit("message")', script: 'import sys\nsys.exit("bye")\n', exit: /^prompt$/ },
  { name: 'sys.exit(3) in try/finally', script: 'import sys\ntry:\n    sys.exit(3)\nfinally:\n    print("finally")\n', exit: /^prompt$/ },
  { name: 'an uncaught exception', script: 'def f():\n    x = [1]\n    1 / 0\nf()\n', exit: /^prompt$/ },
  {
    name: 'a finalizer in a cycle the script dropped (the first collection)',
    script: `${LOUD}b = Loud("cycle")\nb.me = b\ndel b\nprint("end")\n`,
    exit: /^prompt$/,
  },
  {
    name: 'a finalizer on a global',
    script: `${LOUD}a = Loud("global")\nprint("end")\n`,
    exit: /^slow: __main__ is not kept \(a __main__\.Loud with __del__\)$/,
  },
  {
    name: "a finalizer in an uncaught exception's frame",
    script: `${LOUD}def f():\n    x = Loud("frame")\n    1 / 0\nf()\n`,
    exit: /^slow: __main__ is not kept \(a __main__\.Loud/,
  },
  {
    name: 'a finalizer kept by a module imported before the script',
    script: `${LOUD}os.KEPT = Loud("kept")\nprint("end")\n`,
    exit: /^slow: __main__ is not kept \(a __main__\.Loud with __del__\)$/,
  },
  {
    name: 'a file kept open by a module',
    script: 'import os\nos.KEPT = open("kept.txt", "w")\nos.KEPT.write("x")\n',
    exit: /^slow: __main__ is not kept \(an open /,
  },
  {
    name: 'a weakref callback',
    script: 'import weakref\nclass T:\n    pass\nt = T()\nr = weakref.ref(t, lambda r: print("callback"))\n',
    exit: /^slow: __main__ is not kept \(a weakref callback on a T: /,
  },
  {
    name: 'a finalizer kept by a builtin the script added',
    script: `${LOUD}import builtins\nbuiltins.KEPT = Loud("kept")\nprint("end")\n`,
    exit: /^slow: the builtins changed/,
  },
  {
    name: '__main__ kept by a module (as dill keeps it): finalizers as the modules are cleared',
    script: `import sys\n${LOUD}os.MAIN = sys.modules["__main__"]\na = Loud("global")\nos.KEPT = Loud("kept")\nb = Loud("cycle")\nb.me = b\nprint("end")\n`,
    exit: /^prompt, modules cleared \(a __main__\.Loud with __del__\)$/,
  },
  {
    name: '__main__ kept by a module: KeyboardInterrupt, an open file and a weakref callback',
    script: `import sys, weakref\n${LOUD}os.MAIN = sys.modules["__main__"]\nclass T:\n    pass\nt = T()\nr = weakref.ref(t, lambda r: print("callback"))\nf = open("out.txt", "w")\nf.write("x")\nx = Loud("x")\nraise KeyboardInterrupt\n`,
    exit: /^prompt, modules cleared \(/,
  },
  { name: 'KeyboardInterrupt', script: 'print("x")\nraise KeyboardInterrupt\n', exit: /^prompt$/ },
  // The driver judges the run's objects by their type: one that prints from its own __getattribute__
  // (torch's deprecated reduce_op warns from it) is never looked at, which a cold shutdown never does.
  {
    name: 'an object that prints from its __getattribute__',
    script: `${WATCHED}w = Watched()\n`,
    exit: /^prompt$/,
  },
  {
    name: 'a file and a weakref callback that print from their __getattribute__',
    script: `import io, weakref\n${WATCHED}class WatchedFile(Watched, io.StringIO):\n    pass\nf = WatchedFile()\nclass T:\n    pass\nt = T()\nr = weakref.ref(t, Watched())\n`,
    exit: /^slow: __main__ is not kept \(a weakref callback on a T: Watched; an open WatchedFile/,
  },
  {
    name: 'KeyboardInterrupt with a finalizer',
    script: `${LOUD}x = Loud("x")\nraise KeyboardInterrupt\n`,
    exit: /^slow: __main__ is not kept \(a __main__\.Loud/,
  },
];

for (const c of CASES) {
  test(`prompt exit: ${c.name}: ${c.exit.source}, outcome of python -u`, () => {
    const r = run(c.script);
    assert.match(r.exit, c.exit);
    assert.deepEqual(r.warm, r.cold);
  });
}

test('a preparation that prints anything fails closed (a cold run prints it where the script imports the library)', () => {
  const cases = [
    { module: 'prints_at_import', source: 'print("hello from import")\n', said: /printed 18 bytes.*hello from import/ },
    {
      module: 'warns_at_import',
      source: 'import warnings\nwarnings.warn("deprecated at import")\n',
      said: /printed \d+ bytes.*UserWarning: deprecated at import/,
    },
    { module: 'quiet_at_import', source: 'x = 1\n', said: undefined },
  ];
  for (const c of cases) {
    writeFileSync(join(dir, `${c.module}.py`), c.source);
    const [exe, ...args] = zygoteArgv(python, [c.module]);
    const env = { PATH: process.env.PATH ?? '', LANG: 'C.UTF-8' };
    const r = spawnSync(exe, args, { cwd: dir, input: encodeRequest({ argv: [join(dir, 'train.py')] }), env, timeout: 60_000 });
    const stdout = r.stdout.toString();
    if (c.said) {
      assert.ok(stdout.startsWith(FAILED_MARKER), stdout);
      assert.match(stdout, c.said);
      assert.equal(stdout.split('\n').length, 2, 'one line');
      assert.equal(r.stderr.toString(), '', 'nothing of the preparation reaches stderr');
      assert.equal(printedStep(stdout), c.module, 'the step that printed is named: the host leaves it to the script');
    } else {
      assert.ok(stdout.startsWith(READY_MARKER), stdout);
    }
  }
});
