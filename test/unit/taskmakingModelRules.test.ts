// make-task's rules for model and argument errors (recorded error texts as the libraries print them, on tiny
// scripts written here): a placeholder model without a pad token classifying batches, a Conv1D placeholder
// under a Linear-only PEFT method, an unset model-type key, a value given to a flag, and the snapshot gap
// of a library module no snapshot has.
import { strict as assert } from 'node:assert';
import { describe, test } from 'node:test';
import { optionIndex, optionValue } from '../../src/env/taskmaking/argEdits';
import { parseHelpFlags, parseHelpOptions } from '../../src/env/taskmaking/parserOptions';
import { diagnose, modelForScriptAutoClass, LINEAR_CAUSAL_PLACEHOLDER_MODEL, type RuleContext } from '../../src/env/taskmaking/rules';
import { apiPresence, missingFromEverySnapshot, type SnapshotFit } from '../../src/env/taskmaking/snapshotInference';
import { fallbackSnapshot, raisedInLibraryCode, withSnapshotGap } from '../../src/env/taskmaking/makeTask';
import type { PackageApi } from '../../src/env/snapshots/api';

const traceback = (last: string) =>
  `Traceback (most recent call last):\n  File "/tmp/run/train.py", line 30, in <module>\n    main()\n${last}\n`;

const SEQCLS = `import argparse
from transformers import AutoModelForSequenceClassification, AutoTokenizer
p = argparse.ArgumentParser()
p.add_argument("--model_name_or_path", type=str, required=True)
p.add_argument("--output_dir", type=str, default="out")
args = p.parse_args()
tok = AutoTokenizer.from_pretrained(args.model_name_or_path)
model = AutoModelForSequenceClassification.from_pretrained(args.model_name_or_path, num_labels=2)
`;
const SEQCLS_HELP = 'usage: train.py [-h] --model_name_or_path MODEL_NAME_OR_PATH [--output_dir OUTPUT_DIR]';

const PAD_ERROR = traceback(
  '  File "/venv/transformers/models/gpt2/modeling_gpt2.py", line 1410, in forward\n    assert (\nAssertionError: Cannot handle batch sizes > 1 if no padding token is defined.',
);

const ctxOf = (script: string, help: string, args: string[], over: Partial<RuleContext> = {}): RuleContext => ({
  script,
  args,
  env: {},
  options: parseHelpOptions(help),
  flags: parseHelpFlags(help),
  ...over,
});

