// Records and exports name no machine's folders: the managed venv is `snapshot-venv:<id>`, a home
// path is `~/…`, and an export's dataset card prints its source and problem files relative.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { homeRelative, interpreterFromLabel, interpreterLabel } from '../../src/env/run/interpreterLabel';
import { snapshotPython } from '../../src/env/snapshots/venv';
import { exportDataset, pathFromCard } from '../../src/store/export/exportDataset';
import { tempDir } from './storeTestUtils';

const ROOT = resolve(__dirname, '../..');

describe('interpreter labels', () => {
  test('the managed venv is recorded by its snapshot id, and resumes as the managed venv', () => {
    const label = interpreterLabel(undefined, '2026-11');
    assert.equal(label, 'snapshot-venv:2026-11');
    assert.ok(!label.includes(homedir()));
    assert.equal(interpreterFromLabel(label), undefined);
  });

  test('a path in the home folder is recorded as ~/…, and maps back to the same file', () => {
    const home = '/home/alice';
    assert.equal(interpreterLabel('/home/alice/.venv/bin/python', '2024-09', home), '~/.venv/bin/python');
    assert.equal(interpreterFromLabel('~/.venv/bin/python', home), '/home/alice/.venv/bin/python');
    // The real venv path of this machine never reaches a record.
    const venv = snapshotPython('2026-11');
    if (venv.startsWith(homedir())) assert.match(homeRelative(venv), /^~\//);
  });

  test('names that are not home paths stay as they are', () => {
    assert.equal(interpreterLabel('python3', '2026-11', '/home/alice'), 'python3');
    assert.equal(interpreterLabel('/usr/bin/python3', '2026-11', '/home/alice'), '/usr/bin/python3');
    assert.equal(
      homeRelative('/home/alicex/bin/python', '/home/alice'),
      '/home/alicex/bin/python',
      'a sibling folder with the same prefix is not home',
    );
    assert.equal(interpreterFromLabel('/usr/bin/python3', '/home/alice'), '/usr/bin/python3');
  });
});

describe('dataset card paths', () => {
  test('pathFromCard: relative as given, absolute made relative to the card, never through the root', () => {
    assert.equal(pathFromCard('/w/proj/.forgeenv/exports/trl-sft/out.jsonl', '/w/proj/.forgeenv/dataset'), '../../dataset');
    assert.equal(pathFromCard('/tmp/x/out.jsonl', '/home/alice/proj/dataset'), 'dataset');
    assert.equal(pathFromCard('/tmp/x/out.jsonl', 'test/fixtures/datasets/small'), 'test/fixtures/datasets/small');
  });

  test('an export of an absolute dataset folder writes a card without an absolute path', async () => {
    const work = tempDir('forgeenv-card-');
    const dataset = join(work, 'data');
    mkdirSync(dataset);
    // A real dataset folder (the fixture's records) plus one corrupt line, so the card lists a problem file.
    for (const f of ['demonstrations.jsonl', 'reviews.jsonl'])
      writeFileSync(join(dataset, f), readFileSync(join(ROOT, 'test/fixtures/datasets/small', f), 'utf8') + 'not json\n');
    const outDir = join(work, 'exports', 'trl-sft');
    mkdirSync(outDir, { recursive: true });
    const out = join(outDir, 'train.jsonl');
    const r = await exportDataset({ format: 'trl-sft', dir: dataset, out, now: new Date('2025-04-01T00:00:00Z') });
    assert.ok(r.problems.length > 0, 'the corrupt lines are reported');
    const card = readFileSync(join(outDir, 'README.md'), 'utf8');
    assert.ok(!card.includes(work), `the card holds no absolute path:\n${card}`);
    assert.match(card, /from `\.\.\/\.\.\/data`/);
    assert.match(card, /`\.\.\/\.\.\/data\/demonstrations\.jsonl:\d+/);
  });
});
