import { strict as assert } from 'node:assert';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { deriveScriptArgs } from '../../src/env/tasks/scriptArgs';

const REALWORLD = join(__dirname, '..', '..', '..', 'shared', 'realworld', 'scripts');
const noCorpus = !existsSync(REALWORLD) && 'no real-world corpus';
const real = (file: string) => readFileSync(join(REALWORLD, file), 'utf8');

/** The `--name value` pairs of an argument list. */
function options(args: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < args.length; i++) if (args[i].startsWith('--')) out[args[i].slice(2)] = args[++i]!;
  return out;
}

describe('deriveScriptArgs on crafted scripts', () => {
  test('dataclass fields without a default are required; values by name and type', () => {
    const script = [
      'from dataclasses import dataclass, field',
      'from typing import Literal, Optional',
      'from transformers import AutoModel, HfArgumentParser',
      '@dataclass',
      'class Base:',
      '    seed: int',
      '@dataclass',
      'class Args(Base):',
      '    model_name_or_path: str',
      '    dataset_name: str = field(metadata={"help": "a hub id"})',
      '    output_dir: str',
      '    lr: float',
      '    flag: bool',
      '    count: Optional[int] = field(metadata={})',
      '    mode: Literal["fast", "slow"]',
      '    tags: list[str]',
      '    kept: str = "x"',
      '    made: list = field(default_factory=list)',
      '    given: int = field(default=3)',
      'parser = HfArgumentParser(Args)',
      'args, = parser.parse_args_into_dataclasses()',
      'AutoModel.from_pretrained("prajjwal1/bert-tiny")',
      'load_dataset("csv", data_files="x.csv")',
      'load_dataset("glue", "sst2")',
    ].join('\n');
    const d = deriveScriptArgs(script);
    assert.equal(d.style, 'dataclass-parser');
    assert.deepEqual(d.args, [
      '--seed',
      '1',
      '--model_name_or_path',
      'prajjwal1/bert-tiny',
      '--dataset_name',
      'glue',
      '--output_dir',
      'out',
      '--lr',
      '0.1',
      '--flag',
      'false',
      '--count',
      '1',
      '--mode',
      'fast',
      '--tags',
      'x',
    ]);
    assert.ok(d.required.every((r) => r.option && r.source === 'Args'));
  });

  test('library dataclasses contribute what the script cannot start without', () => {
    const script =
      'from trl import ModelConfig, ScriptArguments, SFTConfig, TrlParser\nparser = TrlParser((ScriptArguments, SFTConfig, ModelConfig))\n';
    assert.deepEqual(deriveScriptArgs(script).args, ['--dataset_name', 'imdb', '--output_dir', 'out', '--model_name_or_path', 'gpt2']);
    // A local dataclass of the same name replaces the library's.
    const local =
      '@dataclass\nclass ScriptArguments:\n    dataset: str = "imdb"\nparser = HfArgumentParser((ScriptArguments, TrainingArguments))\n';
    assert.deepEqual(deriveScriptArgs(local).args, ['--output_dir', 'out']);
  });

  test('argparse: required=True, positionals, and options a script cannot do without', () => {
    const script = [
      'import argparse',
      'p = argparse.ArgumentParser()',
      'p.add_argument("data_file")',
      'p.add_argument("maybe", nargs="?")',
      'p.add_argument("--model-name", type=str)',
      'p.add_argument("--epochs", type=int, required=True)',
      'p.add_argument("--scale", type=float, required=True)',
      'p.add_argument("--optim", choices=["adamw", "sgd"], required=True)',
      'p.add_argument("--resume", type=str)',
      'p.add_argument("--output_dir", default="o")',
      'p.add_argument("--fp16", action="store_true")',
      'args = p.parse_args()',
    ].join('\n');
    const d = deriveScriptArgs(script);
    assert.equal(d.style, 'argparse');
    assert.deepEqual(d.args, ['x', '--model-name', 'gpt2', '--epochs', '1', '--scale', '0.1', '--optim', 'adamw']);
  });

  test('sys.argv[N] gives N arguments; a script with none gives none', () => {
    assert.deepEqual(deriveScriptArgs('import sys\nname = sys.argv[1]\n'), {
      style: 'sys.argv',
      required: [{ name: 'argv[1]', value: 'x', option: false, source: 'sys.argv' }],
      args: ['x'],
    });
    assert.deepEqual(deriveScriptArgs('import sys\na, b = sys.argv[1], sys.argv[2]\n').args, ['x', 'x']);
    assert.deepEqual(deriveScriptArgs('print(1)\n'), { style: 'none', required: [], args: [] });
    // A dataclass-parser script reading sys.argv[1] for a JSON file is judged by its parser.
    assert.equal(
      deriveScriptArgs('import sys\nif sys.argv[1].endswith(".json"): pass\np = HfArgumentParser((TrainingArguments,))\n').style,
      'dataclass-parser',
    );
  });
});

describe('deriveScriptArgs on real scripts', { skip: noCorpus }, () => {
  test('05_trl_orpo_2024.py: ORPOConfig and ModelConfig needs, the local ScriptArguments has defaults only', () => {
    const o = options(deriveScriptArgs(real('05_trl_orpo_2024.py')).args);
    assert.deepEqual(o, { output_dir: 'out', model_name_or_path: 'gpt2' });
  });

  test('21_phil_run_sft_trlparser.py: the local required dataset_id_or_path, SFTConfig output_dir, ModelConfig model', () => {
    const d = deriveScriptArgs(real('21_phil_run_sft_trlparser.py'));
    const o = options(d.args);
    assert.ok('dataset_id_or_path' in o, d.args.join(' '));
    assert.equal(o.output_dir, 'out');
    assert.ok(o.model_name_or_path);
    assert.ok(!('dataset_splits' in o), 'fields with defaults are not passed');
  });

  test('23_nb_sagemaker_vit_image_classification.py: argparse --model_name has no default', () => {
    const d = deriveScriptArgs(real('23_nb_sagemaker_vit_image_classification.py'));
    assert.equal(d.style, 'argparse');
    assert.deepEqual(options(d.args), { model_name: 'gpt2' });
  });

  test('26_trp_speech_recognition_ctc_bnb.py: required fields of local dataclasses', () => {
    const o = options(deriveScriptArgs(real('26_trp_speech_recognition_ctc_bnb.py')).args);
    assert.ok(o.model_name_or_path && o.dataset_name && o.output_dir === 'out', JSON.stringify(o));
  });
});
