// The task corpus: training scripts (`<task_id>.py`) plus optional metadata (`tasks.json`) from the
// built-in folder and from user folders. Loading never throws on bad input: every unreadable script
// or invalid metadata file becomes a problem string naming the file, and the rest still loads.
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { readFolderFile } from './folderFile';
import { MAX_TASK_FILE_BYTES, MAX_TASK_METADATA_BYTES } from '../limits';
import { tasksDir } from '../paths';
import { ScriptEnvSchema } from '../sandbox/options';
import { TaskRuntimeSchema } from '../run/runtimeShims';
import { AdaptationSchema, MakeTaskVerdictSchema, NaturalDriftSchema } from '../taskmaking/provenance';
import { VerifySpecSchema } from '../verify/spec';
import { HubNeedsSchema } from '../hub/needs';
import { DerivedEnvironmentSchema } from '../snapshots/derived';
import { randomIndex } from '../random';
import { deriveScriptArgs } from './scriptArgs';
import {
  DifficultySchema,
  formatZodError,
  LibraryVersionsSchema,
  RunArgsSchema,
  RunFilesSchema,
  RunMountsSchema,
  TaskSchema,
  type Difficulty,
  type Task,
  type TaskCategory,
} from '../schemas';

export const TASK_METADATA_FILE = 'tasks.json';
const DEFAULT_LOSS_RANGE: [number, number] = [0, 5];
const DEFAULT_ACCURACY_RANGE: [number, number] = [0, 1];

const orderedRange = (lo: number, hi: number) =>
  z
    .tuple([z.number().min(lo).max(hi), z.number().min(lo).max(hi)])
    .refine(([a, b]) => a <= b, 'the lower bound must not exceed the upper bound');

/** One entry of `tasks.json`. Category and the script itself are derived, never stored; difficulty is derived unless the entry sets it. */
export const TaskMetadataSchema = z
  .object({
    task_id: TaskSchema.shape.task_id,
    description: z.string().optional(),
    /** Range of the final logged training loss. */
    expected_loss_range: orderedRange(0, 5).optional(),
    /** Range of the printed accuracy-like metrics. */
    expected_accuracy_range: orderedRange(0, 1).optional(),
    tags: z.array(z.string()).optional(),
    /** Overrides the line-count rule (a labeller's judgement, e.g. from "Make Task from This Script"). */
    difficulty: DifficultySchema.optional(),
    library_versions: LibraryVersionsSchema.optional(),
    /** A derived environment (a snapshot with per-library overrides, snapshots/derived.ts) make-task chose; `library_versions` holds its pins. */
    environment: DerivedEnvironmentSchema.optional(),
    /** argv after `train.py`; absent: derived from the script (scriptArgs.ts). */
    args: RunArgsSchema.optional(),
    /** Relative path -> text, written into the run folder before every run of the task. */
    files: RunFilesSchema.optional(),
    /** The artifact and held-out check that decide success (verify/spec.ts); absent: read from the original. */
    verify: VerifySpecSchema.optional(),
    /** The hub models and datasets real mode must provide (src/env/hub/needs.ts); absent: derived from the script and args. */
    hub: HubNeedsSchema.optional(),
    /** Environment variables set for every run (SageMaker's `SM_*` and the like). */
    env: ScriptEnvSchema.optional(),
    /** Absolute folders the script writes to (SageMaker's `/opt/ml/model`), writable folders of the run inside the sandbox (RunMountsSchema). */
    mounts: RunMountsSchema.optional(),
    /** Runtime shims for every real-mode run (the CPU adaptations of GPU-only code, runtimeShims.ts); recorded by make-task. */
    runtime: TaskRuntimeSchema.optional(),
    /** make-task's provenance: each change it made to get the script running (taskmaking/provenance.ts). */
    adaptations: z.array(AdaptationSchema).optional(),
    /** make-task's verification: original runs, breakages checked, verified or not. */
    verdict: MakeTaskVerdictSchema.optional(),
    /** A natural-drift task: the original at a later snapshot where it fails for real (make-task --upgrade-to). */
    natural_drift: NaturalDriftSchema.optional(),
  })
  .strict();
export type TaskMetadata = z.infer<typeof TaskMetadataSchema>;

export const TaskMetadataFileSchema = z.array(TaskMetadataSchema).superRefine((entries, ctx) => {
  const seen = new Set<string>();
  entries.forEach((e, i) => {
    if (seen.has(e.task_id)) ctx.addIssue({ code: 'custom', path: [i, 'task_id'], message: `duplicate task_id "${e.task_id}"` });
    seen.add(e.task_id);
  });
});

/** Number of lines as Python's `str.splitlines()` counts them (the original ForgeEnv's rule). */
export function countLines(script: string): number {
  if (script.length === 0) return 0;
  // Python's own line breaks (str.splitlines), control characters included on purpose.
  // eslint-disable-next-line no-control-regex
  const parts = script.split(/\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/);
  // eslint-disable-next-line no-control-regex
  const endsWithBreak = /(?:\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029])$/.test(script);
  return endsWithBreak ? parts.length - 1 : parts.length;
}

