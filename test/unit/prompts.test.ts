import { strict as assert } from 'node:assert';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { applyRepairDiff, createRepairDiff } from '../../src/env/diff/diff';
import {
  DRIFT_GENERATOR_SYSTEM_PROMPT,
  REPAIR_AGENT_SYSTEM_PROMPT,
  extractDiff,
  renderDriftGeneratorPrompt,
  renderRepairAgentPrompt,
} from '../../src/env/episode/prompts';

// Golden files are the committed renderings; regenerate with UPDATE_GOLDENS=1 after a deliberate change.
const GOLDEN = join(__dirname, '..', 'fixtures', 'prompts');
function golden(name: string, actual: string): void {
  const file = join(GOLDEN, name);
  if (process.env.UPDATE_GOLDENS === '1' || !existsSync(file)) writeFileSync(file, actual);
  assert.equal(actual, readFileSync(file, 'utf8'));
}

const SCRIPT = [
  'from transformers import Trainer, TrainingArguments',
  '',
  'args = TrainingArguments(output_dir="out", eval_strategy="epoch")',
  'trainer = Trainer(model=model, args=args)',
  'trainer.train()',
  '',
].join('\n');
const BROKEN = SCRIPT.replace('eval_strategy', 'evaluation_strategy');
const VERSIONS = { trl: '0.12.0', transformers: '4.50.0', datasets: '3.2.0' };
const TRACE = [
  'Traceback (most recent call last):',
  '  File "/tmp/forgeenv-run-x/train.py", line 3, in <module>',
  '    args = TrainingArguments(output_dir="out", evaluation_strategy="epoch")',
  "TypeError: TrainingArguments.__init__() got an unexpected keyword argument 'evaluation_strategy'",
  '',
].join('\n');

describe('system prompts', () => {
  test('name the role and the answer format', () => {
    assert.match(DRIFT_GENERATOR_SYSTEM_PROMPT, /Drift Generator/);
    assert.match(DRIFT_GENERATOR_SYSTEM_PROMPT, /"primitive_type"/);
    assert.match(REPAIR_AGENT_SYSTEM_PROMPT, /Repair Agent/);
    assert.match(REPAIR_AGENT_SYSTEM_PROMPT, /unified diff against train\.py/);
  });
  test('goldens', () => {
    golden('drift_system.txt', DRIFT_GENERATOR_SYSTEM_PROMPT + '\n');
    golden('repair_system.txt', REPAIR_AGENT_SYSTEM_PROMPT + '\n');
  });
});

describe('renderDriftGeneratorPrompt', () => {
  const prompt = renderDriftGeneratorPrompt({ script: SCRIPT, target_category: 'ModifyConfigField', library_versions: VERSIONS });

  test('has the known parts', () => {
    assert.ok(prompt.split('\n').includes('Target category: ModifyConfigField'));
    assert.match(prompt, /^datasets=3\.2\.0\ntransformers=4\.50\.0\ntrl=0\.12\.0$/m, 'versions sorted, one name=version a line');
    assert.ok(prompt.includes('```python\n' + SCRIPT + '```\n'), 'the script verbatim in a python fence');
    assert.match(prompt, /JSON only: \{"primitive_type": "<PrimitiveName>", "params": \{\.\.\.\}\}/);
  });

  test('the baseline parser of the reference finds the category and the script', () => {
    // reference rollout.py: first line starting with "target category:", script between ```python and ```.
    const line = prompt.split('\n').find((l) => l.toLowerCase().startsWith('target category:'))!;
    assert.equal(line.split(':')[1].trim(), 'ModifyConfigField');
    assert.equal(prompt.split('```python')[1].split('```')[0], '\n' + SCRIPT);
  });

  test('is deterministic regardless of version key order', () => {
    const again = renderDriftGeneratorPrompt({
      script: SCRIPT,
      target_category: 'ModifyConfigField',
      library_versions: { datasets: '3.2.0', trl: '0.12.0', transformers: '4.50.0' },
    });
    assert.equal(again, prompt);
    golden('drift_user.txt', prompt);
  });

  test('lists primitives when given', () => {
    const p = renderDriftGeneratorPrompt({
      script: SCRIPT,
      target_category: 'RenameApiCall',
      library_versions: VERSIONS,
      primitives: [
        { name: 'RenameApiCall', description: 'renames a function or class', params: ['old_name', 'new_name'] },
        { name: 'DeprecateImport', params: { old_module: 'module path', new_module: 'module path' } },
        { name: 'ChangeReturnType' },
      ],
    });
    assert.match(p, /^- RenameApiCall \{old_name, new_name\}: renames a function or class$/m);
    assert.match(p, /^- DeprecateImport \{old_module \(module path\), new_module \(module path\)\}$/m);
    assert.match(p, /^- ChangeReturnType$/m);
    golden('drift_user_with_primitives.txt', p);
  });

  test('a script containing a fence gets a longer fence', () => {
    const tricky = 'doc = """\n```\nnot the end\n```\n"""\n';
    const p = renderDriftGeneratorPrompt({ script: tricky, target_category: 'X', library_versions: {} });
    assert.ok(p.includes('````python\n' + tricky + '````\n'));
    assert.match(p, /^\(none given\)$/m);
  });
});

