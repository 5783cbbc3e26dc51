// An absolute output path outside the run folder (SageMaker's /opt/ml/...): the rule
// output-path-outside-run on recorded error texts. An environment variable's or an option's default is
// set to a run-relative folder; a literal in the code is refused with the path.
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { diagnose, type RuleContext } from '../../src/env/taskmaking/rules';
import { outsidePathSources } from '../../src/env/taskmaking/outsidePaths';

// The error the last real-mode measure reported for script 30 (save_pretrained's os.makedirs in the sandbox), in Python 3.11's traceback form.
const ERROR = `Traceback (most recent call last):
  File "train.py", line 121, in <module>
    trainer.model.save_pretrained("/opt/ml/model/")
  File "<frozen os>", line 215, in makedirs
  File "<frozen os>", line 225, in makedirs
PermissionError: [Errno 13] Permission denied: '/opt'
`;
const ctx = (script: string, over: Partial<RuleContext> = {}): RuleContext => ({ script, args: [], env: {}, options: undefined, ...over });

describe('output-path-outside-run', () => {
  test("an environment variable's default: the variable is set to a run-relative folder, once", () => {
    const script = 'import os\nout = os.environ.get("SM_MODEL_DIR", "/opt/ml/model")\nmodel.save_pretrained(out)\n';
    const d = diagnose(ERROR, ctx(script));
    assert.ok(d && d.outcome.kind === 'adapt', JSON.stringify(d));
    assert.equal(d.outcome.adaptation.rule, 'output-path-outside-run');
    assert.deepEqual(d.outcome.env, { SM_MODEL_DIR: 'out/sm_model_dir' });
    assert.notEqual(diagnose(ERROR, ctx(script, { env: { SM_MODEL_DIR: 'out/sm_model_dir' } }))?.outcome.kind, 'adapt');
  });

  test("an option's default (argparse or a dataclass field): the option is set to a run-relative folder", () => {
    const script = 'parser.add_argument(\n    "--output_dir",\n    type=str,\n    default="/opt/ml/model",\n)\n';
    const d = diagnose(ERROR, ctx(script, { args: ['--epochs', '1'] }));
    assert.ok(d && d.outcome.kind === 'adapt', JSON.stringify(d));
    assert.deepEqual(d.outcome.args, ['--epochs', '1', '--output_dir', 'out/output_dir']);
    const field = '@dataclass\nclass A:\n    model_dir: str = field(default="/opt/ml/model/", metadata={"help": "x"})\n';
    assert.deepEqual(outsidePathSources(field, '/opt'), [{ kind: 'option', name: 'model_dir', literal: '/opt/ml/model/' }]);
  });

  test('a literal in the code becomes a task mount, then (mounted) is refused naming the path; an unrelated path is not this rule', () => {
    // Script 30 of the corpus (SageMaker Donut): save_pretrained("/opt/ml/model/") in its code.
    const script = readFileSync(join(__dirname, '../../../shared/realworld/scripts/30_nb_sagemaker_donut_document_ai.py'), 'utf8');
    const first = diagnose(ERROR, ctx(script));
    assert.ok(first && first.outcome.kind === 'adapt', JSON.stringify(first));
    assert.deepEqual(first.outcome.mounts, ['/opt/ml/model']);
    const d = diagnose(ERROR, ctx(script, { mounts: ['/opt/ml/model'] }));
    assert.ok(d && d.outcome.kind === 'refuse', JSON.stringify(d));
    assert.equal(d.outcome.rule, 'output-path-outside-run');
    assert.match(d.outcome.reason, /\/opt\/ml\/model\//);
    const other = diagnose(ERROR.replace("'/opt'", "'/srv'"), ctx(script));
    assert.notEqual(other?.outcome.kind === 'refuse' ? other.outcome.rule : undefined, 'output-path-outside-run');
  });
});
