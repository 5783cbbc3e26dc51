// Make Task's editor-neutral parts: the argument hint never says "no arguments" for a parser
// script, TRL's `TrlParser(dataclass_types)` style is read, and the preview shown before saving
// carries the verdict and every adaptation.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { deriveScriptArgs } from '../../src/env/tasks/scriptArgs';
import { argumentHint } from '../../src/editor/lab/core/argumentHint';
import { proposalPreview, type TaskProposal } from '../../src/editor/lab/core/taskPipeline';
import { joinArgsLine } from '../../src/editor/lab/core/taskWriter';

// The shape of TRL's own example scripts (trl/scripts/sft.py since 0.13): the dataclasses are in a variable.
const TRL_MAKE_PARSER = [
  'from trl import ModelConfig, ScriptArguments, SFTConfig, SFTTrainer, TrlParser',
  '',
  'def make_parser(subparsers=None):',
  '    dataclass_types = (ScriptArguments, SFTConfig, ModelConfig)',
  '    if subparsers is not None:',
  '        parser = subparsers.add_parser("sft", dataclass_types=dataclass_types)',
  '    else:',
  '        parser = TrlParser(dataclass_types)',
  '    return parser',
  '',
  'if __name__ == "__main__":',
  '    script_args, training_args, model_args = make_parser().parse_args_and_config()',
  '',
].join('\n');

describe('Make Task arguments', () => {
  test('TrlParser(dataclass_types) requires what its dataclasses need', () => {
    const d = deriveScriptArgs(TRL_MAKE_PARSER);
    assert.equal(d.style, 'dataclass-parser');
    assert.deepEqual(d.required.map((r) => r.name).sort(), ['dataset_name', 'model_name_or_path', 'output_dir']);
    assert.doesNotMatch(argumentHint(d), /no arguments/);
    assert.match(argumentHint(d), /--output_dir/);
  });

  test('a dataclass-parser script whose requirements cannot be read is not said to need none', () => {
    const script =
      'from transformers import HfArgumentParser\nfrom my_args import Args, Train\nparser = HfArgumentParser(make_types())\nargs = parser.parse_args_into_dataclasses()\n';
    const d = deriveScriptArgs(script);
    assert.equal(d.style, 'dataclass-parser');
    assert.equal(d.required.length, 0);
    const hint = argumentHint(d);
    assert.doesNotMatch(hint, /requires no arguments|reads no command-line/);
    assert.match(hint, /HfArgumentParser\/TrlParser/);
  });

  test('a script without a parser says so', () => {
    assert.match(argumentHint(deriveScriptArgs('print(1)\n')), /reads no command-line arguments/);
  });
});

describe('Make Task preview', () => {
  const proposal: TaskProposal = {
    args: ['--output_dir', 'out', '--bf16', 'false'],
    files: { 'config.yaml': 'a: 1\n' },
    adaptations: [{ rule: 'cpu-no-bf16', error: 'ValueError: bf16 requires a GPU', change: '--bf16 false' }],
    verdict: {
      verified: true,
      originalRuns: true,
      mode: 'real',
      snapshot: '2026-11',
      lines: ['original 3/3 clean', '2 breakages verified'],
    },
  };

  test('verdict, each adaptation and the saved args are shown before saving', () => {
    const p = proposalPreview('sft', proposal, joinArgsLine);
    assert.match(p.message, /verified/);
    assert.match(p.detail, /original 3\/3 clean/);
    assert.match(p.detail, /--bf16 false — cpu-no-bf16, after: ValueError: bf16 requires a GPU/);
    assert.match(p.detail, /Arguments: --output_dir out --bf16 false/);
    assert.match(p.detail, /Files: config\.yaml/);
  });

  test('a refusal is the headline and carries its reason', () => {
    const p = proposalPreview('sft', { ...proposal, refusal: 'needs a CUDA-only kernel (flash_attn)' }, joinArgsLine);
    assert.match(p.message, /cannot make sft a task/);
    assert.match(p.detail, /Why: needs a CUDA-only kernel/);
  });

  test('an original that does not run is said so, not dressed as ready', () => {
    const p = proposalPreview(
      'x',
      { ...proposal, adaptations: [], verdict: { ...proposal.verdict, verified: false, originalRuns: false } },
      joinArgsLine,
    );
    assert.match(p.message, /does not run/);
    assert.match(p.detail, /Adaptations: none/);
  });
});

describe('task folder choice', () => {
  test('scripts without a tasks.json entry are stray; made tasks and other files are not', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { strayScripts } = await import('../../src/editor/lab/core/strayScripts');
    const { saveScriptTask } = await import('../../src/editor/lab/core/taskWriter');
    const dir = mkdtempSync(join(tmpdir(), 'forgeenv-stray-'));
    assert.deepEqual(strayScripts(join(dir, 'missing')), []);
    writeFileSync(join(dir, 'setup.py'), 'print(1)\n');
    writeFileSync(join(dir, 'notes.md'), '# notes\n');
    await saveScriptTask({ dir, taskId: 'made', script: 'print(2)\n', description: 'd', taken: new Set() });
    assert.deepEqual(strayScripts(dir), ['setup.py']);
  });
});
