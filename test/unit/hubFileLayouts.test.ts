// Nested layouts of local data files handed to a library reader (src/env/hub/fileLayouts.ts): derived
// from the reader a script uses, written with the layout's invariants, and read back by the snapshot's
// own transformers (SquadV1Processor / SquadV2Processor) when its venv is built.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { z } from 'zod';
import { missingDataFiles } from '../../src/env/hub/dataFiles';
import { deriveHubNeeds } from '../../src/env/hub/needs';
import { isSnapshotVenvReady, snapshotPython } from '../../src/env/snapshots/venv';

// A script the project has never seen: it hands --train_file to transformers' SQuAD reader.
const SCRIPT = [
  'import argparse',
  'from transformers.data.processors.squad import SquadV1Processor, squad_convert_examples_to_features',
  'p = argparse.ArgumentParser()',
  'p.add_argument("--train_file", default=None)',
  'p.add_argument("--notes_file", default=None)',
  'args = p.parse_args()',
  'examples = SquadV1Processor().get_train_examples(None, filename=args.train_file)',
].join('\n');

const SquadFile = z.object({
  data: z.array(
    z.object({
      title: z.string(),
      paragraphs: z.array(
        z.object({
          context: z.string(),
          qas: z.array(
            z.object({
              id: z.string(),
              question: z.string(),
              answers: z.array(z.object({ text: z.string().min(1), answer_start: z.number().int().min(0) })).min(1),
              is_impossible: z.boolean(),
            }),
          ),
        }),
      ),
    }),
  ),
});

const files = () => missingDataFiles(deriveHubNeeds(SCRIPT, ['--train_file', 'data/train.json']).datasets, {});

describe('local data files in a reader layout', () => {
  test('a json file handed to a SQuAD reader is written in the SQuAD layout, each answer at its answer_start', () => {
    const need = deriveHubNeeds(SCRIPT, ['--train_file', 'data/train.json']).datasets.find((d) => d.path === 'data/train.json');
    assert.equal(need?.layout, 'squad');
    const parsed = SquadFile.parse(JSON.parse(files()['data/train.json']));
    const qas = parsed.data.flatMap((a) => a.paragraphs.flatMap((p) => p.qas.map((q) => ({ q, context: p.context }))));
    assert.ok(qas.length >= 16, `${qas.length} questions`);
    for (const { q, context } of qas) assert.equal(context.slice(q.answers[0].answer_start).indexOf(q.answers[0].text), 0, q.id);
    assert.equal(new Set(qas.map(({ q }) => q.id)).size, qas.length, 'question ids are unique');
    assert.equal(files()['data/train.json'], files()['data/train.json'], 'deterministic');
  });

  test('without a known reader a json data file stays a list of flat records', () => {
    const plain = SCRIPT.replace(/SquadV1Processor|squad_convert_examples_to_features/g, 'MyReader');
    const need = deriveHubNeeds(plain, ['--train_file', 'data/train.json']).datasets.find((d) => d.path === 'data/train.json');
    assert.equal(need?.layout, undefined);
    const out = missingDataFiles([need!], {});
    assert.ok(Array.isArray(JSON.parse(out['data/train.json'])));
  });
});

const SNAPSHOT = '2024-09';
describe(
  'the SQuAD layout read by the real transformers',
  { skip: !isSnapshotVenvReady(SNAPSHOT) && `the ${SNAPSHOT} venv is not built` },
  () => {
    const dir = mkdtempSync(join(tmpdir(), 'forgeenv-squad-'));
    after(() => rmSync(dir, { recursive: true, force: true }));

    test('SquadV1Processor and SquadV2Processor read every question, with the answer found at its start', { timeout: 120_000 }, () => {
      writeFileSync(join(dir, 'train.json'), files()['data/train.json']);
      const code = [
        'import sys',
        'from transformers.data.processors.squad import SquadV1Processor, SquadV2Processor',
        'for P in (SquadV1Processor, SquadV2Processor):',
        '    ex = P().get_train_examples(None, filename=sys.argv[1])',
        // The words at the reader's start/end positions (from answer_start) are the answer text.
        '    ok = sum(1 for e in ex if " ".join(e.doc_tokens[e.start_position : e.end_position + 1]) == e.answer_text)',
        '    print(P.__name__, len(ex), ok)',
      ].join('\n');
      const r = spawnSync(snapshotPython(SNAPSHOT), ['-c', code, join(dir, 'train.json')], {
        encoding: 'utf8',
        timeout: 120_000,
        env: { PATH: process.env.PATH, HOME: dir, HF_HUB_OFFLINE: '1', TRANSFORMERS_OFFLINE: '1', TRANSFORMERS_VERBOSITY: 'error' },
      });
      assert.equal(r.status, 0, r.stderr.slice(-2000));
      const lines = r.stdout
        .trim()
        .split('\n')
        .filter((l) => /^SquadV\dProcessor /.test(l));
      assert.equal(lines.length, 2, r.stdout);
      for (const l of lines) {
        const [, n, ok] = l.split(' ').map(Number);
        assert.ok(n >= 16 && ok === n, l);
      }
    });
  },
);
