// Per-word tag columns (kind `tags`, src/env/hub/tokenTags.ts) as real NER datasets have them: one tag per
// word of the row's `tokens`, in valid IOB order; a hub dataset's tags are `Sequence(ClassLabel(names))`
// (what run_ner and its kin test with `isinstance(features[col].feature, ClassLabel)`), a data file's the
// tag strings. The real part builds a hub dataset with the snapshot's own `datasets` and reads it back;
// it is skipped, saying why, when the venv or its base hub is not built.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { synthesizeDataFile } from '../../src/env/hub/dataFiles';
import { deriveHubNeeds, HubNeedsSchema, kindOf } from '../../src/env/hub/needs';
import { IOB_NAMES, iobTags } from '../../src/env/hub/tokenTags';
import { realHubFixture } from './realHubFixture';

/** Whether `tags` is a valid IOB2 sequence: an `I-X` only right after `B-X` or `I-X`. */
function validIob(tags: readonly string[]): boolean {
  return tags.every((t, i) => !t.startsWith('I-') || (i > 0 && tags[i - 1].slice(1) === t.slice(1) && tags[i - 1][0] !== 'O'));
}

function seeded(seed: number): () => number {
  return () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

describe('per-word tag columns', () => {
  test('the tag names of real NER datasets take the tags kind; the token-classification template uses it', () => {
    for (const n of ['ner_tags', 'pos_tags', 'chunk_tags', 'tags']) assert.equal(kindOf(n), 'tags', n);
    assert.equal(kindOf('tag_count'), 'string');
    const ner = [
      'from datasets import load_dataset',
      'raw = load_dataset("acme/ner")',
      'features = raw["train"].features',
      'label_column_name = column_names[1]',
      'if isinstance(features[label_column_name].feature, ClassLabel):',
      '    label_list = features[label_column_name].feature.names',
      'words = raw["train"][0]["tokens"]',
    ].join('\n');
    const needs = deriveHubNeeds(ner);
    assert.deepEqual(needs.datasets.find((d) => d.path === 'acme/ner')?.columns, { tokens: 'tokens', ner_tags: 'tags' });
    assert.ok(HubNeedsSchema.safeParse(needs).success, 'the needs schema accepts the kind');
    assert.equal(HubNeedsSchema.safeParse({ models: [], datasets: [{ path: 'x', columns: { t: 'tagz' } }] }).success, false);
  });

  test('drawn tags are valid IOB over the given names, and spans occur', () => {
    const r = seeded(3);
    const all = Array.from({ length: 200 }, () => iobTags(1 + Math.floor(r() * 12), r));
    for (const t of all) {
      assert.ok(validIob(t), t.join(' '));
      for (const x of t) assert.ok((IOB_NAMES as readonly string[]).includes(x), x);
    }
    const flat = all.flat();
    assert.ok(flat.includes('O') && flat.some((x) => x.startsWith('B-')) && flat.some((x) => x.startsWith('I-')));
    // A dataset's own names (wnut's) are kept; a plain name set has no spans, only its names.
    const wnut = ['O', 'B-corporation', 'I-corporation', 'B-location', 'I-location'];
    const w = iobTags(40, r, wnut);
    assert.ok(validIob(w) && w.every((x) => wnut.includes(x)), w.join(' '));
    const plain = iobTags(30, r, ['NN', 'VB', 'DT']);
    assert.ok(
      plain.every((x) => ['NN', 'VB', 'DT'].includes(x)),
      plain.join(' '),
    );
  });

  test('a json data file: tag strings, one per word, and int lists beside words aligned too', () => {
    const rows = JSON.parse(
      synthesizeDataFile({ path: 'train.json', format: 'json', columns: { tokens: 'tokens', ner_tags: 'tags', ids: 'ints' } }, 30),
    ) as Array<{ tokens: string[]; ner_tags: string[]; ids: number[] }>;
    assert.equal(rows.length, 30);
    assert.ok(new Set(rows.map((x) => x.tokens.length)).size > 1, 'rows have different lengths');
    for (const row of rows) {
      assert.deepEqual(Object.keys(row), ['tokens', 'ner_tags', 'ids'], 'the columns keep their order');
      assert.equal(row.ner_tags.length, row.tokens.length);
      assert.equal(row.ids.length, row.tokens.length);
      assert.ok(validIob(row.ner_tags) && row.ner_tags.every((t) => typeof t === 'string'), row.ner_tags.join(' '));
    }
    // Labels the need gives are the names; without words, tags are a list of their own.
    const own = JSON.parse(
      synthesizeDataFile({ path: 't.jsonl', format: 'json', columns: { tags: 'tags' }, labels: { tags: ['O', 'B-X', 'I-X'] } }, 5),
    ) as Array<{ tags: string[] }>;
    for (const row of own) assert.ok(row.tags.length > 0 && row.tags.every((t) => ['O', 'B-X', 'I-X'].includes(t)));
  });

  test('a csv file cannot hold tag lists: a clear error', () => {
    assert.throws(
      () => synthesizeDataFile({ path: 'train.csv', format: 'csv', columns: { tokens: 'tokens', ner_tags: 'tags' } }),
      /csv file holds only scalar columns/,
    );
  });
});

const SNAPSHOT = '2025-09';
const { skipReason, buildItems, readBack } = realHubFixture('forgeenv-tags-');

describe(`per-word tags built by the ${SNAPSHOT} datasets`, { skip: skipReason(SNAPSHOT) }, () => {
  test('a hub dataset: ner_tags is Sequence(ClassLabel) with IOB names, one valid IOB tag per word', { timeout: 600_000 }, async () => {
    const r = await buildItems(SNAPSHOT, {
      needs: {
        models: [],
        datasets: [
          { path: 'acme/ner', columns: { tokens: 'tokens', ner_tags: 'tags', pos: 'ints' }, splits: ['train', 'validation'] },
          // A need that names its own tag names (a table entry's).
          {
            path: 'acme/wnut',
            columns: { tokens: 'tokens', tags: 'tags' },
            labels: { tags: ['O', 'B-corporation', 'I-corporation'] },
            splits: ['train'],
          },
        ],
      },
    });
    assert.deepEqual(r.refusals, []);
    const code = [
      'import datasets, json',
      'out = {}',
      'for path, col in (("acme/ner", "ner_tags"), ("acme/wnut", "tags")):',
      '    d = datasets.load_dataset(path)',
      '    f = d["train"].features[col]',
      '    names = f.feature.names',
      '    rows = [r for s in d for r in d[s]]',
      '    tags = [[names[i] for i in r[col]] for r in rows]',
      '    out[path] = dict(',
      '        is_class_label=isinstance(f.feature, datasets.ClassLabel),',
      '        names=names,',
      '        rows=len(rows),',
      '        aligned=sum(len(r[col]) == len(r["tokens"]) for r in rows),',
      '        pos_aligned=sum(len(r.get("pos") or r["tokens"]) == len(r["tokens"]) for r in rows),',
      '        lengths=len({len(r["tokens"]) for r in rows}),',
      '        tags=tags,',
      '    )',
      'print("RESULT " + json.dumps(out))',
    ].join('\n');
    const line = readBack(SNAPSHOT, r.hubDir, code)
      .split('\n')
      .find((l) => l.startsWith('RESULT '));
    assert.ok(line, 'the reader printed its result');
    type Read = {
      is_class_label: boolean;
      names: string[];
      rows: number;
      aligned: number;
      pos_aligned: number;
      lengths: number;
      tags: string[][];
    };
    const out = JSON.parse(line.slice('RESULT '.length)) as Record<string, Read>;
    const ner = out['acme/ner'];
    assert.equal(ner.is_class_label, true);
    assert.deepEqual(ner.names, [...IOB_NAMES]);
    assert.ok(ner.rows >= 80, String(ner.rows));
    assert.equal(ner.aligned, ner.rows);
    assert.equal(ner.pos_aligned, ner.rows);
    assert.ok(ner.lengths > 1, 'rows have different lengths');
    for (const t of ner.tags) assert.ok(validIob(t), t.join(' '));
    const wnut = out['acme/wnut'];
    assert.equal(wnut.is_class_label, true);
    assert.deepEqual(wnut.names, ['O', 'B-corporation', 'I-corporation']);
    assert.equal(wnut.aligned, wnut.rows);
    for (const t of wnut.tags) assert.ok(validIob(t), t.join(' '));
  });
});
