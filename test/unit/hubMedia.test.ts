// Models beyond text in the hub's table (src/env/hub/modelTable.ts): remote-code embedders served as
// the standard architecture their code extends, and the multimodal families' processors.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { resolveModel } from '../../src/env/hub/modelTable';

describe('remote-code embedding models', () => {
  test('nomic-embed-text (trust_remote_code) is a BERT encoder with the uncased tokenizer, by table and by pattern', () => {
    for (const id of ['nomic-ai/nomic-embed-text-v1.5', 'nomic-ai/nomic-embed-text-v2-moe', 'someone/nomic-bert-2048-finetuned']) {
      const r = resolveModel(id);
      assert.equal(r.model_type, 'bert', id);
      assert.equal(r.tokenizer, 'bert-uncased', id);
    }
    assert.equal(resolveModel('nomic-ai/nomic-embed-text-v1.5').resolvedBy, 'table');
  });
});