describe('model and argument rules', () => {
  test('the Auto class a script loads with names a well-known model of that kind', () => {
    assert.deepEqual(modelForScriptAutoClass(SEQCLS), { autoClass: 'AutoModelForSequenceClassification', id: 'roberta-base' });
    assert.equal(
      modelForScriptAutoClass('from transformers import AutoModelForMaskedLM\nm = AutoModelForMaskedLM.from_config(c)\n')?.id,
      'bert-base-cased',
    );
    assert.equal(modelForScriptAutoClass('import torch\n'), undefined);
  });

  test("no pad token on a placeholder classifier: an encoder whose config has one; the script's own model is refused", () => {
    const d = diagnose(PAD_ERROR, ctxOf(SEQCLS, SEQCLS_HELP, ['--model_name_or_path', 'gpt2', '--output_dir', 'out']));
    assert.ok(d && d.outcome.kind === 'adapt', JSON.stringify(d));
    assert.equal(d.outcome.adaptation.rule, 'pad-token-undefined');
    assert.equal(optionValue(d.outcome.args!, 'model_name_or_path'), 'roberta-base');
    // The script names gpt2 itself: the real libraries fail the same way, and the refusal says so.
    const own = SEQCLS.replace('args.model_name_or_path, num_labels', '"gpt2", num_labels');
    const r = diagnose(PAD_ERROR, ctxOf(own, SEQCLS_HELP, ['--model_name_or_path', 'gpt2']));
    assert.ok(r && r.outcome.kind === 'refuse');
    assert.match(r.outcome.reason, /pad token/);
  });

  test('a Conv1D placeholder under a PEFT method that multiplies Linear weights: a Linear causal LM instead', () => {
    const script = `import argparse
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM
p = argparse.ArgumentParser()
p.add_argument("--base_model", type=str, default="path/to/model")
p.add_argument("--init_lora_weights", type=str, default="olora")
args = p.parse_args()
model = get_peft_model(AutoModelForCausalLM.from_pretrained(args.base_model), LoraConfig(init_lora_weights=args.init_lora_weights))
`;
    const err = traceback(
      '  File "/venv/peft/tuners/lora/layer.py", line 250, in olora_init\n    weight = weight - scale_factor * lora_B @ lora_A\nRuntimeError: mm: mat1 and mat2 shapes cannot be multiplied (128x32 and 96x32)',
    );
    const help = 'usage: train.py [-h] [--base_model BASE_MODEL] [--init_lora_weights INIT_LORA_WEIGHTS]';
    const d = diagnose(err, ctxOf(script, help, ['--base_model', 'gpt2']));
    assert.ok(d && d.outcome.kind === 'adapt', JSON.stringify(d));
    assert.equal(d.outcome.adaptation.rule, 'placeholder-model-conv1d');
    assert.equal(optionValue(d.outcome.args!, 'base_model'), LINEAR_CAUSAL_PLACEHOLDER_MODEL);
    // Already a Linear model, or no PEFT in the script: not this rule's answer.
    const again = diagnose(err, ctxOf(script, help, ['--base_model', LINEAR_CAUSAL_PLACEHOLDER_MODEL]));
    assert.ok(!again || again.outcome.kind !== 'adapt' || again.outcome.adaptation.rule !== 'placeholder-model-conv1d');
    assert.equal(diagnose(err, ctxOf(script.replace(/^from peft.*$/m, ''), help, ['--base_model', 'gpt2'])), undefined);
  });

  test("KeyError: None of an unset model-type option: the model option gets a model of the script's Auto class", () => {
    const script = `from dataclasses import dataclass, field
from typing import Optional
from transformers import CONFIG_MAPPING, AutoConfig, AutoModelForMaskedLM, HfArgumentParser
@dataclass
class ModelArguments:
    model_name_or_path: Optional[str] = field(default=None)
    model_type: Optional[str] = field(default=None)
model_args, = HfArgumentParser((ModelArguments,)).parse_args_into_dataclasses()
if model_args.model_name_or_path:
    config = AutoConfig.from_pretrained(model_args.model_name_or_path)
else:
    config = CONFIG_MAPPING[model_args.model_type]()
model = AutoModelForMaskedLM.from_config(config)
`;
    const help = 'usage: run.py [-h] [--model_name_or_path MODEL_NAME_OR_PATH] [--model_type MODEL_TYPE] [--do_train [DO_TRAIN]]';
    const err = traceback(
      '  File "/venv/transformers/models/auto/configuration_auto.py", line 740, in __getitem__\n    raise KeyError(key)\nKeyError: None',
    );
    const d = diagnose(err, ctxOf(script, help, ['--do_train']));
    assert.ok(d && d.outcome.kind === 'adapt', JSON.stringify(d));
    assert.equal(d.outcome.adaptation.rule, 'unset-key-option');
    assert.equal(optionValue(d.outcome.args!, 'model_name_or_path'), 'bert-base-cased');
    // A plain option keyed into a literal dict gets the dict's first key.
    const plain = `import argparse\nTASKS = {"cola": 1, "sst2": 2}\np = argparse.ArgumentParser()\np.add_argument("--task")\nargs = p.parse_args()\nn = TASKS[args.task]\n`;
    const k = diagnose(err, ctxOf(plain, 'usage: run.py [-h] [--task TASK]', []));
    assert.ok(k && k.outcome.kind === 'adapt');
    assert.equal(optionValue(k.outcome.args!, 'task'), 'cola');
  });

  test('a value given to a store_true flag: the flag is dropped (false) or given bare (true); the CPU rule does not give one', () => {
    const help = 'usage: run.py [-h] [--model_type MODEL_TYPE] [--fp16] [--do_train] [--fp16_opt_level FP16_OPT_LEVEL]';
    assert.deepEqual(
      [...parseHelpFlags(help)].sort(),
      ['do_train', 'fp16', 'h'].filter((x) => x !== 'h'),
    );
    const script = 'import argparse\n';
    const err = 'usage: run.py [-h] [--model_type MODEL_TYPE] [--fp16]\nrun.py: error: unrecognized arguments: false';
    const d = diagnose(err, ctxOf(script, help, ['--model_type', 'bert', '--fp16', 'false', '--do_train']));
    assert.ok(d && d.outcome.kind === 'adapt', JSON.stringify(d));
    assert.deepEqual(d.outcome.args, ['--model_type', 'bert', '--do_train']);
    const t = diagnose(err.replace('false', 'true'), ctxOf(script, help, ['--do_train', 'true', '--model_type', 'bert']));
    assert.ok(t && t.outcome.kind === 'adapt');
    assert.deepEqual(t.outcome.args, ['--do_train', '--model_type', 'bert']);
    // fp16 in the code on CPU: the flag is absent (false) already, so no `--fp16 false`; the shim answers.
    const cpu = diagnose(
      traceback('RuntimeError: "addmm_impl_cpu_" not implemented for \'Half\''),
      ctxOf(script, help, ['--model_type', 'bert']),
    );
    assert.ok(cpu && cpu.outcome.kind === 'adapt');
    assert.equal(cpu.outcome.adaptation.kind, 'runtime');
    assert.equal(optionIndex(cpu.outcome.args ?? [], 'fp16'), -1);
    // Given as a flag, it is removed.
    const on = diagnose(traceback('RuntimeError: "addmm_impl_cpu_" not implemented for \'Half\''), ctxOf(script, help, ['--fp16']));
    assert.ok(on && on.outcome.kind === 'adapt');
    assert.deepEqual(on.outcome.args, []);
  });

  test('a library module no snapshot has: absent from the walked tree, and the refusal names the releases', () => {
    const api = {
      modules: { trl: { names: {} }, 'trl.experimental': { names: {} }, 'trl.experimental.kto': { names: {} } },
      unimportable: {},
    } as unknown as PackageApi;
    assert.equal(apiPresence(api, { module: 'trl.experimental.ppo', name: 'PPOTrainer', line: 3 }), 'absent');
    assert.equal(apiPresence(api, { module: 'trl._private.x', line: 3 }), 'unknown');
    const tapi = {
      modules: { transformers: { names: {} }, 'transformers.data': { names: {} } },
      unimportable: {},
    } as unknown as PackageApi;
    assert.equal(
      apiPresence(tapi, { module: 'transformers.data.metrics.squad_metrics', line: 1 }),
      'unknown',
      "transformers' tree is cut below its second level",
    );
    const fits: SnapshotFit[] = [
      { id: '2025-09', date: '2025-09-15', missing: ['trl.experimental.ppo.PPOTrainer (line 3)'], unknown: 0, ready: true },
      {
        id: '2023-06',
        date: '2023-06-15',
        missing: ['trl.experimental.ppo.PPOTrainer (line 3)', 'trl.ModelConfig (line 2)'],
        unknown: 0,
        ready: true,
      },
      { id: '2026-11', date: '2026-11-15', missing: ['trl.experimental.ppo.PPOTrainer (line 3)'], unknown: 0, ready: true },
    ];
    const pins = missingFromEverySnapshot(fits, 'trl.experimental.ppo');
    assert.ok(pins?.startsWith('trl ') && pins.includes('(2023-06)') && pins.includes('(2026-11)'), pins);
    assert.equal(missingFromEverySnapshot(fits, 'trl'), undefined, 'trl itself is there');
    const r = withSnapshotGap(
      {
        rule: 'module-not-installed',
        reason: "the script imports trl.experimental.ppo, which is neither beside it nor installed in the snapshot's environment",
      },
      fits,
    );
    assert.match(r.reason, /no snapshot ForgeEnv has pins a release with trl\.experimental\.ppo/);
    assert.equal(
      withSnapshotGap({ rule: 'module-not-installed', reason: 'the script imports foo, which …' }, fits).reason,
      'the script imports foo, which …',
    );
  });

  test("a PEFT adapter loaded from the base model's repo when the adapter option is unset: the adapter option takes it", () => {
    const script = 'import argparse\nfrom peft import PeftModel\n';
    const help = 'usage: t.py [-h] [--model_name_or_path M] [--adapter_name_or_path A]';
    const err = traceback("ValueError: Can't find 'adapter_config.json' at 'gpt2'");
    const d = diagnose(err, ctxOf(script, help, ['--model_name_or_path', 'gpt2']));
    assert.ok(d && d.outcome.kind === 'adapt', JSON.stringify(d));
    assert.equal(d.outcome.adaptation.rule, 'peft-adapter');
    assert.equal(optionValue(d.outcome.args!, 'model_name_or_path'), 'gpt2', 'the base model stays');
    const adapter = optionValue(d.outcome.args!, 'adapter_name_or_path')!;
    assert.deepEqual(
      d.outcome.hub!.models.map((m) => [m.id, m.adapter_of]),
      [[adapter, 'gpt2']],
    );
  });

  test('a torch.dtype saved as JSON: the dtype option takes "auto", which the script passes on as a string', () => {
    const script =
      'import torch\nfrom trl import ModelConfig, TrlParser\nmodel_args, = TrlParser((ModelConfig,)).parse_args_and_config()\ndtype = model_args.dtype if model_args.dtype in ["auto", None] else getattr(torch, model_args.dtype)\n';
    const help = 'usage: t.py [-h] [--model_name_or_path M] [--dtype {auto,bfloat16,float16,float32}]';
    const err = traceback(
      '  File "/venv/json/encoder.py", line 180, in default\n    raise TypeError(f\'Object of type {o.__class__.__name__} \'\nTypeError: Object of type dtype is not JSON serializable',
    );
    const d = diagnose(err, ctxOf(script, help, ['--model_name_or_path', 'gpt2']));
    assert.ok(d && d.outcome.kind === 'adapt', JSON.stringify(d));
    assert.equal(d.outcome.adaptation.rule, 'dtype-not-serializable');
    assert.equal(optionValue(d.outcome.args!, 'dtype'), 'auto');
    // A script without that branch: not this rule's answer.
    assert.equal(diagnose(err, ctxOf('import torch\n', help, [])), undefined);
  });

  test('a quantization keyword the release no longer takes is no quantization to drop: unrecognised, so the snapshot falls back', () => {
    const script =
      'import torch\nfrom peft import AutoPeftModelForCausalLM\nm = AutoPeftModelForCausalLM.from_pretrained("x", load_in_4bit=True)\n';
    const err = traceback(
      '  File "/venv/transformers/modeling_utils.py", line 4990, in from_pretrained\n    model = cls(config, *model_args, **model_kwargs)\nTypeError: LlamaForCausalLM.__init__() got an unexpected keyword argument \'load_in_4bit\'',
    );
    assert.equal(diagnose(err, ctxOf(script, 'usage: t.py [-h]', [])), undefined);
    assert.ok(
      fallbackSnapshot(
        { refusal: { rule: 'unrecognised-error', reason: `no rule recognises the error: ${err.trim().split('\\n').pop()}` } },
        [
          { id: '2025-09', date: '2025-09-15', missing: [], unknown: 0, ready: true },
          { id: '2026-11', date: '2026-11-15', missing: [], unknown: 0, ready: true },
        ],
        ['2026-11'],
      ) === '2025-09',
      'make-task reads it as a library API error',
    );
    // Quantization the release still takes: the shim, as before.
    const d = diagnose(traceback('RuntimeError: No GPU found. A GPU is needed for quantization.'), ctxOf(script, 'usage: t.py [-h]', []));
    assert.ok(d && d.outcome.kind === 'adapt' && d.outcome.adaptation.rule === 'no-quantized-loading');
  });

  test("an UnboundLocalError or ValueError raised in a library's own code is a library-API error (the snapshot falls back); in the script it is not", () => {
    const lib =
      'Traceback (most recent call last):\n  File "/tmp/run/train.py", line 42, in <module>\n    inputs = processor(prompts, return_tensors="pt")\n  File "/venv/lib/python3.11/site-packages/transformers/models/idefics/processing_idefics.py", line 347, in __call__\n    if prompts is None:\nUnboundLocalError: cannot access local variable \'prompts\' where it is not associated with a value\n';
    assert.equal(raisedInLibraryCode(lib), true);
    const own =
      'Traceback (most recent call last):\n  File "/tmp/run/train.py", line 42, in <module>\n    x = extension\nUnboundLocalError: cannot access local variable \'extension\' where it is not associated with a value\n';
    assert.equal(raisedInLibraryCode(own), false);
    // A ValueError of the library about how the script combines its arguments (written after trl 0.8's DPOTrainer).
    const combo =
      'Traceback (most recent call last):\n  File "/tmp/run/train.py", line 90, in <module>\n    trainer = DPOTrainer(model, ref_model, peft_config=cfg)\n  File "/venv/lib/python3.11/site-packages/trl/trainer/dpo_trainer.py", line 185, in __init__\n    raise ValueError(\nValueError: You passed both a ref_model and a peft_config.\n';
    assert.equal(raisedInLibraryCode(combo), true);
    // A KeyError of a key a later release renamed in the kwargs it reads (written after trl 0.23's GKDTrainer reading
    // "dtype" where a script for trl 0.18 set "torch_dtype"); the same KeyError in the script's own code is not.
    const renamed = (frame: string) =>
      `Traceback (most recent call last):\n  File "/tmp/run/train.py", line 110, in <module>\n    trainer = GKDTrainer(\n${frame}\n    teacher_model_init_kwargs["dtype"]\nKeyError: 'dtype'\n`;
    assert.equal(
      raisedInLibraryCode(renamed('  File "/venv/lib/python3.11/site-packages/trl/trainer/gkd_trainer.py", line 170, in __init__')),
      true,
    );
    assert.equal(raisedInLibraryCode(renamed('  File "/tmp/run/train.py", line 12, in make')), false);
    // Raised in a multiprocessing pool's worker and re-raised by the pool (written after a real run at 2024-09, numpy 2.1
    // under transformers 4.45's SQuAD features): the worker's frame decides.
    const pooled = (workerFrame: string) =>
      [
        'multiprocessing.pool.RemoteTraceback: ',
        '"""',
        'Traceback (most recent call last):',
        '  File "lib/python3.11/multiprocessing/pool.py", line 125, in worker',
        '    result = (True, func(*args, **kwds))',
        workerFrame,
        '    pad_token_indices = np.where(span["input_ids"] == tokenizer.pad_token_id)',
        'ValueError: Calling nonzero on 0d arrays is not allowed.',
        '"""',
        '',
        'The above exception was the direct cause of the following exception:',
        '',
        'Traceback (most recent call last):',
        '  File "train.py", line 465, in load_and_cache_examples',
        '    features, dataset = squad_convert_examples_to_features(',
        '  File "lib/python3.11/multiprocessing/pool.py", line 873, in next',
        '    raise value',
        'ValueError: Calling nonzero on 0d arrays is not allowed.',
      ].join('\n');
    assert.equal(raisedInLibraryCode(pooled('  File "site-packages/transformers/data/processors/squad.py", line 252, in f')), true);
    assert.equal(raisedInLibraryCode(pooled('  File "train.py", line 30, in convert')), false);
    assert.equal(raisedInLibraryCode(combo.replace('site-packages/trl/trainer/dpo_trainer.py', 'run/helpers.py')), false);
    const fits: SnapshotFit[] = [
      { id: '2025-09', date: '2025-09-15', missing: [], unknown: 0, ready: true },
      { id: '2026-11', date: '2026-11-15', missing: [], unknown: 0, ready: true },
    ];
    const refusal = {
      rule: 'unrecognised-error',
      reason:
        "no rule recognises the error: UnboundLocalError: cannot access local variable 'prompts' where it is not associated with a value",
    };
    assert.equal(fallbackSnapshot({ refusal, last: { stdout: '', stderr: lib } }, fits, ['2026-11']), '2025-09');
    assert.equal(fallbackSnapshot({ refusal, last: { stdout: '', stderr: own } }, fits, ['2026-11']), undefined);
    // A call with more positional arguments than the release's function takes (a parameter added later) is an API error too.
    const positional = {
      rule: 'unrecognised-error',
      reason: 'no rule recognises the error: TypeError: get_parameter_names() takes 2 positional arguments but 3 were given',
    };
    assert.equal(fallbackSnapshot({ refusal: positional }, fits, ['2026-11']), '2025-09');
    const notApi = { rule: 'unrecognised-error', reason: "no rule recognises the error: TypeError: unhashable type: 'dict'" };
    assert.equal(fallbackSnapshot({ refusal: notApi }, fits, ['2026-11']), undefined);
  });

  test('an args dump the script logs (fp16=False, …, device=…) is not an fp16 error', () => {
    const dump =
      "12/05/2026 12:58:01 - INFO - __main__ - Training/evaluation parameters Namespace(model_type='bert', fp16=False, fp16_opt_level='O1', server_ip='', server_port='', threads=1, n_gpu=0, device=device(type='cpu'))";
    const out = `${dump}\n${traceback("KeyError: 'squad_v2_question'")}`;
    const d = diagnose(out, ctxOf('import argparse\n', 'usage: run.py [-h] [--fp16] [--model_type MODEL_TYPE]', ['--model_type', 'bert']));
    assert.ok(!d || d.outcome.kind !== 'adapt' || !d.outcome.adaptation.rule.startsWith('cpu-fp16'), JSON.stringify(d));
    // The real message still is.
    const real = diagnose(
      traceback("ValueError: fp16 mixed precision requires a GPU (not 'cpu')."),
      ctxOf('import argparse\n', 'usage: run.py [-h] [--fp16]', ['--fp16']),
    );
    assert.ok(real && real.outcome.kind === 'adapt' && real.outcome.adaptation.rule === 'cpu-fp16-off');
  });

  test('a path option the script was not given, used as a path through a variable: the unset file options get files', () => {
    const script =
      'import argparse, os\np = argparse.ArgumentParser()\np.add_argument("--train_file", default=None)\np.add_argument("--predict_file", default=None)\np.add_argument("--output_dir")\nargs = p.parse_args()\ndef load(args, evaluate=False):\n    input_file = args.predict_file if evaluate else args.train_file\n    cached = os.path.join(os.path.dirname(input_file), "cache")\n';
    const help = 'usage: run.py [-h] [--train_file TRAIN_FILE] [--predict_file PREDICT_FILE] [--output_dir OUTPUT_DIR]';
    const err =
      'Traceback (most recent call last):\n  File "/tmp/run/train.py", line 40, in <module>\n    main()\n  File "/tmp/run/train.py", line 9, in load\n    os.path.dirname(input_file),\n  File "<frozen posixpath>", line 152, in dirname\nTypeError: expected str, bytes or os.PathLike object, not NoneType';
    const d = diagnose(err, ctxOf(script, help, ['--output_dir', 'out']));
    assert.ok(d && d.outcome.kind === 'adapt', JSON.stringify(d));
    assert.equal(d.outcome.adaptation.rule, 'unset-path-option');
    assert.equal(optionValue(d.outcome.args!, 'train_file'), 'train.json');
    assert.ok(optionValue(d.outcome.args!, 'predict_file'));
    assert.equal(optionValue(d.outcome.args!, 'output_dir'), 'out', 'a given option keeps its value');
  });

  test("unpadded examples stacked into a batch: the script's own padding flag", () => {
    const help = 'usage: run.py [-h] [--pad_to_max_length] [--max_source_length MAX_SOURCE_LENGTH]';
    const err = traceback(
      "ValueError: Unable to create tensor, you should probably activate truncation and/or padding with 'padding=True' 'truncation=True' to have batched tensors with the same length. Perhaps your features (`input_ids` in this case) have excessive nesting (inputs type `list` where type `int` is expected).",
    );
    const d = diagnose(err, ctxOf('import argparse\n', help, ['--max_source_length', '64']));
    assert.ok(d && d.outcome.kind === 'adapt', JSON.stringify(d));
    assert.deepEqual(d.outcome.args, ['--max_source_length', '64', '--pad_to_max_length']);
    assert.equal(diagnose(err, ctxOf('import argparse\n', help, d.outcome.args)), undefined, 'given already: no answer');
  });
});