/** < 30 lines easy, < 60 medium, else hard (all lines, blank and comment lines included). */
export function deriveDifficulty(script: string): Difficulty {
  const n = countLines(script);
  return n < 30 ? 'easy' : n < 60 ? 'medium' : 'hard';
}

type Rule = readonly [TaskCategory, RegExp];

// Checked in order, first match wins. Ids are matched as words (split on non-alphanumerics);
// scripts as lower-cased text, most specific API names first.
const ID_RULES: readonly Rule[] = [
  ['ner', /\b(ner|token classification|tokcls|conll\w*)\b/],
  ['seq2seq', /\b(seq2seq|t5|bart|summari[sz]\w*|translat\w*)\b/],
  ['qa', /\b(qa|squad\w*|question\w*)\b/],
  ['image_classification', /\b(vit|cifar\w*|image\w*|resnet)\b/],
  ['text_generation', /\b(gpt\w*|textgen|generation|causal\w*|clm|sft|llm|lm)\b/],
  ['regression', /\b(regression|regressor)\b/],
  ['tabular', /\b(mlp|mnist|tabular)\b/],
  ['text_classification', /\b(sentiment|sst2|imdb|classification|classifier|cls)\b/],
];
const SCRIPT_RULES: readonly Rule[] = [
  ['ner', /tokenclassification|token classification|ner_tags|seqeval|conll2003/],
  ['seq2seq', /seq2seq|conditionalgeneration|summariz|summaris|text_target|translation/],
  ['qa', /questionanswering|question answering|start_positions|squad/],
  ['image_classification', /imageclassification|image classification|imageprocessor|featureextractor|pixel_values|cifar/],
  ['text_classification', /sequenceclassification|sequence classification|sentiment|sst2|imdb|text classification/],
  ['text_generation', /causallm|lmheadmodel|sfttrainer|\.generate\(|text-generation|causal language/],
  ['regression', /regression|mseloss|mse_loss/],
  ['tabular', /\bmlp\b|mnist|tabular/],
];

/**
 * The task's category from keywords: first the id's words, then the script's text; `general` when
 * nothing matches. Decisions: MLPs on MNIST count as `tabular` (flat feature vectors, as in the
 * original's tiny_mlp_mnist); a script category only applies when the id says nothing.
 */
export function deriveCategory(script: string, taskId: string): TaskCategory {
  const idText = taskId
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();
  for (const [category, re] of ID_RULES) if (re.test(idText)) return category;
  const text = script.toLowerCase();
  for (const [category, re] of SCRIPT_RULES) if (re.test(text)) return category;
  return 'general';
}

/** The module docstring (first paragraph), else the first plain comment, else ''. */
export function describeScript(script: string): string {
  const lines = script.replace(/^\uFEFF/, '').split(/\r?\n/);
  let i = 0;
  const firstComment = (): string | undefined => {
    for (const line of lines) {
      const m = /^\s*#(?!!)\s*(.*\S)\s*$/.exec(line);
      if (m && !/^-\*-|coding[:=]/.test(m[1])) return m[1];
    }
    return undefined;
  };
  while (i < lines.length && (/^\s*$/.test(lines[i]) || /^\s*#/.test(lines[i]))) i++;
  const rest = lines.slice(i).join('\n');
  const m = /^[rRuU]?("""|''')([\s\S]*?)\1/.exec(rest) ?? /^[rRuU]?(["'])((?:\\.|(?!\1).)*)\1/.exec(rest);
  if (m) {
    const paragraph = m[2].trim().split(/\n\s*\n/)[0];
    const text = paragraph.replace(/\s+/g, ' ').trim();
    if (text) return text;
  }
  return firstComment() ?? '';
}

export interface LoadResult {
  tasks: Task[];
  problems: string[];
}

export function readMetadata(dir: string, problems: string[] = []): Map<string, TaskMetadata> {
  const file = join(dir, TASK_METADATA_FILE);
  const out = new Map<string, TaskMetadata>();
  const read = readFolderFile(dir, TASK_METADATA_FILE, MAX_TASK_METADATA_BYTES);
  if (!read.ok) {
    if (!read.missing) problems.push(`${read.problem}; metadata ignored`);
    return out;
  }
  const text = read.text;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    problems.push(`${file}: invalid JSON (${(e as Error).message}); metadata ignored`);
    return out;
  }
  const parsed = TaskMetadataFileSchema.safeParse(json);
  if (!parsed.success) {
    problems.push(`${file}: invalid task metadata (${formatZodError(parsed.error)}); metadata ignored`);
    return out;
  }
  for (const entry of parsed.data) out.set(entry.task_id, entry);
  return out;
}

/** The task a script and its metadata entry make (before validation with TaskSchema), as the loader builds it. */
export function taskCandidate(taskId: string, script: string, meta: TaskMetadata | undefined, source: string): Record<string, unknown> {
  const args = meta?.args ?? deriveScriptArgs(script).args;
  return {
    task_id: taskId,
    description: meta?.description ?? (describeScript(script) || `${taskId} training script`),
    script_content: script,
    difficulty: meta?.difficulty ?? deriveDifficulty(script),
    category: deriveCategory(script, taskId),
    expected_loss_range: meta?.expected_loss_range ?? DEFAULT_LOSS_RANGE,
    expected_accuracy_range: meta?.expected_accuracy_range ?? DEFAULT_ACCURACY_RANGE,
    library_versions: meta?.library_versions,
    ...(args.length ? { args } : {}),
    ...(meta?.files ? { files: meta.files } : {}),
    ...(meta?.verify ? { verify: meta.verify } : {}),
    ...(meta?.env ? { env: meta.env } : {}),
    ...(meta?.mounts?.length ? { mounts: meta.mounts } : {}),
    ...(meta?.runtime ? { runtime: meta.runtime } : {}),
    ...(meta?.hub ? { hub: meta.hub } : {}),
    ...(meta?.natural_drift ? { natural_drift: meta.natural_drift } : {}),
    tags: meta?.tags ?? [],
    source,
  };
}

/** Loads every `<task_id>.py` of `dir` (sorted by name), with metadata from its `tasks.json`. */
export function loadTaskFolder(dir: string, options: { source?: string } = {}): LoadResult {
  const source = options.source ?? dir;
  const problems: string[] = [];
  const tasks: Task[] = [];
  let names: string[];
  try {
    names = readdirSync(dir)
      .filter((n) => n.endsWith('.py'))
      .sort();
  } catch (e) {
    return { tasks, problems: [`${dir}: task folder cannot be read (${(e as Error).message})`] };
  }
  const metadata = readMetadata(dir, problems);
  const seen = new Set<string>();
  for (const name of names) {
    const file = join(dir, name);
    const taskId = name.slice(0, -'.py'.length);
    if (!TaskSchema.shape.task_id.safeParse(taskId).success) {
      problems.push(`${file}: "${taskId}" is not a valid task id (letters, digits, _ . - only); skipped`);
      continue;
    }
    const read = readFolderFile(dir, name, MAX_TASK_FILE_BYTES);
    if (!read.ok) {
      problems.push(`${read.problem}; skipped`);
      continue;
    }
    const script = read.text;
    const candidate = taskCandidate(taskId, script, metadata.get(taskId), source);
    const parsed = TaskSchema.safeParse(candidate);
    if (!parsed.success) {
      problems.push(`${file}: invalid task (${formatZodError(parsed.error)}); skipped`);
      continue;
    }
    seen.add(taskId);
    tasks.push(parsed.data);
  }
  for (const id of metadata.keys()) {
    if (!seen.has(id)) problems.push(`${join(dir, TASK_METADATA_FILE)}: entry "${id}" has no loaded script ${id}.py`);
  }
  return { tasks, problems };
}

/**
 * The built-in corpus first, then each extra folder (source = its absolute path). A user task whose
 * id is already taken is reported and skipped, so the built-in tasks can never be shadowed.
 */
export function loadCorpus(options: { extraDirs?: string[]; builtinDir?: string } = {}): LoadResult {
  const builtin = loadTaskFolder(options.builtinDir ?? tasksDir(), { source: 'builtin' });
  const tasks = [...builtin.tasks];
  const problems = [...builtin.problems];
  const owner = new Map(tasks.map((t) => [t.task_id, t.source] as const));
  for (const raw of options.extraDirs ?? []) {
    const dir = resolve(raw);
    const loaded = loadTaskFolder(dir, { source: dir });
    problems.push(...loaded.problems);
    for (const task of loaded.tasks) {
      const taken = owner.get(task.task_id);
      if (taken !== undefined) {
        problems.push(
          `${join(dir, `${task.task_id}.py`)}: task id "${task.task_id}" is already used by ${taken === 'builtin' ? 'the built-in corpus' : taken}; skipped`,
        );
        continue;
      }
      owner.set(task.task_id, task.source);
      tasks.push(task);
    }
  }
  return { tasks, problems };
}

/** Random access to a fixed list of tasks. */
export class TaskSampler {
  private readonly tasks: readonly Task[];
  private readonly byId: ReadonlyMap<string, Task>;

  constructor(tasks: Task[]) {
    this.tasks = [...tasks];
    this.byId = new Map(this.tasks.map((t) => [t.task_id, t] as const));
  }

  get all(): Task[] {
    return [...this.tasks];
  }

  getById(id: string): Task | undefined {
    return this.byId.get(id);
  }

  /** A task of `difficulty` (any task when none has it), chosen by `rng`. Throws on an empty corpus. */
  sample(rng: () => number, difficulty?: Difficulty): Task {
    if (this.tasks.length === 0) throw new Error('The task corpus is empty.');
    const pool = difficulty ? this.tasks.filter((t) => t.difficulty === difficulty) : this.tasks;
    const from = pool.length > 0 ? pool : this.tasks;
    return from[randomIndex(rng, from.length)];
  }
}
