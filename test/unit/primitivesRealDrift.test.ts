// The primitives and drift-table entries for real drift kinds: ChangeDefaultValue,
// PassArgumentPositionally, moved modules (DeprecateImport) and the forward-direction entries.
// Crafted snippets, then the real-world scripts of /work/shared/realworld (read at test time,
// never copied; skipped when the folder is absent).
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { DRIFT_TABLE } from '../../src/env/drift/driftTable';
import { applySpec, breakagePrimitives, getPrimitive } from '../../src/env/primitives/registry';
import { assertRefuses, breakAndRestore, changedLines, linesWith } from './primitivesHelpers';

describe('ChangeDefaultValue', () => {
  const collator = [
    'from transformers import DataCollatorForLanguageModeling',
    '# mlm=False: causal LM',
    'collator = DataCollatorForLanguageModeling(tokenizer, mlm=False)  # no masking',
    'print("mlm=False")',
    '',
  ].join('\n');

  test('drops an inline argument; comments and strings stay; the inverse puts it back', () => {
    const r = breakAndRestore(collator, 'ChangeDefaultValue', {
      function: 'DataCollatorForLanguageModeling',
      keyword: 'mlm',
      value: 'False',
    });
    assert.match(r.script, /^collator = DataCollatorForLanguageModeling\(tokenizer\) {2}# no masking$/m);
    assert.match(r.script, /^# mlm=False: causal LM$/m);
    assert.match(r.script, /^print\("mlm=False"\)$/m);
    assert.deepEqual(changedLines(collator, r.script), [3]);
    assert.equal(r.inverse.primitive_type, 'RestoreExplicitArgument');
    assert.deepEqual(r.inverse.params, { function: 'DataCollatorForLanguageModeling', argument: 'mlm=False', call_index: 0, position: 1 });
  });

  test('drops an argument line with its comment from a one-per-line call, and restores both', () => {
    const src = [
      'args = TrainingArguments(',
      '    output_dir="out",',
      "    remove_unused_columns=False,  # the collator reads 'image'",
      "    report_to='none',",
      ')',
      'other = TrainingArguments(output_dir="b")',
      '',
    ].join('\n');
    const r = breakAndRestore(src, 'ChangeDefaultValue', {
      function: 'TrainingArguments',
      keyword: 'remove_unused_columns',
      value: 'False',
    });
    assert.equal(r.script, src.replace("    remove_unused_columns=False,  # the collator reads 'image'\n", ''));
    assert.equal((r.inverse.params as { tail?: string }).tail, "  # the collator reads 'image'");
    // Quotes may differ from the drift table's "none".
    const q = breakAndRestore(src, 'ChangeDefaultValue', { function: 'TrainingArguments', keyword: 'report_to', value: '"none"' });
    assert.doesNotMatch(q.script, /report_to/);
  });

  test('refusals: no call, no explicit argument, another value, several calls', () => {
    assertRefuses(
      'x = 1\n',
      'ChangeDefaultValue',
      { function: 'TrainingArguments', keyword: 'report_to' },
      /TrainingArguments\(\.\.\.\) is not called/,
    );
    assertRefuses(
      'c = DataCollatorForLanguageModeling(tok)\n',
      'ChangeDefaultValue',
      { function: 'DataCollatorForLanguageModeling', keyword: 'mlm' },
      /no default to fall back to/,
    );
    assertRefuses(
      'c = DataCollatorForLanguageModeling(tok, mlm=True)\n',
      'ChangeDefaultValue',
      { function: 'DataCollatorForLanguageModeling', keyword: 'mlm', value: 'False' },
      /never passed as False/,
    );
    assertRefuses('a = f(x=1)\nb = f(x=1)\n', 'ChangeDefaultValue', { function: 'f', keyword: 'x' }, /2 calls of f pass x=/);
    assertRefuses(
      'c = DataCollatorForLanguageModeling(tok, mlm=False)\n',
      'ChangeDefaultValue',
      { function: 'DataCollatorForLanguageModeling', keyword: 'not an id' },
      /invalid params/,
    );
  });

  test('the restore is exact when the function is called several times', () => {
    const src = 'a = TrainingArguments(output_dir="a")\nb = TrainingArguments(output_dir="b", remove_unused_columns=False)\n';
    const r = breakAndRestore(src, 'ChangeDefaultValue', { function: 'TrainingArguments', keyword: 'remove_unused_columns' });
    assert.equal((r.inverse.params as { call_index: number }).call_index, 1);
  });
});

describe('PassArgumentPositionally', () => {
  const src = [
    'import evaluate',
    'metric = evaluate.load("accuracy")',
    'def compute_metrics(p):',
    '    # compute(predictions=..., references=...) is keyword-only',
    '    return metric.compute(predictions=p.predictions.argmax(-1), references=p.label_ids)',
    'metric.add_batch(predictions=[1], references=[1])',
    'print(metric.compute())',
    '',
  ].join('\n');

  test('passes predictions and references by position; only those prefixes change', () => {
    const r = breakAndRestore(src, 'PassArgumentPositionally', { function: 'compute', keywords: ['predictions', 'references'] });
    assert.match(r.script, /return metric\.compute\(p\.predictions\.argmax\(-1\), p\.label_ids\)$/m);
    assert.match(r.script, /# compute\(predictions=\.\.\., references=\.\.\.\) is keyword-only/);
    assert.match(r.script, /metric\.add_batch\(predictions=\[1\], references=\[1\]\)/, 'add_batch is another function');
    assert.deepEqual(changedLines(src, r.script), linesWith(src, 'return metric.compute('));
    assert.deepEqual(r.inverse.params, { function: 'compute', keywords: ['predictions', 'references'], first: 0 });
  });

  test('after positional arguments, and for every matching call', () => {
    const s = 'f(a, x=1, y=2)\nf(b, x=3, y=4, z=5)\n';
    const r = breakAndRestore(s, 'PassArgumentPositionally', { function: 'f', keywords: ['x', 'y'] });
    assert.equal(r.script, 'f(a, 1, 2)\nf(b, 3, 4, z=5)\n');
  });

  test('refusals: not called, other order, spaced keyword, an inverse that could not be exact', () => {
    assertRefuses(
      'x = 1\n',
      'PassArgumentPositionally',
      { function: 'compute', keywords: ['predictions'] },
      /compute\(\.\.\.\) is not called/,
    );
    assertRefuses(
      'm.compute(references=r, predictions=p)\n',
      'PassArgumentPositionally',
      { function: 'compute', keywords: ['predictions', 'references'] },
      /right after its positional arguments/,
    );
    assertRefuses(
      'm.compute(predictions = p, references = r)\n',
      'PassArgumentPositionally',
      { function: 'compute', keywords: ['predictions', 'references'] },
      /right after its positional arguments/,
    );
    assertRefuses(
      'm.compute(predictions=p, references=r)\nm.compute(a, b)\n',
      'PassArgumentPositionally',
      { function: 'compute', keywords: ['predictions', 'references'] },
      /could not undo it exactly|would not restore/,
    );
    assertRefuses(
      'f(x=1)\n',
      'PassArgumentPositionally',
      { function: 'f', keywords: ['x', 'x'] },
      /invalid params: keywords: keywords must differ/,
    );
  });
});

describe('ChangeReturnType return_dict', () => {
  test('flips an explicit return_dict=True, and restores it', () => {
    const src =
      'model = AutoModelForSequenceClassification.from_pretrained("bert-base-cased", return_dict=True)  # 4.x\noutputs = model(**batch)\nloss = outputs.loss\n';
    const r = breakAndRestore(src, 'ChangeReturnType', { change: 'return_dict' });
    assert.equal(r.script, src.replace('return_dict=True', 'return_dict=False'));
    assert.deepEqual(r.inverse.params, { change: 'return_dict', inserted: false });
  });

  test('otherwise adds return_dict=False to the model calls whose outputs are read, and removes it again', () => {
    const src = 'outputs = model(**batch)\nloss = outputs.loss  # the loss\nlogits = model(input_ids=x).logits\n';
    const r = breakAndRestore(src, 'ChangeReturnType', { change: 'return_dict' });
    assert.equal(
      r.script,
      'outputs = model(**batch, return_dict=False)\nloss = outputs.loss  # the loss\nlogits = model(input_ids=x, return_dict=False).logits\n',
    );
  });

  test('refusals: no attribute read, return_dict=False already there', () => {
    assertRefuses(
      'outputs = model(**batch)\nloss = outputs[0]\n',
      'ChangeReturnType',
      { change: 'return_dict' },
      /no model output is read as \.loss or \.logits/,
    );
    assertRefuses(
      'outputs = model(**batch, return_dict=False)\nloss = outputs.loss\n',
      'ChangeReturnType',
      { change: 'return_dict' },
      /already passes return_dict=False/,
    );
  });
});

describe('real drift entries', () => {
  test('moved model modules: the 3.x flat path is a real candidate that always breaks', () => {
    const src =
      'from transformers.models.bert.modeling_bert import BertModel\nfrom transformers.models.whisper.english_normalizer import BasicTextNormalizer\nm = BertModel(c)\n';
    const c = getPrimitive('DeprecateImport')!
      .candidates(src)
      .filter((x) => x.provenance === 'real');
    assert.deepEqual(
      c.map((x) => x.params),
      [{ old_module: 'transformers.models.bert.modeling_bert', new_module: 'transformers.modeling_bert' }],
    );
    assert.equal(c[0].breaks, true);
    const r = breakAndRestore(src, 'DeprecateImport', c[0].params);
    assert.match(r.script, /^from transformers\.modeling_bert import BertModel$/m);
  });

  test('forward-direction entries break under older snapshots only', () => {
    const src =
      'args = TrainingArguments(output_dir="o", evaluation_strategy="epoch")\ntrainer = Trainer(model=m, args=args, tokenizer=tok)\n';
    const old = { transformers: '4.36.0' };
    const cfg = getPrimitive('ModifyConfigField')!
      .candidates(src, old)
      .find((c) => c.params.new_field === 'eval_strategy')!;
    assert.equal(cfg.breaks, true);
    assert.equal(cfg.provenance, 'real');
    assert.equal(
      getPrimitive('ModifyConfigField')!
        .candidates(src, { transformers: '4.50.0' })
        .find((c) => c.params.new_field === 'eval_strategy')!.breaks,
      false,
    );
    const sig = getPrimitive('ChangeArgumentSignature')!
      .candidates(src, old)
      .find((c) => c.params.new_keyword === 'processing_class')!;
    assert.equal(sig.breaks, true);
    assert.match(applySpec(src, { primitive_type: 'ChangeArgumentSignature', params: sig.params }).script, /processing_class=tok/);
  });

  test('every entry carries a provenance; the made-up ones are synthetic', () => {
    for (const d of DRIFT_TABLE) assert.ok(d.provenance === 'real' || d.provenance === 'synthetic', d.id);
    assert.equal(DRIFT_TABLE.find((d) => d.id === 'pytorch-transformers-package')!.provenance, 'synthetic');
    assert.equal(DRIFT_TABLE.find((d) => d.id === 'datasets-load-metric')!.provenance, 'real');
    const legacy = getPrimitive('RenameApiCall')!.candidates(
      'from transformers import AutoTokenizer\nt = AutoTokenizer.from_pretrained("x")\n',
    );
    assert.ok(legacy.length > 0 && legacy.every((c) => c.provenance === 'synthetic' && c.drift_entry === undefined));
  });
});

const REAL_DIR = '/work/shared/realworld/scripts';
const realScripts = existsSync(REAL_DIR)
  ? readdirSync(REAL_DIR)
      .filter((f) => f.endsWith('.py'))
      .sort()
      .map((f) => ({ name: f, script: readFileSync(join(REAL_DIR, f), 'utf8') }))
  : [];

describe('on the real-world scripts', { skip: realScripts.length === 0 ? `${REAL_DIR} is absent` : false }, () => {
  // Measured on the 32 scripts of 2026-12-03: ChangeDefaultValue applies to 5, PassArgumentPositionally to 8.
  const LOWER_BOUNDS: Record<string, number> = { ChangeDefaultValue: 5, PassArgumentPositionally: 8 };

  test('ChangeReturnType return_dict applies to at least 8 real scripts and restores exactly', () => {
    let applies = 0;
    for (const { name: file, script } of realScripts) {
      const c = getPrimitive('ChangeReturnType')!
        .candidates(script)
        .filter((x) => x.params.change === 'return_dict');
      if (!c.length) continue;
      applies++;
      const r = breakAndRestore(script, 'ChangeReturnType', { change: 'return_dict' });
      for (const line of changedLines(script, r.script))
        assert.match(script.split('\n')[line - 1], /model|return_dict/, `${file}: line ${line}`);
    }
    assert.ok(applies >= 8, `return_dict applies to ${applies} real scripts`);
  });

  for (const [name, bound] of Object.entries(LOWER_BOUNDS)) {
    test(`${name} applies to at least ${bound} scripts; every candidate restores exactly and touches only its keyword's lines`, () => {
      const p = getPrimitive(name)!;
      let applies = 0;
      for (const { name: file, script } of realScripts) {
        const candidates = p.candidates(script);
        if (candidates.length) applies++;
        for (const c of candidates) {
          const r = breakAndRestore(script, name, c.params);
          const keywords = name === 'ChangeDefaultValue' ? [String(c.params.keyword)] : (c.params.keywords as string[]);
          for (const line of changedLines(script, r.script)) {
            const text = script.split('\n')[line - 1];
            assert.ok(
              keywords.some((k) => text.includes(`${k}=`)),
              `${file}: line ${line} does not hold the argument: ${text}`,
            );
          }
        }
      }
      assert.ok(applies >= bound, `${name} applies to ${applies} real scripts (expected ≥ ${bound})`);
    });
  }

  test('every candidate of every primitive on every real script restores exactly', () => {
    let checked = 0;
    for (const { name: file, script } of realScripts) {
      for (const p of breakagePrimitives()) {
        for (const c of p.candidates(script)) {
          const r = applySpec(script, { primitive_type: p.name, params: c.params });
          assert.equal(applySpec(r.script, r.inverse).script, script, `${p.name} ${JSON.stringify(c.params)} on ${file}`);
          checked++;
        }
      }
    }
    // Measured 2026-12-03: 649 candidates over the 32 scripts.
    assert.ok(checked >= 600, `checked ${checked}`);
  });

  test('most real scripts have a real-drift candidate', () => {
    const withReal = realScripts.filter(({ script }) =>
      [
        'ChangeDefaultValue',
        'PassArgumentPositionally',
        'DeprecateImport',
        'ModifyConfigField',
        'ChangeArgumentSignature',
        'RenameApiCall',
        'RemoveDeprecatedMethod',
        'ChangeReturnType',
      ].some((n) =>
        getPrimitive(n)!
          .candidates(script)
          .some((c) => c.provenance === 'real'),
      ),
    );
    // Measured 2026-12-03: 29 of 32 have at least one real-drift candidate.
    assert.ok(withReal.length >= 27, `${withReal.length} real scripts have a real-drift candidate`);
  });
});
