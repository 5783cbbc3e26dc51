import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  applySpec,
  applicablePrimitives,
  breakagePrimitives,
  getPrimitive,
  PRIMITIVES,
  primitiveCatalog,
} from '../../src/env/primitives/registry';
import { PrimitiveRefusal } from '../../src/env/primitives/types';
import { assertRefuses, breakAndRestore, changedLines, corpusTask, fixture, linesWith, withSyntaxError } from './primitivesHelpers';

const BREAKAGE = [
  'ChangeArgumentSignature',
  'ChangeReturnType',
  'ChangeTokenizerBehavior',
  'DeprecateImport',
  'ModifyConfigField',
  'RemoveDeprecatedMethod',
  'RenameApiCall',
  'RestructureDatasetSchema',
];

describe('registry', () => {
  test('the breakage primitives (the original eight, then ours) and the named inverses are registered', () => {
    assert.deepEqual(
      breakagePrimitives().map((p) => p.name),
      [...BREAKAGE, 'ChangeDefaultValue', 'PassArgumentPositionally'],
    );
    for (const name of [
      'RestoreApiCall',
      'RestoreImport',
      'RestoreMethod',
      'RestoreColumn',
      'RestoreExplicitArgument',
      'RestoreKeywordArgument',
    ])
      assert.equal(getPrimitive(name)?.kind, 'inverse', name);
    assert.equal(getPrimitive('RenameApiCall')?.category, 'api_drift');
    assert.equal(getPrimitive('DeprecateImport')?.category, 'import_drift');
    assert.equal(getPrimitive('Nope'), undefined);
    assert.equal(new Set(PRIMITIVES.map((p) => p.name)).size, PRIMITIVES.length);
  });

  test('the catalog describes every param with a JSON schema and a description', () => {
    const catalog = primitiveCatalog();
    assert.equal(catalog.length, PRIMITIVES.length);
    for (const entry of catalog) {
      assert.ok(entry.description && entry.models, entry.name);
      const props = entry.params.properties as Record<string, { description?: string }>;
      assert.ok(props && Object.keys(props).length > 0, `${entry.name} has params`);
      for (const [k, v] of Object.entries(props)) assert.ok(v.description, `${entry.name}.${k} has a description`);
    }
    assert.deepEqual((catalog.find((c) => c.name === 'RenameApiCall')!.params.required as string[]).sort(), ['new_name', 'old_name']);
  });

  test('applySpec: an unknown primitive is refused with the known names', () => {
    assert.throws(
      () => applySpec('x = 1\n', { primitive_type: 'Frobnicate', params: {} }),
      (e: unknown) => {
        assert.ok(e instanceof PrimitiveRefusal);
        assert.match(e.message, /Frobnicate: unknown primitive; known: ChangeArgumentSignature, .*RenameApiCall/);
        return true;
      },
    );
  });

  test('applySpec: invalid params are refused with the zod issues', () => {
    assertRefuses('x = 1\n', 'RenameApiCall', { old_name: 'x' }, /RenameApiCall: invalid params: new_name: /);
    assertRefuses('x = 1\n', 'RenameApiCall', { old_name: 'x', new_name: 'y', extra: 1 }, /invalid params: .*extra/);
    assertRefuses('x = 1\n', 'RenameApiCall', { old_name: '1x', new_name: 'y' }, /invalid params: old_name: a Python name/);
  });

  test('applySpec: an exception inside a primitive surfaces as a PrimitiveRefusal', () => {
    const hostile = Object.defineProperty({}, 'old_name', {
      enumerable: true,
      get() {
        throw new Error('boom');
      },
    });
    assertRefuses('x = 1\n', 'RenameApiCall', hostile, /RenameApiCall: .*boom/);
  });

  test('every breakage primitive refuses a script with a syntax error, naming the line', () => {
    const { script, line } = withSyntaxError(fixture('trainer_text_classification.py'));
    for (const p of breakagePrimitives()) {
      const good =
        p.candidates(fixture('trainer_text_classification.py'))[0] ??
        p.candidates(fixture('peft_lora_seq2seq.py'))[0] ??
        p.candidates(fixture('custom_loop_causal_lm.py'))[0];
      assert.ok(good, `${p.name} has a candidate on some fixture`);
      assert.deepEqual(p.candidates(script), [], `${p.name} offers nothing on a broken script`);
      assertRefuses(
        script,
        p.name,
        good.params,
        new RegExp(`${p.name}: the script does not parse \\(line ${line}, column \\d+: '\\(' is never closed\\)`),
      );
    }
  });

  test('applicablePrimitives lists only breakage primitives with candidates, and nothing for an empty script', () => {
    const applicable = applicablePrimitives(fixture('trainer_text_classification.py'));
    assert.ok(applicable.length >= 6);
    for (const a of applicable) {
      assert.equal(a.primitive.kind, 'breakage');
      assert.ok(a.candidates.length > 0);
    }
    assert.deepEqual(applicablePrimitives(''), []);
  });

  test('candidates are deterministic and drift-table ones come first, with drift text', () => {
    const script = fixture('custom_loop_causal_lm.py');
    const a = getPrimitive('RenameApiCall')!.candidates(script);
    assert.deepEqual(getPrimitive('RenameApiCall')!.candidates(script), a);
    assert.deepEqual(a[0].params, { old_name: 'AutoModelForCausalLM', new_name: 'AutoModelWithLMHead' });
    // The drift catalog's probe: the real transformers removed AutoModelWithLMHead in 5.0.
    assert.match(a[0].drift!, /AutoModelWithLMHead .*\(transformers 5\.0\.0\)/);
    assert.equal(a[0].breaks, false, 'still present in the real 4.50');
    assert.equal(getPrimitive('RenameApiCall')!.candidates(script, { transformers: '5.0.0' })[0].breaks, true);
    (a[0].params as Record<string, unknown>).new_name = 'Mutated';
    assert.equal(getPrimitive('RenameApiCall')!.candidates(script)[0].params.new_name, 'AutoModelWithLMHead', 'candidates are copies');
    const firstGeneric = a.findIndex((c) => !c.drift);
    assert.ok(firstGeneric > 0 && a.slice(firstGeneric).every((c) => !c.drift));
  });

  test('`breaks` follows the versions: evaluation_strategy is only rejected from transformers 4.51 (the catalog)', () => {
    const script = fixture('trainer_text_classification.py');
    const at = (transformers: string) =>
      getPrimitive('ModifyConfigField')!
        .candidates(script, { transformers })
        .find((c) => c.params.new_field === 'evaluation_strategy');
    assert.equal(at('4.51.0')?.breaks, true);
    assert.equal(at('4.50.0')?.breaks, false);
  });
});

