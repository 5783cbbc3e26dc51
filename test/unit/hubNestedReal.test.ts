// Nested columns (src/env/hub/nestedShapes.ts): a dataset table entry's list-of-struct columns reach the
// need, and the snapshot's own datasets builds them (make_hub_items.py) so that a script walking
// `ex["completions"][i]["annotations"][aspect]["Rating"]` finds the real structure and values.
// The real part is skipped, saying why, when the venv or its base hub is not built.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
import { synthesizeDataFile } from '../../src/env/hub/dataFiles';
import { deriveHubNeeds, HubNeedsSchema } from '../../src/env/hub/needs';
import { EMPTY_HUB_NEEDS, withColumn } from '../../src/env/taskmaking/hubSupply';
import { nestedValue, NestedShapeSchema, type NestedShape } from '../../src/env/hub/nestedShapes';
import { realModeEnv } from '../../src/env/run/realMode';
import { snapshotPython } from '../../src/env/snapshots/venv';
import { realHubFixture } from './realHubFixture';

// A script the project has never seen, reading UltraFeedback's nested completions.
const SCRIPT = [
  'from datasets import load_dataset',
  'ds = load_dataset("openbmb/UltraFeedback", split="train")',
  'def rating(example):',
  '    i = example["models"].index("gpt-4")',
  '    return {"r": int(example["completions"][i]["annotations"]["honesty"]["Rating"])}',
  'ds = ds.filter(lambda ex: "gpt-4" in ex["models"]).map(rating)',
].join('\n');

const need = () => deriveHubNeeds(SCRIPT).datasets.find((d) => d.path === 'openbmb/UltraFeedback')!;

describe('nested columns from the dataset table', () => {
  test('the need carries the table shapes; values follow them (fixed lengths, distinct pooled models, ratings "1".."5")', () => {
    const n = need();
    assert.equal(n.columns?.completions, 'nested');
    assert.equal(n.columns?.models, 'nested');
    const shapes = n.shapes!;
    for (const s of Object.values(shapes)) NestedShapeSchema.parse(s);
    let seed = 7;
    const r = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const models = nestedValue(shapes.models, r, () => 'x') as string[];
    const completions = nestedValue(shapes.completions, r, () => 'x') as Array<{ annotations: Record<string, { Rating: string }> }>;
    assert.equal(models.length, 4);
    assert.equal(new Set(models).size, 4, 'a prompt is answered by 4 different models');
    assert.equal(completions.length, 4);
    for (const c of completions)
      for (const aspect of ['helpfulness', 'honesty', 'instruction_following', 'truthfulness'])
        assert.match(c.annotations[aspect].Rating, /^[1-5]$/);
  });

  test('a column a run asks for is added beside the nested ones, which keep their shapes', () => {
    const n = need();
    const out = withColumn(EMPTY_HUB_NEEDS, [n], 'score').datasets[0];
    assert.equal(out.columns?.score, 'float');
    assert.deepEqual(out.shapes, n.shapes);
    assert.ok(HubNeedsSchema.safeParse({ models: [], datasets: [out] }).success);
  });

  test('an unknown dataset: the chains of subscripts past a column give its structure', () => {
    const script = [
      'from datasets import load_dataset',
      'ds = load_dataset("acme/reviews", split="train")',
      'def fmt(example):',
      '    i = 0',
      '    return {"a": example["replies"][i]["body"], "s": example["replies"][i]["meta"]["score"], "l": example["info"]["lang"]}',
      'def tok(batch):',
      '    return {"q": [batch["thread"][j]["title"] for j in range(len(batch["thread"]))]}',
      'def chat(example):',
      '    return example["turns"][-1]["content"] + example["text"][0]',
      'ds = ds.map(fmt).map(tok, batched=True).map(chat)',
    ].join('\n');
    const d = deriveHubNeeds(script).datasets.find((x) => x.path === 'acme/reviews')!;
    assert.equal(d.columns?.replies, 'nested');
    assert.deepEqual(d.shapes?.replies, {
      list: { struct: { body: { value: 'string' }, meta: { struct: { score: { value: 'string' } } } } },
    });
    assert.deepEqual(d.shapes?.info, { struct: { lang: { value: 'string' } } });
    // In a batched function the first index is the row: each row's thread is a struct.
    assert.deepEqual(d.shapes?.thread, { struct: { title: { value: 'string' } } });
    // A list of {content} (and role) is a conversation; a character of a string is no structure.
    assert.equal(d.columns?.turns, 'messages');
    assert.equal(d.columns?.text, 'string');
    // A csv file holds flat values only: the column stays a string there.
    const csv = deriveHubNeeds(script.replace('load_dataset("acme/reviews", split="train")', 'load_dataset("csv", data_files="r.csv")'));
    assert.equal(csv.datasets.find((x) => x.path === 'r.csv')?.columns?.info, 'string');
  });

  test('a shape that is not a list, struct or value is refused by the schema', () => {
    assert.equal(NestedShapeSchema.safeParse({ list: { dict: {} } }).success, false);
    assert.equal(NestedShapeSchema.safeParse({ struct: { 'a"b': { value: 'string' } } }).success, false);
  });

  test('a local json file with a nested column is written with its shape', () => {
    const shape: NestedShape = { list: { struct: { text: { value: 'string' }, score: { value: 'int', values: ['1', '2'] } } }, length: 2 };
    const rows = JSON.parse(
      synthesizeDataFile({ path: 'x.jsonl', format: 'json', columns: { items: 'nested' }, shapes: { items: shape } }, 4),
    ) as Array<{ items: Array<{ text: string; score: number }> }>;
    assert.equal(rows.length, 4);
    for (const row of rows) {
      assert.equal(row.items.length, 2);
      for (const it of row.items) assert.ok(typeof it.text === 'string' && (it.score === 1 || it.score === 2));
    }
  });
});

