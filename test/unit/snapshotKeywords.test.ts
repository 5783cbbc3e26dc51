// Snapshot inference from the keywords a script passes to library classes (snapshotInference.ts
// constructorKeywords / refusedKeywords), on the recorded API data of the real releases
// (resources/snapshots/api) and tiny scripts written here.
import { strict as assert } from 'node:assert';
import { describe, test } from 'node:test';
import { loadPackageApi } from '../../src/env/snapshots/api';
import {
  constructorKeywords,
  inferSnapshot,
  refusedKeywords,
  renamedKwargs,
  snapshotFits,
} from '../../src/env/taskmaking/snapshotInference';

const missingAt = (script: string, ids: string[]) => Object.fromEntries(snapshotFits(script, ids).map((f) => [f.id, f.missing]));

describe('snapshot inference: keywords of library classes', () => {
  test("a keyword a release dropped rules it out (trl 0.16 took DPOTrainer's beta into DPOConfig)", () => {
    const script = [
      'from trl import DPOTrainer',
      'trainer = DPOTrainer(model, ref, args=training_args, beta=0.1, tokenizer=tok, max_length=64)',
    ].join('\n');
    const m = missingAt(script, ['2024-06', '2025-03']);
    assert.deepEqual(m['2024-06'], []);
    assert.ok(m['2025-03'].includes('trl.DPOTrainer(beta=) (line 2)'), JSON.stringify(m));
    const c = inferSnapshot(script, { ids: ['2024-06', '2025-03'] });
    assert.equal(c.id, '2024-06');
  });

  test('a keyword a deprecation decorator still takes (Trainer(tokenizer=) until transformers 5) is accepted', () => {
    const script = 'from transformers import Trainer\nt = Trainer(model=m, args=a, tokenizer=tok)\n';
    assert.ok(Object.keys(renamedKwargs('2025-09')['transformers.trainer.Trainer.__init__'] ?? {}).includes('tokenizer'));
    const m = missingAt(script, ['2025-09', '2026-11']);
    assert.deepEqual(m['2025-09'], []);
    assert.deepEqual(m['2026-11'], ['transformers.Trainer(tokenizer=) (line 2)']);
  });

  test('a keyword no snapshot takes tells none apart and is left out (a branch the run never takes)', () => {
    const script = 'from transformers import Trainer\nif False:\n    t = Trainer(model=m, no_such_keyword_anywhere=1)\n';
    const m = missingAt(script, ['2024-06', '2026-11']);
    assert.deepEqual(m, { '2024-06': [], '2026-11': [] });
  });

  test('a class taking **kwargs, a function, and a name not imported from a library are not checked', () => {
    const calls = constructorKeywords(
      ['from trl import DPOTrainer', 'from mylib import Thing', 'Thing(beta=1)', 'DPOTrainer(beta=0.1)', 'DPOTrainer(model)'].join('\n'),
    );
    assert.deepEqual(calls, [{ module: 'trl', name: 'DPOTrainer', keywords: ['beta'], line: 4 }]);
    const api = loadPackageApi('2026-11', 'transformers');
    // Tokenizers take **kwargs: anything goes.
    assert.deepEqual(refusedKeywords(api, { module: 'transformers', name: 'AlbertTokenizer', keywords: ['anything'], line: 1 }), []);
  });
});
