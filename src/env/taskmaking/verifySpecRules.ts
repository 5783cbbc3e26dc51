// When the verifier cannot check a task's artifact it says which `verify` field to declare
// (resources/verifier/forgeenv_verify.py: "set verify.base_model and verify.head in tasks.json").
// These rules answer from what the task already runs with: the model and dataset ids in its args
// (or the script's own literals), the head from the script's `AutoModelFor…` class. Keyed on the
// verifier's finding, never on a script.
import { EVIDENCE_ARTIFACT, type RuntimeShim } from '../run/runtimeShims';
import { valueForArgument } from '../tasks/scriptArgs';
import { VerifyHeadSchema, type VerifySpecInput } from '../verify/spec';
import { optionValue } from './argEdits';
import { deriveHubNeeds } from '../hub/needs';
import type { Adaptation } from './provenance';

const MODEL_OPTIONS = [
  'model_name_or_path',
  'model_name',
  'model_id',
  'model',
  'base_model',
  'pretrained_model_name_or_path',
  'model_path',
];
const DATASET_OPTIONS = ['dataset_name', 'dataset', 'dataset_id', 'dataset_path'];
const HEADS: ReadonlyArray<readonly [RegExp, NonNullable<VerifySpecInput['head']>]> = [
  [/AutoModelForImageTextToText\b|AutoModelForVision2Seq\b|ForVisionText2Text\b|VisionEncoderDecoderModel\b/, 'vlm'],
  [/ForCausalLM\b|LMHeadModel\b/, 'causal'],
  [/ForSequenceClassification\b/, 'seqcls'],
  [/ForTokenClassification\b/, 'tokcls'],
  [/ForQuestionAnswering\b/, 'qa'],
  [/ForSeq2SeqLM\b|ForConditionalGeneration\b/, 'seq2seq'],
  [/ForImageClassification\b/, 'imgcls'],
  [/ForMaskedLM\b/, 'mlm'],
  [/ForCTC\b/, 'ctc'],
];

const fromArgs = (args: readonly string[], names: readonly string[]) =>
  names.map((n) => optionValue(args, n)).find((v) => v !== undefined && v !== 'true');

/** The verifier's finding when the original's run left no saved model anywhere (forgeenv_verify.py's locate). */
export const NO_SAVED_MODEL = /the run left no saved model\b/;

// A call that saves a model folder the verifier recognises (config and weights, or an adapter: `save_pretrained`,
// a Trainer's `save_model`, a state dict by `torch.save`), or a Trainer, which checkpoints such folders itself.
// Accelerate's `save_state`/`save`, safetensors' `save_file` write weights without a config: no model to verify.
const SAVES_MODEL = /\.save_pretrained\s*\(|\bsave_model\s*\(|\btorch\.save\s*\(|\b\w*Trainer\s*\(/;

/**
 * The trained-model evidence decided before verification, when the script visibly saves no model folder: no
 * such save call and no Trainer (a training loop that only logs or keeps accelerate states, or uploads with
 * `model.push_to_hub`, which saves into a temporary folder). The verifier would find no saved model
 * ("the run left no saved model") and make-task would verify twice.
 */
export function evidenceUpFront(script: string, current: VerifySpecInput = {}): ReturnType<typeof verifySpecFor> {
  if (current.artifact || SAVES_MODEL.test(script.replace(/#.*$/gm, ''))) return undefined;
  const fix = verifySpecFor('the run left no saved model', script, [], current);
  return (
    fix && {
      ...fix,
      adaptation: {
        ...fix.adaptation,
        error: 'the script saves no model folder (no save_pretrained/save_model/torch.save call, no Trainer): decided before verification',
      },
    }
  );
}

/**
 * The verifier's finding when the declared head's Auto class does not load the saved model and the saved config's
 * `architectures` name a model of another head (forgeenv_verify.py's loader_for): a script that loads one of several
 * classes by the model's type (a vision-language class for VLMs, a causal LM otherwise) saved the other kind.
 */
export const SAVED_OTHER_HEAD = /is no (\w+) model \((\w+)\)/;

/** The verify fields (and runtime shim) a verifier finding asks for, with the adaptation that records them; undefined when no rule answers. */
export function verifySpecFor(
  finding: string,
  script: string,
  args: readonly string[],
  current: VerifySpecInput = {},
): { spec: VerifySpecInput; shim?: RuntimeShim; adaptation: Omit<Adaptation, 'round'> } | undefined {
  const spec: VerifySpecInput = { ...current };
  const changes: string[] = [];
  // The script saves no model: the environment keeps the model its optimizer trained (the
  // trained-model-evidence shim) and the verifier judges that one.
  if (NO_SAVED_MODEL.test(finding) && !current.artifact) {
    spec.artifact = EVIDENCE_ARTIFACT;
    return {
      spec,
      shim: 'trained-model-evidence',
      adaptation: {
        rule: 'trained-model-evidence',
        kind: 'verify',
        error: finding.slice(0, 500),
        change: `runtime shim trained-model-evidence, verify.artifact ${EVIDENCE_ARTIFACT}`,
      },
    };
  }
  if (/verify\.base_model/.test(finding) && !current.base_model) {
    const headOf = HEADS.find(([re]) => re.test(script));
    // The option the script loads the model of that head from (`AutoModelForCausalLM.from_pretrained(args.sft_model_path)`)
    // before the usual model options: a script may take its tokenizer from one option and its model from another.
    // No model option: the model the script loads by a literal id, resolved through its variables
    // (`checkpoint = "org/name"; X.from_pretrained(checkpoint)`), before the derived args' placeholder.
    const loadedFrom = headOf && optionLoadedBy(script, headOf[0]);
    spec.base_model =
      (loadedFrom && fromArgs(args, [loadedFrom])) ??
      fromArgs(args, MODEL_OPTIONS) ??
      deriveHubNeeds(script, args).models[0]?.id ??
      valueForArgument(script, 'model_name_or_path');
    changes.push(`verify.base_model ${spec.base_model}`);
    const head = headOf?.[1];
    if (head && !current.head) {
      spec.head = head;
      changes.push(`verify.head ${head}`);
    }
  }
  // The saved model's own architecture decides the head the script's first Auto class guessed wrong.
  const other = SAVED_OTHER_HEAD.exec(finding);
  const saved = other && VerifyHeadSchema.safeParse(other[2]);
  if (other && saved?.success && current.head === other[1] && saved.data !== current.head) {
    spec.head = saved.data;
    changes.push(`verify.head ${saved.data} (the saved model's architectures name a ${saved.data} model, not ${other[1]})`);
  }
  if (/verify\.dataset/.test(finding) && !current.dataset) {
    spec.dataset = [fromArgs(args, DATASET_OPTIONS) ?? valueForArgument(script, 'dataset_name')];
    changes.push(`verify.dataset ${spec.dataset[0]}`);
  }
  if (!changes.length) return undefined;
  return { spec, adaptation: { rule: 'verify-spec', kind: 'verify', error: finding.slice(0, 500), change: changes.join(', ') } };
}

/** The option (`sft_model_path`) whose value the script's `<Class>.from_pretrained(<obj>.<option>, …)` loads, for a class `head` matches. */
export function optionLoadedBy(script: string, head: RegExp): string | undefined {
  for (const m of script.matchAll(/\b(\w+)\.from_pretrained\(\s*\w+\.(\w+)\s*[,)]/g)) if (head.test(m[1])) return m[2];
  return undefined;
}