describe('RenameApiCall', () => {
  const script = fixture('custom_loop_causal_lm.py');

  test('renames code names only: the comment mentioning both names stays', () => {
    const r = breakAndRestore(script, 'RenameApiCall', { old_name: 'AutoModelForCausalLM', new_name: 'AutoModelWithLMHead' });
    assert.deepEqual(r.inverse, {
      primitive_type: 'RestoreApiCall',
      category: 'api_drift',
      params: { old_name: 'AutoModelWithLMHead', new_name: 'AutoModelForCausalLM' },
    });
    const code = linesWith(script, 'AutoModelForCausalLM').filter((l) => !script.split('\n')[l - 1].trim().startsWith('#'));
    assert.deepEqual(changedLines(script, r.script), code);
    assert.match(r.script, /^# AutoModelForCausalLM \(not AutoModelWithLMHead\) picks the LM head$/m);
    assert.match(r.script, /^model = AutoModelWithLMHead\.from_pretrained\("gpt2"\)$/m);
  });

  test('a plain name also renames attribute uses; a dotted name renames only that chain', () => {
    const src = fixture('trainer_text_classification.py');
    const plain = breakAndRestore(src, 'RenameApiCall', { old_name: 'evaluate', new_name: 'evaluate_v0' });
    assert.match(plain.script, /^import evaluate_v0$/m);
    assert.match(plain.script, /trainer\.evaluate_v0\(\)/);
    const dotted = breakAndRestore(src, 'RenameApiCall', { old_name: 'trainer.evaluate', new_name: 'evaluate_legacy' });
    assert.match(dotted.script, /^import evaluate$/m, 'the module import is left alone');
    assert.match(dotted.script, /evaluate\.load\("accuracy"\)/);
    assert.match(dotted.script, /^metrics = trainer\.evaluate_legacy\(\)$/m);
    assert.deepEqual(
      changedLines(src, dotted.script),
      linesWith(src, 'metrics = trainer.evaluate()'),
      'the docstring mentioning trainer.evaluate() stays',
    );
    assert.ok(dotted.script.includes(`"AutoTokenizer and eval_strategy appear here only as text; evaluate.load('x') too"`));
  });

  test('refusals: absent name, a keyword-only name, a name that already exists', () => {
    assertRefuses(
      script,
      'RenameApiCall',
      { old_name: 'foo', new_name: 'bar' },
      /RenameApiCall: "foo" does not occur as a name in the script/,
    );
    assertRefuses(
      fixture('trainer_text_classification.py'),
      'RenameApiCall',
      { old_name: 'processing_class', new_name: 'pc' },
      /occurs only as a keyword-argument name/,
    );
    assertRefuses(
      script,
      'RenameApiCall',
      { old_name: 'AutoTokenizer', new_name: 'AdamW' },
      /"AdamW" already occurs as a name in the script/,
    );
    assertRefuses(
      script,
      'RenameApiCall',
      { old_name: 'AdamW', new_name: 'AdamW' },
      /invalid params: new_name: old_name and new_name must differ/,
    );
  });
});

describe('DeprecateImport', () => {
  test('from-import: only the module path changes; RestoreImport moves it back', () => {
    const script = fixture('custom_loop_causal_lm.py');
    const r = breakAndRestore(script, 'DeprecateImport', { old_module: 'torch.optim', new_module: 'transformers', names: ['AdamW'] });
    assert.equal(r.inverse.primitive_type, 'RestoreImport');
    assert.deepEqual(changedLines(script, r.script), linesWith(script, 'from torch.optim import AdamW'));
    assert.match(r.script, /^from transformers import AdamW$/m);
    assert.deepEqual(r.edits, [
      { from: script.indexOf('torch.optim'), to: script.indexOf('torch.optim') + 'torch.optim'.length, insert: 'transformers' },
    ]);
  });

  test('qualified use: torch.optim.AdamW becomes transformers.AdamW and `import transformers` is added', () => {
    const script = corpusTaskOr(
      'electra_classification.py',
      'import torch\nfrom transformers import AutoTokenizer\nopt = torch.optim.AdamW([], lr=1e-3)\n',
    );
    const r = breakAndRestore(script, 'DeprecateImport', { old_module: 'torch.optim', new_module: 'transformers', names: ['AdamW'] });
    assert.match(r.script, /^import torch\nimport transformers\n/m);
    assert.match(r.script, /= transformers\.AdamW\(/);
    assert.equal(r.inverse.params.remove_import, 'transformers');
  });

  test('package rename: every `from datasets import` statement moves to nlp', () => {
    const script = fixture('trainer_text_classification.py');
    const r = breakAndRestore(script, 'DeprecateImport', { old_module: 'datasets', new_module: 'nlp' });
    assert.match(r.script, /^from nlp import load_dataset$/m);
    assert.deepEqual(r.inverse.params, { old_module: 'nlp', new_module: 'datasets', names: ['load_dataset'] });
  });

  test('refusals: nothing imported from the module, a statement that would need splitting, an existing import', () => {
    const script = fixture('custom_loop_causal_lm.py');
    assertRefuses(
      script,
      'DeprecateImport',
      { old_module: 'evaluate', new_module: 'datasets' },
      /there is no `from evaluate import \.\.\.` statement/,
    );
    assertRefuses(
      script,
      'DeprecateImport',
      { old_module: 'transformers', new_module: 'pytorch_transformers', names: ['AutoTokenizer'] },
      /also imports AutoModelForCausalLM, DataCollatorForLanguageModeling from transformers/,
    );
    assertRefuses(
      'from torch.optim import AdamW\nfrom transformers import AdamW as HFAdamW\n',
      'DeprecateImport',
      { old_module: 'torch.optim', new_module: 'transformers', names: ['AdamW'] },
      /already imports from transformers/,
    );
  });
});

describe('RemoveDeprecatedMethod', () => {
  test('evaluate.load → load_metric imported from datasets; strings mentioning evaluate.load stay', () => {
    const script = fixture('trainer_text_classification.py');
    const r = breakAndRestore(script, 'RemoveDeprecatedMethod', {
      current_call: 'evaluate.load',
      deprecated_call: 'load_metric',
      import_from: 'datasets',
    });
    assert.match(r.script, /^import evaluate\nfrom datasets import load_metric\nfrom datasets import load_dataset$/m);
    assert.match(r.script, /^accuracy = load_metric\("accuracy"\) {3}# not datasets\.load_metric$/m);
    assert.ok(r.script.includes(`evaluate.load('x') too"`));
    assert.deepEqual(r.inverse, {
      primitive_type: 'RestoreMethod',
      category: 'method_drift',
      params: { current_call: 'load_metric', restored_call: 'evaluate.load', remove_import: 'from datasets import load_metric' },
    });
  });

  test('a dotted deprecated call adds `import <module>` when needed', () => {
    const r = breakAndRestore(fixture('trainer_text_classification.py'), 'RemoveDeprecatedMethod', {
      current_call: 'evaluate.load',
      deprecated_call: 'datasets.load_metric',
    });
    assert.match(r.script, /^import evaluate\nimport datasets\n/m);
    assert.equal(r.inverse.params.remove_import, 'import datasets');
  });

  test('method form renames the method on any receiver', () => {
    const script = fixture('custom_loop_causal_lm.py');
    const r = breakAndRestore(script, 'RemoveDeprecatedMethod', { current_call: '.rename_column', deprecated_call: '.rename_column_' });
    assert.deepEqual(changedLines(script, r.script), linesWith(script, '.rename_column('));
    assert.match(r.script, /wiki\.rename_column_\("text", "content"\)/);
  });

  test('refusals: not called, a bare name without import_from, mixed forms', () => {
    const script = fixture('custom_loop_causal_lm.py');
    assertRefuses(
      script,
      'RemoveDeprecatedMethod',
      { current_call: 'evaluate.load', deprecated_call: 'load_metric', import_from: 'datasets' },
      /evaluate\.load\(\.\.\.\) is not called/,
    );
    assertRefuses(
      fixture('trainer_text_classification.py'),
      'RemoveDeprecatedMethod',
      { current_call: 'evaluate.load', deprecated_call: 'load_metric' },
      /needs import_from/,
    );
    assertRefuses(
      script,
      'RemoveDeprecatedMethod',
      { current_call: '.map', deprecated_call: 'load_metric' },
      /invalid params: deprecated_call: both calls must be methods/,
    );
    assertRefuses(script, 'RemoveDeprecatedMethod', { current_call: '.map', deprecated_call: '.filter' }, /\.filter already occurs/);
  });
});

/** A corpus task when the corpus has it, else a small stand-in with the same construct. */
function corpusTaskOr(name: string, fallback: string): string {
  try {
    return corpusTask(name);
  } catch {
    return fallback;
  }
}