describe('renderRepairAgentPrompt', () => {
  const prompt = renderRepairAgentPrompt({
    broken_script: BROKEN,
    error_trace: TRACE,
    library_versions: VERSIONS,
    target_category: 'ModifyConfigField',
  });

  test('has the known parts', () => {
    assert.ok(prompt.includes('```python\n' + BROKEN + '```\n'));
    assert.ok(prompt.includes(TRACE), 'the trace verbatim');
    assert.match(prompt, /^transformers=4\.50\.0$/m);
    assert.ok(prompt.split('\n').includes('Target category: ModifyConfigField'));
    assert.match(prompt, /unified diff against train\.py/);
    golden('repair_user.txt', prompt);
  });

  test('the first python block is exactly the broken script (as the rollout test reads it)', () => {
    assert.equal(/```python\n([\s\S]*?)```/.exec(prompt)![1], BROKEN);
  });

  test('an empty trace is said so', () => {
    const p = renderRepairAgentPrompt({ broken_script: BROKEN, error_trace: '', library_versions: VERSIONS, target_category: 'X' });
    assert.match(p, /\(the script produced no error output\)/);
  });
});

describe('extractDiff', () => {
  const diff = createRepairDiff(BROKEN, SCRIPT);

  test('takes the ```diff block', () => {
    assert.equal(extractDiff(`Here is the fix:\n\n\`\`\`diff\n${diff}\`\`\`\n\nIt renames the argument.`), diff);
  });
  test('takes the first diff block when the answer also shows Python', () => {
    assert.equal(extractDiff(`\`\`\`python\nprint(1)\n\`\`\`\n\`\`\`diff\n${diff}\`\`\``), diff);
  });
  test('a whole script in a ```python block passes through and applies as a whole script', () => {
    const out = extractDiff(`Fixed script:\n\`\`\`python\n${SCRIPT}\`\`\``);
    assert.equal(out, SCRIPT);
    const r = applyRepairDiff(BROKEN, out);
    assert.ok(r.ok && r.mode === 'whole_script' && r.script === SCRIPT);
  });
  test('an untagged block that holds a diff', () => {
    assert.equal(extractDiff(`\`\`\`\n${diff}\`\`\``), diff);
  });
  test('a raw diff after prose starts at its first header', () => {
    assert.equal(extractDiff(`The fix is below.\n${diff}`), diff);
  });
  test('an unterminated fence (cut-off completion) still yields the diff', () => {
    const out = extractDiff('```diff\n' + diff);
    assert.equal(out, diff);
    const r = applyRepairDiff(BROKEN, out);
    assert.ok(r.ok && r.script === SCRIPT);
  });
  test('empty stays empty', () => {
    assert.equal(extractDiff(''), '');
    assert.equal(extractDiff('  \n'), '');
  });
  test('round trip: the extracted diff applies', () => {
    const r = applyRepairDiff(BROKEN, extractDiff('```diff\n' + diff + '```'));
    assert.ok(r.ok);
    assert.equal(r.script, SCRIPT);
  });
});
