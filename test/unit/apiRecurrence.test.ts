// The snapshot fallback skips a snapshot whose recorded API shows the run's error would recur there (a keyword the
// class's signature lacks, a name its module lacks), when the script itself made the call or import; read from the
// committed API data of the real releases.
import { strict as assert } from 'node:assert';
import { describe, test } from 'node:test';
import { apiErrorRecursAt } from '../../src/env/taskmaking/apiRecurrence';
import { fallbackSnapshot } from '../../src/env/taskmaking/makeTask';
import type { SnapshotFit } from '../../src/env/taskmaking/snapshotInference';

const fromScript = (last: string) =>
  `Traceback (most recent call last):\n  File "/tmp/run/train.py", line 40, in <module>\n    trainer = SFTTrainer(model, tokenizer=tok)\n${last}\n`;
const fromLibrary = (last: string) =>
  `Traceback (most recent call last):\n  File "/tmp/run/train.py", line 12, in <module>\n    m = AutoModelForCausalLM.from_pretrained(name, load_in_4bit=True)\n  File "/venv/lib/python3.11/site-packages/transformers/modeling_utils.py", line 4990, in from_pretrained\n    model = cls(config, *model_args, **model_kwargs)\n${last}\n`;

const SFT_TOKENIZER = "TypeError: SFTTrainer.__init__() got an unexpected keyword argument 'tokenizer'";

describe('an API error predicted from the recorded API', () => {
  test("a keyword the script passes: recurs where the class's recorded signature lacks it, not where it has it", () => {
    // trl 0.11 (2024-09) still took tokenizer=; trl 1.0 (2026-03) takes processing_class= only.
    assert.equal(apiErrorRecursAt(fromScript(SFT_TOKENIZER), '2024-09'), false);
    assert.equal(apiErrorRecursAt(fromScript(SFT_TOKENIZER), '2026-03'), true);
  });

  test("more positional arguments than the release's function takes: recurs where every recorded one takes fewer", () => {
    // transformers 4.42 (2024-06) took get_parameter_names(model, forbidden_layer_types); 4.50 (2025-03) added forbidden_layer_names.
    const err = fromScript('TypeError: get_parameter_names() takes 2 positional arguments but 3 were given');
    assert.equal(apiErrorRecursAt(err, '2024-06'), true);
    assert.equal(apiErrorRecursAt(err, '2025-03'), false);
    // Raised inside a library (its own call), the recorded signatures say nothing about it.
    assert.equal(
      apiErrorRecursAt(fromLibrary('TypeError: get_parameter_names() takes 2 positional arguments but 3 were given'), '2024-06'),
      false,
    );
  });

  test('a name the script imports: recurs where the module lacks it', () => {
    const err = fromScript("ImportError: cannot import name 'AdamW' from 'transformers' (/venv/transformers/__init__.py)");
    assert.equal(apiErrorRecursAt(err, '2023-12'), false);
    assert.equal(apiErrorRecursAt(err, '2026-11'), true);
  });

  test("an attribute the script reads from a library's config dataclass: recurs where its fields lack it", () => {
    const err = fromScript("AttributeError: 'ModelConfig' object has no attribute 'torch_dtype'");
    // trl renamed ModelConfig.torch_dtype to dtype in 1.0 (2026-03); 0.23 (2025-09) still had it.
    assert.equal(apiErrorRecursAt(err, '2025-09'), false);
    assert.equal(apiErrorRecursAt(err, '2026-03'), true);
    // A class that is not a recorded dataclass: its attributes are set in __init__, which the data does not list.
    assert.equal(apiErrorRecursAt(fromScript("AttributeError: 'SFTTrainer' object has no attribute 'zzz_never'"), '2026-03'), false);
  });

  test('an error raised inside a library (a keyword passed on by from_pretrained) is not predicted', () => {
    const err = fromLibrary("TypeError: LlamaForCausalLM.__init__() got an unexpected keyword argument 'load_in_4bit'");
    for (const id of ['2024-09', '2026-03', '2026-11']) assert.equal(apiErrorRecursAt(err, id), false, id);
  });

  test('the fallback passes over the snapshots where the error recurs', () => {
    const fits: SnapshotFit[] = ['2024-09', '2025-03', '2025-09', '2026-03', '2026-11'].map((id) => ({
      id,
      date: `${id}-15`,
      missing: [],
      unknown: 0,
      ready: true,
    }));
    const refusal = { rule: 'unrecognised-error', reason: `no rule recognises the error: ${SFT_TOKENIZER}` };
    const expected = fits.filter((f) => f.id !== '2026-11' && !apiErrorRecursAt(fromScript(SFT_TOKENIZER), f.id)).at(-1)?.id;
    assert.equal(expected, '2024-09', 'only trl 0.11 takes tokenizer= among these');
    assert.equal(fallbackSnapshot({ refusal, last: { stdout: '', stderr: fromScript(SFT_TOKENIZER) } }, fits, ['2026-11']), '2024-09');
    // An earlier snapshot's error counts too: 2026-03 lacks ModelConfig.torch_dtype, met at an earlier run.
    const dtype = fromScript("AttributeError: 'ModelConfig' object has no attribute 'torch_dtype'");
    const other = { rule: 'unrecognised-error', reason: "no rule recognises the error: AttributeError: module 'x' has no attribute 'y'" };
    assert.equal(fallbackSnapshot({ refusal: other }, fits, ['2026-11'], false, [dtype]), '2025-09');
    // Without the run's output nothing is predicted: the next older snapshot, as before.
    assert.equal(fallbackSnapshot({ refusal }, fits, ['2026-11']), '2026-03');
  });
});
