// The custom-model-code refusal (rules.ts): a keyword only a repository's own model code takes, on a
// recorded error text and a tiny script written here.
import { strict as assert } from 'node:assert';
import { describe, test } from 'node:test';
import { parseHelpFlags, parseHelpOptions } from '../../src/env/taskmaking/parserOptions';
import { diagnose, remoteCodeLoadWith, type RuleContext } from '../../src/env/taskmaking/rules';

const ctxOf = (script: string): RuleContext => ({
  script,
  args: [],
  env: {},
  options: parseHelpOptions('usage: x.py [-h]'),
  flags: parseHelpFlags('usage: x.py [-h]'),
});

// Recorded from a 2024-06 run (transformers 4.42), a BERT stand-in given the remote code's keyword.
const ERR = `Traceback (most recent call last):
  File "/tmp/run/train.py", line 195, in <module>
    embedding_model = AutoModel.from_pretrained(
  File "/venv/lib/python3.11/site-packages/transformers/modeling_utils.py", line 3832, in from_pretrained
    model = cls(config, *model_args, **model_kwargs)
TypeError: BertModel.__init__() got an unexpected keyword argument 'safe_serialization'
`;

const SCRIPT = [
  'from transformers import AutoModel',
  'emb = AutoModel.from_pretrained(',
  '    "acme/custom-embedder", trust_remote_code=True, safe_serialization=True, torch_dtype=dtype(x)',
  ')',
].join('\n');

describe('custom-model-code refusal', () => {
  test('a keyword only remote model code takes is refused, naming the model and the keyword', () => {
    const d = diagnose(ERR, ctxOf(SCRIPT));
    assert.ok(d?.outcome.kind === 'refuse', JSON.stringify(d));
    assert.equal(d.outcome.rule, 'custom-model-code');
    assert.match(d.outcome.reason, /"acme\/custom-embedder" with trust_remote_code=True and passes safe_serialization=/);
    assert.match(d.outcome.reason, /BertModel/);
  });

  test('without remote code the same error is not this rule', () => {
    const plain = SCRIPT.replace('trust_remote_code=True, ', '');
    assert.equal(remoteCodeLoadWith(plain, 'safe_serialization'), undefined);
    const d = diagnose(ERR, ctxOf(plain));
    assert.notEqual(d?.outcome.kind === 'refuse' ? d.outcome.rule : undefined, 'custom-model-code');
  });
});