const SNAPSHOT = '2025-09';
const { cacheDir, skipReason, buildItems } = realHubFixture('forgeenv-nested-');

describe(`nested columns built by the ${SNAPSHOT} datasets`, { skip: skipReason(SNAPSHOT) }, () => {
  test('load_dataset offline gives list-of-struct completions the script can walk', { timeout: 600_000 }, async () => {
    const r = await buildItems(SNAPSHOT, {
      needs: {
        models: [],
        datasets: [
          need(),
          // A shape inferred from a script's subscripts: lists of any length, no pooled values.
          {
            path: 'acme/reviews',
            columns: { replies: 'nested', text: 'string' },
            shapes: { replies: { list: { struct: { body: { value: 'string' }, meta: { struct: { score: { value: 'float' } } } } } } },
            splits: ['train'],
          },
        ],
      },
    });
    assert.deepEqual(r.refusals, []);
    const code = [
      'import datasets',
      'ds = datasets.load_dataset("openbmb/UltraFeedback", split="train")',
      'ok = [len(set(ex["models"])) == 4 == len(ex["completions"]) and all(c["annotations"]["helpfulness"]["Rating"] in "12345" for c in ex["completions"]) and isinstance(ex["completions"][0]["fine-grained_score"], float) for ex in ds]',
      'print(len(ds), sum(ok), sum("gpt-3.5-turbo" in ex["models"] for ex in ds))',
      'r = datasets.load_dataset("acme/reviews", split="train")',
      'assert all(len(x["replies"]) >= 1 and isinstance(x["replies"][0]["meta"]["score"], float) and isinstance(x["replies"][0]["body"], str) for x in r), r[0]',
    ].join('\n');
    const env = { PATH: process.env.PATH, HOME: cacheDir, ...realModeEnv(r.hubDir), TRANSFORMERS_VERBOSITY: 'error' };
    const out = spawnSync(snapshotPython(SNAPSHOT), ['-c', code], { env, cwd: cacheDir, encoding: 'utf8', timeout: 300_000 });
    assert.equal(out.status, 0, out.stderr.slice(-3000));
    const [rows, ok, withModel] = out.stdout
      .trim()
      .split('\n')
      .filter((l) => /^\d+ \d+ \d+$/.test(l))
      .pop()!
      .split(' ')
      .map(Number);
    assert.ok(rows >= 64 && ok === rows, out.stdout);
    // Pooled model names are real ones a script filters on: some rows hold a given one.
    assert.ok(withModel > 0 && withModel < rows, out.stdout);
  });
});
