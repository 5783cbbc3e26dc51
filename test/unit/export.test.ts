import assert from 'node:assert/strict';
import { appendFileSync, existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { runExportCommand } from '../../src/cli/export';
import { extractDiff, REPAIR_AGENT_SYSTEM_PROMPT } from '../../src/env/episode/prompts';
import { DatasetStore } from '../../src/store/datasetStore';
import { exportDataset, ExportError, type ExportOptions } from '../../src/store/export/exportDataset';
import { fencedDiff, swebenchInstanceId, type CompletionForm, type ExportFormat, type PromptStyle } from '../../src/store/export/formats';
import { verifiedSuccess } from '../../src/store/export/selection';
import type { DemonstrationRecord } from '../../src/store/records';
import { makeDemo, tempDir } from './storeTestUtils';

const ROOT = resolve(__dirname, '../..');
// Relative, so source paths printed in cards are the same on every machine.
const SMALL = 'test/fixtures/datasets/small';
const GOLDEN = join(ROOT, 'test/fixtures/golden/exports');
const NOW = new Date('2025-04-01T12:00:00.000Z');
const SYSTEM = 'SYSTEM PROMPT (golden fixture): answer with a unified diff.';

function readRows(file: string): Array<Record<string, unknown>> {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** The JSON type shape of a value, as a columnar loader would infer it (lists of structs included). */
function shape(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) {
    const inner = [...new Set(v.map(shape))];
    return `list<${inner.join('|')}>`;
  }
  if (typeof v === 'object')
    return `{${Object.keys(v)
      .map((k) => `${k}:${shape((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float';
  return typeof v;
}

function assertUniformColumns(rows: Array<Record<string, unknown>>): void {
  assert.ok(rows.length > 0);
  const first = shape(rows[0]);
  assert.doesNotMatch(first, /null|\|/, 'no nulls or mixed element types');
  rows.forEach((r, i) => assert.equal(shape(r), first, `row ${i} has the same keys and types as row 0`));
}

async function exportTo(format: ExportFormat, extra: Partial<ExportOptions> = {}) {
  const outDir = tempDir('forgeenv-export-');
  const out = join(outDir, `${format}.jsonl`);
  const result = await exportDataset({ format, dir: join(ROOT, SMALL), out, now: NOW, systemPrompt: SYSTEM, ...extra });
  return { result, out, rows: readRows(out), card: readFileSync(join(outDir, 'README.md'), 'utf8') };
}

describe('golden exports of test/fixtures/datasets/small', () => {
  const cases: Array<{ name: string; format: ExportFormat; style?: PromptStyle; completion?: CompletionForm }> = [
    { name: 'trl-sft', format: 'trl-sft' },
    { name: 'trl-sft-fenced', format: 'trl-sft', completion: 'fenced' },
    { name: 'trl-sft-conversational', format: 'trl-sft', style: 'conversational' },
    { name: 'trl-grpo', format: 'trl-grpo' },
    { name: 'trl-kto', format: 'trl-kto' },
    { name: 'trl-kto-conversational', format: 'trl-kto', style: 'conversational' },
    { name: 'swebench', format: 'swebench' },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const outDir = tempDir('forgeenv-golden-');
      const out = join(outDir, `${c.name}.jsonl`);
      process.chdir(ROOT);
      await exportDataset({ format: c.format, style: c.style, completion: c.completion, dir: SMALL, out, now: NOW, systemPrompt: SYSTEM });
      const data = readFileSync(out, 'utf8');
      const card = readFileSync(join(outDir, 'README.md'), 'utf8');
      const goldenData = join(GOLDEN, `${c.name}.jsonl`);
      const goldenCard = join(GOLDEN, `${c.name}.README.md`);
      if (process.env.UPDATE_GOLDEN === '1') {
        writeFileSync(goldenData, data);
        writeFileSync(goldenCard, card);
      }
      assert.equal(data, readFileSync(goldenData, 'utf8'));
      assert.equal(card, readFileSync(goldenCard, 'utf8'));
      assertUniformColumns(readRows(out));
      assert.deepEqual(readdirSync(outDir).sort(), ['README.md', `${c.name}.jsonl`], 'no temp files left behind');
    });
  }
});

describe('export selection', () => {
  test('default: current, successful, not rejected; identical repeats dropped', async () => {
    const { result, rows, card } = await exportTo('trl-sft');
    assert.deepEqual(result.stats, {
      valid_lines: 7,
      superseded: 1,
      repeated_record_id: 0,
      failed: 1,
      unbroken: 0,
      review: 1,
      primitive: 0,
      selected: 4,
    });
    assert.equal(
      result.deduplicated,
      2,
      'carol repeated alice’s exact diff on the same task, and another episode shaped into an identical row',
    );
    assert.equal(new Set(rows.map((r) => JSON.stringify(r))).size, rows.length, 'no two identical rows');
    assert.equal(rows.length, 2);
    assert.deepEqual(Object.keys(rows[0]), ['prompt', 'completion']);
    assert.ok((rows[0].prompt as string).startsWith(`${SYSTEM}\n\nTarget category: RenameApiCall\n`));
    assert.ok((rows[0].completion as string).startsWith('--- a/train.py'));
    assert.deepEqual(
      result.problems.map((p) => [p.file.split('/').pop(), p.line]),
      [
        ['demonstrations.jsonl', 5],
        ['demonstrations.jsonl', 7],
        ['reviews.jsonl', 5],
      ],
    );
    assert.match(card, /demonstrations\.jsonl:5: not valid JSON/);
    assert.match(card, /reviews\.jsonl:5: /);
    // The superseded first revision's diff never appears; its replacement does.
    const completions = rows.map((r) => r.completion as string);
    assert.ok(completions.some((c) => c.includes('predict_with_generate=True')));
    assert.ok(!completions.some((c) => c.includes('+args = Seq2SeqTrainingArguments(output_dir="out")\n')));
  });

  test('--status all includes failures; --review approved keeps only approved', async () => {
    const all = await exportTo('swebench', { filters: { status: 'all' } });
    assert.equal(all.result.stats.failed, 0);
    assert.ok(all.rows.some((r) => r.model_name_or_path === 'human:bob'));
    const approved = await exportTo('swebench', { filters: { review: 'approved' } });
    assert.equal(approved.rows.length, 2);
    assert.equal(approved.result.stats.review, 3, 'two unreviewed and one rejected');
    const any = await exportTo('swebench', { filters: { status: 'all', review: 'any' } });
    assert.equal(any.result.stats.selected, 6);
  });

  test('--primitive filters and reports names that match nothing', async () => {
    const { result, rows } = await exportTo('trl-grpo', { filters: { primitives: ['RenameApiCall', 'RenameApiCal'] } });
    assert.deepEqual([...new Set(rows.map((r) => r.primitive_type))], ['RenameApiCall']);
    assert.equal(rows.length, 2, 'two seeds of the same task are two tasks');
    assert.deepEqual(result.unmatchedPrimitives, ['RenameApiCal']);
    assert.equal(result.stats.primitive, 1);
  });

  test('trl-grpo rows: one per task, params and versions as JSON strings', async () => {
    const { rows } = await exportTo('trl-grpo');
    assert.deepEqual(Object.keys(rows[0]), ['prompt', 'task_id', 'primitive_type', 'primitive_params', 'seed', 'library_versions']);
    assert.deepEqual(JSON.parse(rows[0].primitive_params as string), { new_name: 'evaluation_strategy', old_name: 'eval_strategy' });
    assert.deepEqual(JSON.parse(rows[0].library_versions as string), { datasets: '3.2.0', transformers: '4.50.0', trl: '0.12.0' });
    assert.equal(rows[0].seed, 11);
    assert.equal(new Set(rows.map((r) => `${r.task_id}/${r.seed}/${r.primitive_type}`)).size, rows.length);
  });

  test('conversational style: system + user prompt messages, one assistant completion', async () => {
    const { rows } = await exportTo('trl-sft', { style: 'conversational' });
    const row = rows[0] as { prompt: Array<{ role: string; content: string }>; completion: Array<{ role: string; content: string }> };
    assert.deepEqual(
      row.prompt.map((m) => m.role),
      ['system', 'user'],
    );
    assert.equal(row.prompt[0].content, SYSTEM);
    assert.deepEqual(
      row.completion.map((m) => m.role),
      ['assistant'],
    );
    assertUniformColumns(rows);
  });

  test('fenced completions give back the exact scored diff through the environment’s extractDiff', async () => {
    const raw = await exportTo('trl-sft');
    const fenced = await exportTo('trl-sft', { completion: 'fenced' });
    assert.equal(fenced.rows.length, raw.rows.length);
    fenced.rows.forEach((r, i) => {
      assert.match(r.completion as string, /^```diff\n/);
      assert.equal(extractDiff(r.completion as string), raw.rows[i].completion);
    });
    const tricky = '--- a/train.py\n+++ b/train.py\n@@ -1 +1 @@\n-s = "```"\n+s = "````"\n';
    assert.equal(extractDiff(fencedDiff(tricky)), tricky, 'a diff containing backtick fences survives');
    await assert.rejects(exportTo('swebench', { completion: 'fenced' }), /applies to trl-sft and trl-kto only/);
  });

  test('swebench instance ids are stable and unique per task', async () => {
    const dir = tempDir();
    const store = new DatasetStore(dir);
    const a = makeDemo({ n: 1, seed: 5 });
    await store.appendDemonstration(a);
    await store.appendDemonstration(makeDemo({ n: 2, seed: 5, versions: { transformers: '4.45.0', datasets: '3.0.0', trl: '0.10.0' } }));
    const out = join(tempDir(), 'preds.jsonl');
    await exportDataset({ format: 'swebench', dir, out, systemPrompt: SYSTEM });
    const rows = readRows(out);
    assert.equal(rows.length, 2, 'other library versions are another instance');
    assert.equal(rows[0].instance_id, swebenchInstanceId(a));
    assert.match(rows[0].instance_id, /^task_a__RenameApiCall__5__[0-9a-f]{12}$/);
    assert.notEqual(rows[0].instance_id, rows[1].instance_id);
  });

  test('trl-sft: byte-identical rows from different episodes are written once and counted', async () => {
    const dir = tempDir();
    const store = new DatasetStore(dir);
    // Same prompt and diff, but another seed and snapshot: other task and record hashes, the same SFT row.
    const a = makeDemo({ n: 1, seed: 1 });
    const b = {
      ...makeDemo({ n: 11, seed: 2, versions: { transformers: '4.45.0', datasets: '3.0.0', trl: '0.10.0' } }),
      repair_prompt: a.repair_prompt,
    };
    assert.notEqual(a.info.record_hash, b.info.record_hash);
    await store.appendDemonstration(a);
    await store.appendDemonstration(b);
    await store.appendDemonstration(makeDemo({ n: 2, seed: 1 }));
    const out = join(tempDir(), 'sft.jsonl');
    const r = await exportDataset({ format: 'trl-sft', dir, out, systemPrompt: SYSTEM });
    const lines = readFileSync(out, 'utf8').split('\n').filter(Boolean);
    assert.equal(lines.length, 2);
    assert.equal(new Set(lines).size, lines.length, 'no two identical rows');
    assert.equal(r.deduplicated, 1);
    // An appended repeat is dropped by the incremental path as well.
    await store.appendDemonstration({ ...makeDemo({ n: 12, seed: 3 }), repair_prompt: a.repair_prompt });
    const again = await exportDataset({ format: 'trl-sft', dir, out, systemPrompt: SYSTEM });
    assert.equal(readFileSync(out, 'utf8').split('\n').filter(Boolean).length, 2);
    assert.equal(again.deduplicated, 2);
  });

  test('the default system prompt is the environment’s repair-agent prompt', async () => {
    const dir = tempDir();
    await new DatasetStore(dir).appendDemonstration(makeDemo({ n: 1 }));
    const out = join(tempDir(), 'sft.jsonl');
    await exportDataset({ format: 'trl-sft', dir, out });
    const [row] = readRows(out);
    assert.ok(REPAIR_AGENT_SYSTEM_PROMPT.length > 0);
    assert.ok((row.prompt as string).startsWith(`${REPAIR_AGENT_SYSTEM_PROMPT}\n\n`));
  });

  test('only verified successes: a record from before the verifier and a flagged one are left out', async () => {
    const dir = tempDir();
    const store = new DatasetStore(dir);
    await store.appendDemonstration(makeDemo({ n: 1, success: true }));
    // Claimed success on printed text, before the verifier existed: `forgeenv rescore` re-verifies it.
    await store.appendDemonstration(makeDemo({ n: 2, taskId: 't2', success: true, verified: false }));
    const flagged = makeDemo({ n: 3, taskId: 't3', success: true });
    await store.appendDemonstration({ ...flagged, held_out_breakdown: { ...flagged.held_out_breakdown, no_forbidden_workarounds: 0 } });
    const out = join(tempDir(), 'v.jsonl');
    const r = await exportDataset({ format: 'trl-sft', dir, out, systemPrompt: SYSTEM });
    assert.equal(r.rows, 1);
    assert.equal(r.stats.failed, 2);
    const all = await exportDataset({
      format: 'trl-sft',
      dir,
      out: join(tempDir(), 'a.jsonl'),
      systemPrompt: SYSTEM,
      filters: { status: 'all' },
    });
    assert.equal(all.rows, 3, '--status all still takes every record');
  });

  test('a revision is exported instead of the record it supersedes', async () => {
    const dir = tempDir();
    const store = new DatasetStore(dir);
    const first = makeDemo({ n: 1, success: true });
    await store.appendDemonstration(first);
    await store.appendDemonstration(makeDemo({ n: 2, previous: first, diff: '--- a/train.py\n+++ b/train.py\n@@ -1 +1 @@\n-x\n+y\n' }));
    const out = join(tempDir(), 'p.jsonl');
    const r = await exportDataset({ format: 'swebench', dir, out, systemPrompt: SYSTEM });
    assert.equal(r.rows, 1);
    assert.equal(readRows(out)[0].model_patch, '--- a/train.py\n+++ b/train.py\n@@ -1 +1 @@\n-x\n+y\n');
    assert.equal(r.stats.superseded, 1);
  });
});

describe('export safety', () => {
  test('refuses to write into the dataset folder or over a foreign README', async () => {
    const dir = tempDir();
    await new DatasetStore(dir).appendDemonstration(makeDemo({ n: 1 }));
    const before = readFileSync(join(dir, 'demonstrations.jsonl'), 'utf8');
    await assert.rejects(
      exportDataset({ format: 'trl-sft', dir, out: join(dir, 'demonstrations.jsonl'), systemPrompt: SYSTEM }),
      ExportError,
    );
    await assert.rejects(
      exportDataset({ format: 'trl-sft', dir, out: join(dir, 'timelines', 'ep-1.jsonl'), systemPrompt: SYSTEM }),
      /inside the dataset folder/,
    );
    assert.equal(readFileSync(join(dir, 'demonstrations.jsonl'), 'utf8'), before);
    const outDir = tempDir();
    writeFileSync(join(outDir, 'README.md'), '# my project\n');
    await assert.rejects(
      exportDataset({ format: 'trl-sft', dir, out: join(outDir, 'x.jsonl'), systemPrompt: SYSTEM }),
      /not a ForgeEnv export card/,
    );
    assert.equal(readFileSync(join(outDir, 'README.md'), 'utf8'), '# my project\n');
    assert.equal(existsSync(join(outDir, 'x.jsonl')), false);
    // A subfolder of the dataset is fine, and re-exporting replaces our own card.
    const sub = join(dir, 'exports', 'sft.jsonl');
    await exportDataset({ format: 'trl-sft', dir, out: sub, systemPrompt: SYSTEM });
    await exportDataset({ format: 'trl-sft', dir, out: sub, systemPrompt: SYSTEM });
    assert.equal(readRows(sub).length, 1);
  });
});

describe('data that means what it says', () => {
  test('an episode whose breakage did not fail is left out by default; --breakage any includes it', async () => {
    const dir = tempDir();
    const store = new DatasetStore(dir);
    await store.appendDemonstration(makeDemo({ n: 1, breakageFailed: true }));
    await store.appendDemonstration(makeDemo({ n: 2, taskId: 'task_b', breakageFailed: false }));
    await store.appendDemonstration(makeDemo({ n: 3, taskId: 'task_c' }));
    const outDir = tempDir();
    const def = await exportDataset({ format: 'trl-sft', dir, out: join(outDir, 'a', 'sft.jsonl'), systemPrompt: SYSTEM });
    assert.equal(def.rows, 2, 'the unbroken one is left out; unknown (old records) counts as broken');
    assert.equal(def.stats.unbroken, 1);
    assert.match(readFileSync(def.card, 'utf8'), /\| breakage did not make the script fail \| −1 \|/);
    const all = await exportDataset({
      format: 'trl-sft',
      dir,
      out: join(outDir, 'b', 'sft.jsonl'),
      systemPrompt: SYSTEM,
      filters: { breakage: 'any' },
    });
    assert.equal(all.rows, 3);
    await assert.rejects(
      exportDataset({ format: 'trl-sft', dir, out: join(outDir, 'c', 'sft.jsonl'), filters: { breakage: 'nope' as 'any' } }),
      /Invalid export filters/,
    );
  });

  test("a card is never silently replaced by another export's", async () => {
    const dir = tempDir();
    await new DatasetStore(dir).appendDemonstration(makeDemo({ n: 1 }));
    const outDir = tempDir();
    const sft = await exportDataset({ format: 'trl-sft', dir, out: join(outDir, 'sft.jsonl'), systemPrompt: SYSTEM });
    const card = readFileSync(sft.card, 'utf8');
    await assert.rejects(
      exportDataset({ format: 'trl-grpo', dir, out: join(outDir, 'grpo.jsonl'), systemPrompt: SYSTEM }),
      /dataset card of sft\.jsonl/,
    );
    assert.equal(readFileSync(sft.card, 'utf8'), card, 'the first card is untouched');
    assert.equal(existsSync(join(outDir, 'grpo.jsonl')), false);
    await exportDataset({ format: 'trl-sft', dir, out: join(outDir, 'sft.jsonl'), systemPrompt: SYSTEM, filters: { status: 'all' } });
    assert.match(readFileSync(sft.card, 'utf8'), /status: `all`/, 're-exporting the same file replaces its own card');
  });

  test('swebench-instances: one uniform row per prediction instance, with what re-scoring needs', async () => {
    const preds = await exportTo('swebench');
    const inst = await exportTo('swebench-instances');
    assertUniformColumns(inst.rows);
    assert.deepEqual(
      inst.rows.map((r) => r.instance_id),
      preds.rows.map((r) => r.instance_id),
    );
    for (const r of inst.rows) {
      assert.deepEqual(JSON.parse(r.FAIL_TO_PASS as string), ['executed_cleanly']);
      assert.equal(typeof r.seed, 'number');
      assert.equal(r.base_commit, (r.instance_id as string).split('__')[0] === r.task_id ? r.base_commit : 'x');
      assert.equal(typeof JSON.parse(r.library_versions as string), 'object');
    }
  });
});

describe('forgeenv export command', () => {
  test('prints counts and problem locations; usage errors exit 2, failures exit 1', async () => {
    const printed: string[] = [];
    const out = (s: string) => printed.push(s);
    const outFile = join(tempDir(), 'sft.jsonl');
    const code = await runExportCommand(
      ['--format', 'trl-sft', join(ROOT, SMALL), '--out', outFile, '--primitive', 'RenameApiCall', '--primitive=ModifyConfigField'],
      out,
      { now: NOW, systemPrompt: SYSTEM },
    );
    assert.equal(code, 0);
    const text = printed.join('\n');
    assert.match(text, new RegExp(`Wrote 2 trl-sft row\\(s\\) to ${outFile.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    assert.match(text, /demonstrations\.jsonl:5: /);
    assert.match(text, /demonstrations\.jsonl:7: foreign line/);
    assert.equal(readRows(outFile).length, 2);

    printed.length = 0;
    assert.equal(await runExportCommand(['--format', 'parquet', SMALL, '--out', outFile], out), 2);
    assert.match(printed.join('\n'), /--format must be one of trl-sft, trl-grpo, trl-kto, swebench/);
    assert.equal(await runExportCommand(['--format', 'trl-sft', SMALL], out), 2);
    assert.equal(await runExportCommand(['--format', 'trl-sft', SMALL, '--out', outFile, '--status', 'failed'], out), 2);
    assert.equal(await runExportCommand(['--format', 'swebench', SMALL, '--out', outFile, '--style', 'conversational'], out), 2);
    printed.length = 0;
    const missing = join(tempDir(), 'missing');
    assert.equal(await runExportCommand(['--format', 'trl-sft', missing, '--out', outFile], out), 1);
    assert.match(printed.join('\n'), /does not exist/);
  });
});

describe('incremental exports', () => {
  const opts = (dir: string, out: string, extra: Partial<ExportOptions> = {}): ExportOptions => ({
    format: 'trl-sft',
    dir,
    out,
    now: NOW,
    systemPrompt: SYSTEM,
    ...extra,
  });

  /** Exports to `out` (incrementally when it can) and checks data, card and result against a full export into a fresh folder. */
  async function exportAndCompare(dir: string, out: string, extra: Partial<ExportOptions> = {}) {
    const r = await exportDataset(opts(dir, out, extra));
    const fullOut = join(tempDir('forgeenv-full-'), basename(out));
    const full = await exportDataset(opts(dir, fullOut, { ...extra, incremental: false }));
    assert.equal(full.mode, 'full');
    assert.equal(readFileSync(out, 'utf8'), readFileSync(fullOut, 'utf8'), `${r.mode} export equals a full one byte for byte`);
    assert.equal(readFileSync(r.card, 'utf8'), readFileSync(full.card, 'utf8'), 'and so does its card');
    const summary = (x: typeof r) => ({
      rows: x.rows,
      deduplicated: x.deduplicated,
      stats: x.stats,
      problems: x.problems,
      unmatched: x.unmatchedPrimitives,
      byPrimitive: [...x.rowsByPrimitive].sort(),
    });
    assert.deepEqual(summary(r), summary(full));
    return r;
  }

  test('after appends only the new lines are read and their rows appended; a superseding revision rewrites in full', async () => {
    const dir = tempDir();
    const store = new DatasetStore(dir);
    const demos = Array.from({ length: 6 }, (_, i) => makeDemo({ n: i + 1, taskId: `t${i % 3}`, success: i !== 4 }));
    for (const d of demos) await store.appendDemonstration(d);
    await store.appendReview({ record_id: demos[1].info.record_id, reviewer: 'r', verdict: 'reject' });
    const out = join(tempDir(), 'sft.jsonl');
    assert.equal((await exportAndCompare(dir, out)).mode, 'full', 'the first export is full');
    const again = await exportAndCompare(dir, out);
    assert.deepEqual([again.mode, again.parsedLines], ['appended', 0], 'nothing new: nothing parsed, nothing rewritten');

    // Plain appends: a new record, a repeat of an earlier row (deduplicated), a corrupt line, and an approval of a row.
    await store.appendDemonstration(makeDemo({ n: 7, taskId: 't7' }));
    const repeat = { ...makeDemo({ n: 8, taskId: 't0' }), repair_prompt: demos[0].repair_prompt };
    await store.appendDemonstration(repeat);
    appendFileSync(join(dir, 'demonstrations.jsonl'), '{"broken": \n');
    await store.appendReview({ record_id: demos[0].info.record_id, reviewer: 'r', verdict: 'approve' });
    const before = readFileSync(out, 'utf8');
    const inc = await exportAndCompare(dir, out);
    assert.deepEqual([inc.mode, inc.parsedLines], ['appended', 4]);
    assert.ok(readFileSync(out, 'utf8').startsWith(before), 'earlier rows stay as they were');
    assert.equal(inc.deduplicated, again.deduplicated + 1, 'the repeated diff is deduplicated against the earlier rows');
    assert.equal(inc.problems.length, 1);

    // A revision superseding an exported demonstration removes an earlier row: full rewrite.
    await store.appendDemonstration(makeDemo({ n: 9, taskId: 't0', previous: demos[0] }));
    const rev = await exportAndCompare(dir, out);
    assert.equal(rev.mode, 'full');
    assert.equal(rev.stats.superseded, 1);
    assert.equal((await exportAndCompare(dir, out)).mode, 'appended', 'and the next one appends again');

    // A review rejecting an exported row changes it: full. One that changes nothing for the filter appends.
    await store.appendReview({ record_id: demos[2].info.record_id, reviewer: 'r', verdict: 'reject' });
    assert.equal((await exportAndCompare(dir, out)).mode, 'full');
    await store.appendReview({ record_id: demos[3].info.record_id, reviewer: 'r', verdict: 'approve' });
    assert.equal((await exportAndCompare(dir, out)).mode, 'appended');
    // A review bringing back a rejected record adds a row in the middle: full.
    await store.appendReview({ record_id: demos[1].info.record_id, reviewer: 'r', verdict: 'approve' });
    assert.equal((await exportAndCompare(dir, out)).mode, 'full');
  });

  test('other options, an edited output, a rewritten source or an unterminated last line mean a full export', async () => {
    const dir = tempDir();
    const store = new DatasetStore(dir);
    for (let i = 1; i <= 3; i++) await store.appendDemonstration(makeDemo({ n: i, taskId: `t${i}` }));
    const out = join(tempDir(), 'sft.jsonl');
    await exportAndCompare(dir, out);
    assert.equal((await exportAndCompare(dir, out, { filters: { status: 'all' } })).mode, 'full', 'other filters');
    assert.equal((await exportAndCompare(dir, out, { filters: { status: 'all' } })).mode, 'appended');
    assert.equal((await exportAndCompare(dir, out, { filters: { status: 'all' }, style: 'conversational' })).mode, 'full', 'other style');

    appendFileSync(out, '{"prompt":"added by hand","completion":""}\n');
    await store.appendDemonstration(makeDemo({ n: 4, taskId: 't4' }));
    assert.equal((await exportAndCompare(dir, out, { filters: { status: 'all' }, style: 'conversational' })).mode, 'full', 'edited output');
    assert.doesNotMatch(readFileSync(out, 'utf8'), /added by hand/);

    const file = join(dir, 'demonstrations.jsonl');
    const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
    writeFileSync(file, [lines[1], lines[0], ...lines.slice(2)].join('\n') + '\n');
    assert.equal(
      (await exportAndCompare(dir, out, { filters: { status: 'all' }, style: 'conversational' })).mode,
      'full',
      'reordered source',
    );

    // A line still being written counts (as in a full export), but no index is kept until it is finished.
    appendFileSync(file, JSON.stringify(makeDemo({ n: 5, taskId: 't5' })));
    const tail = await exportAndCompare(dir, out, { filters: { status: 'all' }, style: 'conversational' });
    assert.equal(tail.rows, 5);
    appendFileSync(file, '\n');
    assert.equal((await exportAndCompare(dir, out, { filters: { status: 'all' }, style: 'conversational' })).mode, 'full');
    assert.equal((await exportAndCompare(dir, out, { filters: { status: 'all' }, style: 'conversational' })).mode, 'appended');
  });

  test('the card is still never replaced by another export’s, incremental or not', async () => {
    const dir = tempDir();
    const store = new DatasetStore(dir);
    await store.appendDemonstration(makeDemo({ n: 1 }));
    const outDir = tempDir();
    await exportDataset(opts(dir, join(outDir, 'sft.jsonl')));
    await store.appendDemonstration(makeDemo({ n: 2, taskId: 't2' }));
    const card = readFileSync(join(outDir, 'README.md'), 'utf8');
    await assert.rejects(exportDataset(opts(dir, join(outDir, 'other.jsonl'))), /dataset card of sft\.jsonl/);
    assert.equal(readFileSync(join(outDir, 'README.md'), 'utf8'), card);
    const r = await exportDataset(opts(dir, join(outDir, 'sft.jsonl')));
    assert.equal(r.mode, 'appended');
    assert.match(readFileSync(r.card, 'utf8'), /`sft\.jsonl`: 2 row\(s\)/);
  });
});

describe('trl-kto: one row per attempt, labelled by the verified outcome', () => {
  test('failures are taken by default and labelled false; the label counts are reported', async () => {
    const { result, rows } = await exportTo('trl-kto');
    assert.equal(result.filters.status, 'all');
    const positives = rows.filter((r) => r.label === true).length;
    const negatives = rows.filter((r) => r.label === false).length;
    assert.equal(positives + negatives, rows.length, 'every row has a boolean label');
    assert.ok(positives > 0 && negatives > 0, `both labels occur (${positives}/${negatives})`);
    assert.deepEqual(result.labels, { positive: positives, negative: negatives });
    // The label is the verifier's: a row is positive exactly when its record is a verified success.
    // The fixture holds corrupt lines on purpose (the export skips them): read only the valid ones.
    const records = readFileSync(join(ROOT, SMALL, 'demonstrations.jsonl'), 'utf8')
      .split('\n')
      .flatMap((l) => {
        try {
          const r = JSON.parse(l) as DemonstrationRecord;
          return r && typeof r === 'object' && r.info ? [r] : [];
        } catch {
          return [];
        }
      });
    for (const row of rows) {
      const rec = records.find((r) => r.repair_completion === row.completion && row.prompt === `${SYSTEM}\n\n${r.repair_prompt}`);
      assert.ok(rec, 'each row comes from a record');
      assert.equal(row.label, verifiedSuccess(rec));
    }
    assert.equal(new Set(rows.map((r) => JSON.stringify(r))).size, rows.length, 'no two identical rows');
  });
  test('--status success leaves only positives', async () => {
    const { result, rows } = await exportTo('trl-kto', { filters: { status: 'success' } });
    assert.ok(rows.length > 0);
    assert.ok(rows.every((r) => r.label === true));
    assert.deepEqual(result.labels, { positive: rows.length, negative: 0 });
  });
});
