// ChangeArgumentSignature, ModifyConfigField and ChangeTokenizerBehavior.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { assertRefuses, breakAndRestore, changedLines, fixture, linesWith } from './primitivesHelpers';

describe('ChangeArgumentSignature', () => {
  const sft = fixture('trl_sft_chat.py');

  test('move: an SFTConfig keyword moves to SFTTrainer, and back to its original position', () => {
    const r = breakAndRestore(sft, 'ChangeArgumentSignature', {
      function: 'SFTConfig',
      old_keyword: 'max_seq_length',
      move_to: 'SFTTrainer',
    });
    assert.deepEqual(r.inverse.params, { function: 'SFTTrainer', old_keyword: 'max_seq_length', move_to: 'SFTConfig', position: 2 });
    assert.match(r.script, /processing_class=tokenizer,\n {4}max_seq_length=48,\n\)/);
    assert.doesNotMatch(r.script.slice(0, r.script.indexOf('trainer = SFTTrainer')), /max_seq_length/);
  });

  test('move carries the comment that shares the argument line', () => {
    const r = breakAndRestore(sft, 'ChangeArgumentSignature', {
      function: 'SFTConfig',
      old_keyword: 'dataset_text_field',
      move_to: 'SFTTrainer',
    });
    assert.match(r.script, / {4}dataset_text_field="text", {2}# the guanaco column\n\)\ntrainer\.train\(\)/);
  });

  test('move between one-line calls', () => {
    const src = 'config = SFTConfig(output_dir="o", max_seq_length=8, packing=False)\ntrainer = SFTTrainer(model=m, args=config)\n';
    const r = breakAndRestore(src, 'ChangeArgumentSignature', {
      function: 'SFTConfig',
      old_keyword: 'max_seq_length',
      move_to: 'SFTTrainer',
    });
    assert.equal(
      r.script,
      'config = SFTConfig(output_dir="o", packing=False)\ntrainer = SFTTrainer(model=m, args=config, max_seq_length=8)\n',
    );
  });

  test('rename: the keyword name only, at every call of the function', () => {
    const script = fixture('trainer_text_classification.py');
    const r = breakAndRestore(script, 'ChangeArgumentSignature', {
      function: 'Trainer',
      old_keyword: 'processing_class',
      new_keyword: 'tokenizer',
    });
    assert.deepEqual(changedLines(script, r.script), linesWith(script, 'processing_class=tokenizer'));
    assert.match(r.script, /^ {4}tokenizer=tokenizer,$/m);
    assert.deepEqual(r.inverse.params, { function: 'Trainer', old_keyword: 'tokenizer', new_keyword: 'processing_class' });
    const ds = breakAndRestore(sft, 'ChangeArgumentSignature', {
      function: 'load_dataset',
      old_keyword: 'token',
      new_keyword: 'use_auth_token',
    });
    assert.match(ds.script, /load_dataset\("timdettmers\/openassistant-guanaco", use_auth_token=None\)/);
  });

  test('refusals: not called, keyword not passed, new keyword present, ambiguous params', () => {
    assertRefuses(
      sft,
      'ChangeArgumentSignature',
      { function: 'Trainer', old_keyword: 'a', new_keyword: 'b' },
      /Trainer\(\.\.\.\) is not called in the script/,
    );
    assertRefuses(
      sft,
      'ChangeArgumentSignature',
      { function: 'SFTTrainer', old_keyword: 'tokenizer', new_keyword: 'processing_class' },
      /no call of SFTTrainer passes tokenizer=/,
    );
    assertRefuses(
      sft,
      'ChangeArgumentSignature',
      { function: 'SFTTrainer', old_keyword: 'model', new_keyword: 'args' },
      /already passes args=/,
    );
    assertRefuses(
      sft,
      'ChangeArgumentSignature',
      { function: 'SFTConfig', old_keyword: 'max_seq_length', move_to: 'Trainer' },
      /Trainer\(\.\.\.\) is not called/,
    );
    assertRefuses(
      sft,
      'ChangeArgumentSignature',
      { function: 'SFTConfig', old_keyword: 'x', new_keyword: 'y', move_to: 'SFTTrainer' },
      /invalid params: new_keyword: give exactly one of new_keyword or move_to/,
    );
  });
});

