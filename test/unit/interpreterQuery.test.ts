// The one way ForgeEnv asks an interpreter a question (layout, libraries): an argument list, a timeout,
// and a memo that asks again when the interpreter file changes and never remembers a failure.
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { interpreterMemo, lastLine, queryInterpreter } from '../../src/env/sandbox/interpreterQuery';

const dir = mkdtempSync(join(tmpdir(), 'forgeenv-iq-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('queryInterpreter', () => {
  test('passes argv as a list (no shell) and returns stdout, stderr and the exit code', async () => {
    const a = await queryInterpreter('python3', [
      '-c',
      'import sys; print(sys.argv[1:]); sys.stderr.write("e"); sys.exit(3)',
      'a b',
      '$(x)',
    ]);
    assert.ok(a.ok);
    assert.equal(lastLine(a.stdout), "['a b', '$(x)']");
    assert.equal(a.stderr, 'e');
    assert.equal(a.exitCode, 3);
  });

  test('a missing interpreter is an answer with its error code, not a throw', async () => {
    const a = await queryInterpreter(join(dir, 'no-such-python'), ['-c', '1']);
    assert.equal(a.ok, false);
    assert.equal(!a.ok && a.code, 'ENOENT');
  });
});

describe('interpreterMemo', () => {
  test('asks once per interpreter file, again when the file changes, and forgets failures', async () => {
    const exe = join(dir, 'fake-python');
    writeFileSync(exe, '#!/bin/sh\n');
    chmodSync(exe, 0o755);
    let asked = 0;
    let fail = false;
    const memo = interpreterMemo(async () => {
      asked++;
      return { ok: !fail };
    });
    await memo.get(exe);
    await memo.get(exe);
    assert.equal(asked, 1);
    utimesSync(exe, new Date(), new Date(Date.now() + 60_000));
    await memo.get(exe);
    assert.equal(asked, 2, 'a changed interpreter file is asked again');
    fail = true;
    memo.clear();
    await memo.get(exe);
    await new Promise((r) => setImmediate(r));
    fail = false;
    assert.deepEqual(await memo.get(exe), { ok: true });
    assert.equal(asked, 4, 'a failure is not remembered');
  });
});
