// Option defaults only the parser knows (a library config dataclass's field, printed by --help): read from the help
// text, and made explicit when a model is missing offline and the error names none (transformers 5's wording).
import { strict as assert } from 'node:assert';
import { describe, test } from 'node:test';
import { deriveHubNeeds } from '../../src/env/hub/needs';
import { optionValue } from '../../src/env/taskmaking/argEdits';
import { parseHelpDefaults, parseHelpOptions } from '../../src/env/taskmaking/parserOptions';
import { diagnose, type RuleContext } from '../../src/env/taskmaking/rules';

// As HfArgumentParser prints a dataclass whose fields the script does not define (wrapped as argparse wraps).
const HELP = `usage: train.py [-h] [--model_name_or_path MODEL_NAME_OR_PATH] [--critic_model_path CRITIC_MODEL_PATH]
                [--output_dir OUTPUT_DIR] [--seed SEED]

options:
  -h, --help            show this help message and exit
  --model_name_or_path MODEL_NAME_OR_PATH, --model-name-or-path MODEL_NAME_OR_PATH
                        Model checkpoint for weights initialization. (default:
                        None)
  --critic_model_path CRITIC_MODEL_PATH, --critic-model-path CRITIC_MODEL_PATH
                        Path to the critic model. (default:
                        some-org/tiny-critic-1b)
  --output_dir OUTPUT_DIR, --output-dir OUTPUT_DIR
                        Where to write. (default: trainer_output)
  --seed SEED           Random seed. (default: 42)
`;

const SCRIPT = [
  'from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification, HfArgumentParser',
  'from somelib import CriticConfig',
  'args, = HfArgumentParser((CriticConfig,)).parse_args_into_dataclasses()',
  'policy = AutoModelForCausalLM.from_pretrained(args.model_name_or_path)',
  'critic = AutoModelForSequenceClassification.from_pretrained(args.critic_model_path, num_labels=1)',
].join('\n');

const NO_ID_ERROR = `Traceback (most recent call last):
  File "/tmp/run/train.py", line 5, in <module>
    critic = AutoModelForSequenceClassification.from_pretrained(args.critic_model_path, num_labels=1)
OSError: We couldn't connect to 'https://huggingface.co' to load the files, and couldn't find them in the cached files.
`;

describe('option defaults from --help', () => {
  test('parsed per option, across wrapped lines', () => {
    const d = parseHelpDefaults(HELP);
    assert.equal(d.get('critic_model_path'), 'some-org/tiny-critic-1b');
    assert.equal(d.get('model_name_or_path'), 'None');
    assert.equal(d.get('seed'), '42');
    assert.equal(d.get('output_dir'), 'trainer_output');
  });

  test('a model missing offline that the error does not name: the model options defaults are made explicit, then the hub derives them', () => {
    const args = ['--model_name_or_path', 'gpt2', '--output_dir', 'out'];
    const ctx: RuleContext = {
      script: SCRIPT,
      args,
      env: {},
      options: parseHelpOptions(HELP),
      defaults: parseHelpDefaults(HELP),
      hub: { needs: deriveHubNeeds(SCRIPT, args), refusals: [] },
    };
    assert.ok(!ctx.hub!.needs.models.some((m) => m.id === 'some-org/tiny-critic-1b'), 'the derivation alone cannot see it');
    const d = diagnose(NO_ID_ERROR, ctx);
    assert.ok(d && d.outcome.kind === 'adapt', JSON.stringify(d));
    assert.equal(d.outcome.adaptation.rule, 'hub-model-option-default');
    assert.equal(optionValue(d.outcome.args!, 'critic_model_path'), 'some-org/tiny-critic-1b');
    assert.equal(optionValue(d.outcome.args!, 'seed'), undefined, 'only model options');
    assert.ok(deriveHubNeeds(SCRIPT, d.outcome.args).models.some((m) => m.id === 'some-org/tiny-critic-1b'));
    // Once given (or without the parser's defaults), the rule has no answer: the hub's own rules decide.
    const again = diagnose(NO_ID_ERROR, { ...ctx, args: d.outcome.args! });
    assert.ok(!again || again.outcome.kind !== 'adapt' || again.outcome.adaptation.rule !== 'hub-model-option-default');
    const without = diagnose(NO_ID_ERROR, { ...ctx, defaults: undefined });
    assert.ok(!without || without.outcome.kind !== 'adapt' || without.outcome.adaptation.rule !== 'hub-model-option-default');
  });
});