describe('ModifyConfigField', () => {
  const script = fixture('trainer_text_classification.py');

  test('renames the field as a **dict key and as an attribute, not in strings or the docstring', () => {
    const r = breakAndRestore(script, 'ModifyConfigField', {
      config_class: 'TrainingArguments',
      old_field: 'eval_strategy',
      new_field: 'evaluation_strategy',
    });
    assert.match(r.script, /^schedule = \{"evaluation_strategy": "epoch", "save_strategy": "no"\}$/m);
    assert.match(r.script, /^print\("evaluating every", args\.evaluation_strategy\)$/m);
    assert.deepEqual(changedLines(script, r.script), [...linesWith(script, 'schedule = {'), ...linesWith(script, 'args.eval_strategy')]);
    assert.deepEqual(r.inverse.params, { config_class: 'TrainingArguments', old_field: 'evaluation_strategy', new_field: 'eval_strategy' });
  });

  test('renames a constructor keyword (Seq2SeqTrainingArguments)', () => {
    const src = fixture('peft_lora_seq2seq.py');
    const r = breakAndRestore(src, 'ModifyConfigField', {
      config_class: 'Seq2SeqTrainingArguments',
      old_field: 'eval_strategy',
      new_field: 'evaluation_strategy',
    });
    assert.deepEqual(changedLines(src, r.script), linesWith(src, 'eval_strategy="epoch"'));
  });

  test('refusals: class not constructed, field not used, new field already used', () => {
    assertRefuses(
      script,
      'ModifyConfigField',
      { config_class: 'LoraConfig', old_field: 'r', new_field: 'rank' },
      /LoraConfig\(\.\.\.\) is not constructed/,
    );
    assertRefuses(
      script,
      'ModifyConfigField',
      { config_class: 'TrainingArguments', old_field: 'use_cpu', new_field: 'no_cuda' },
      /is never given use_cpu/,
    );
    assertRefuses(
      script,
      'ModifyConfigField',
      { config_class: 'TrainingArguments', old_field: 'eval_strategy', new_field: 'save_strategy' },
      /already uses save_strategy/,
    );
  });
});

describe('ChangeTokenizerBehavior', () => {
  test('as_target_tokenizer wraps a multi-line statement and indents its continuation lines', () => {
    const src = fixture('peft_lora_seq2seq.py');
    const r = breakAndRestore(src, 'ChangeTokenizerBehavior', { behavior: 'as_target_tokenizer' });
    assert.ok(
      r.script.includes(
        '    with tokenizer.as_target_tokenizer():\n        labels = tokenizer(\n            examples["highlights"],\n            max_length=16,\n            truncation=True,\n        )\n    model_inputs["labels"]',
      ),
    );
    assert.deepEqual(r.inverse, {
      primitive_type: 'RestoreTokenizerBehavior',
      category: 'tokenizer_drift',
      params: { behavior: 'as_target_tokenizer' },
    });
  });

  test('pad_to_max_length replaces padding="max_length" in tokenizer calls and keeps the quote style for the inverse', () => {
    const src = fixture('trainer_text_classification.py');
    const r = breakAndRestore(src, 'ChangeTokenizerBehavior', { behavior: 'pad_to_max_length' });
    assert.match(r.script, /tokenizer\(examples\["sentence"\], truncation=True, pad_to_max_length=True, max_length=32\)/);
    const single = "tok = AutoTokenizer.from_pretrained('t')\nenc = tok(['a'], padding='max_length')\n";
    const s = breakAndRestore(single, 'ChangeTokenizerBehavior', { behavior: 'pad_to_max_length' });
    assert.deepEqual(s.inverse.params, { behavior: 'pad_to_max_length', quote: "'" });
  });

  test('is_pretokenized renames the keyword of tokenizer calls only', () => {
    const src =
      'tokenizer = AutoTokenizer.from_pretrained("bert")\nenc = tokenizer(words, is_split_into_words=True)\nother(is_split_into_words=True)\n';
    const r = breakAndRestore(src, 'ChangeTokenizerBehavior', { behavior: 'is_pretokenized' });
    assert.equal(
      r.script,
      'tokenizer = AutoTokenizer.from_pretrained("bert")\nenc = tokenizer(words, is_pretokenized=True)\nother(is_split_into_words=True)\n',
    );
  });

  test('refusals: combined text_target, nothing to change, as_target_tokenizer already used', () => {
    const combined = 'tokenizer = AutoTokenizer.from_pretrained("t5")\nenc = tokenizer(inputs, text_target=targets)\n';
    assertRefuses(combined, 'ChangeTokenizerBehavior', { behavior: 'as_target_tokenizer' }, /text_target= is combined with input texts/);
    assertRefuses(
      fixture('trl_sft_chat.py'),
      'ChangeTokenizerBehavior',
      { behavior: 'pad_to_max_length' },
      /no tokenizer call passes padding="max_length"/,
    );
    const already = 'with tok.as_target_tokenizer():\n    x = 1\ny = tok(text_target=t)\n';
    assertRefuses(already, 'ChangeTokenizerBehavior', { behavior: 'as_target_tokenizer' }, /already uses as_target_tokenizer/);
    assertRefuses('x = 1\n', 'ChangeTokenizerBehavior', { behavior: 'lowercase' }, /invalid params: behavior: /);
  });
});
