// "Save as task": the lab's script becomes a task in a task folder: `<task_id>.py` (the
// unbroken original, so the environment can break it), an entry in the folder's `tasks.json`
// (validated with the corpus's own schema; an unreadable file is never overwritten) and the
// breakage spec beside it as `<task_id>.breakage.json` (tasks.json has no field for it). Each
// file is written atomically; if a later write fails the earlier ones are removed. No vscode import.
import { existsSync } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { readFolderFile } from '../../../env/tasks/folderFile';
import { MAX_TASK_METADATA_BYTES } from '../../../env/limits';
import {
  formatZodError,
  PrimitiveSpecSchema,
  TaskSchema,
  type Difficulty,
  type LibraryVersions,
  type PrimitiveSpec,
} from '../../../env/schemas';
import { TASK_METADATA_FILE, TaskMetadataFileSchema, type TaskMetadata } from '../../../env/tasks/tasks';
import { writeFileAtomic } from '../../../store/atomicWrite';

export const BREAKAGE_SUFFIX = '.breakage.json';

export class TaskSaveError extends Error {
  override readonly name = 'TaskSaveError';
}

/** A task id from a file name and a primitive: `train_rename_api_call`, made unique against `taken`. */
export function suggestTaskId(fileName: string, primitive: string, taken: ReadonlySet<string>): string {
  const stem =
    fileName
      .replace(/\.py$/, '')
      .replace(/[^A-Za-z0-9_.-]+/g, '_')
      .replace(/^[._-]+/, '') || 'task';
  const prim = primitive.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
  const base = `${stem}_${prim}`;
  if (!taken.has(base)) return base;
  for (let i = 2; ; i++) if (!taken.has(`${base}_${i}`)) return `${base}_${i}`;
}

/** Why `id` cannot be used in `dir`, or undefined. */
export function taskIdProblem(id: string, dir: string, taken: ReadonlySet<string>): string | undefined {
  const parsed = TaskSchema.shape.task_id.safeParse(id);
  if (!parsed.success) return `Task id: ${formatZodError(parsed.error)}`;
  if (taken.has(id)) return `A task "${id}" already exists`;
  if (existsSync(join(dir, `${id}.py`))) return `${id}.py already exists in ${dir}`;
  return undefined;
}

/** The folder's tasks.json entries; throws TaskSaveError when the file exists but is unusable. */
export function readTaskMetadata(dir: string): TaskMetadata[] {
  // Through readFolderFile, as the loader reads it: a tasks.json that is a link, a fifo or huge is
  // refused here too instead of being followed, blocked on or merged into the rewritten file.
  const read = readFolderFile(dir, TASK_METADATA_FILE, MAX_TASK_METADATA_BYTES);
  if (!read.ok) {
    if (read.missing) return [];
    throw new TaskSaveError(`${read.problem}; fix it first, it is not overwritten`);
  }
  const file = join(dir, TASK_METADATA_FILE);
  let json: unknown;
  try {
    json = JSON.parse(read.text);
  } catch (e) {
    throw new TaskSaveError(`${file} is not valid JSON (${(e as Error).message}); fix it first, it is not overwritten`);
  }
  const parsed = TaskMetadataFileSchema.safeParse(json);
  if (!parsed.success)
    throw new TaskSaveError(`${file} is not a valid task list (${formatZodError(parsed.error)}); fix it first, it is not overwritten`);
  return parsed.data;
}

export interface SaveTaskInput {
  dir: string;
  taskId: string;
  /** The unbroken script. */
  script: string;
  spec: PrimitiveSpec;
  description: string;
  versions?: LibraryVersions;
  tags?: string[];
  /** Task ids already used by the corpus and the task folders. */
  taken: ReadonlySet<string>;
}

export interface SavedTask {
  taskId: string;
  scriptPath: string;
  metadataPath: string;
  specPath: string;
}

export async function saveLabTask(input: SaveTaskInput): Promise<SavedTask> {
  const problem = taskIdProblem(input.taskId, input.dir, input.taken);
  if (problem) throw new TaskSaveError(problem);
  const spec = PrimitiveSpecSchema.parse(input.spec);
  const existing = readTaskMetadata(input.dir);
  if (existing.some((e) => e.task_id === input.taskId))
    throw new TaskSaveError(`${TASK_METADATA_FILE} already has an entry "${input.taskId}"`);
  const entry: TaskMetadata = {
    task_id: input.taskId,
    description: input.description,
    tags: [...new Set([...(input.tags ?? []), 'lab', `primitive:${spec.primitive_type}`])],
    ...(input.versions ? { library_versions: input.versions } : {}),
  };
  const next = TaskMetadataFileSchema.parse([...existing, entry]);
  const scriptPath = join(input.dir, `${input.taskId}.py`);
  const specPath = join(input.dir, `${input.taskId}${BREAKAGE_SUFFIX}`);
  const metadataPath = join(input.dir, TASK_METADATA_FILE);
  const written: string[] = [];
  try {
    await writeFileAtomic(scriptPath, input.script);
    written.push(scriptPath);
    await writeFileAtomic(
      specPath,
      JSON.stringify({ primitive_type: spec.primitive_type, category: spec.category, params: spec.params }, null, 2) + '\n',
    );
    written.push(specPath);
    // tasks.json last: it is the only file that existed before, and it is replaced whole.
    await writeFileAtomic(metadataPath, JSON.stringify(next, null, 2) + '\n');
  } catch (e) {
    await Promise.all(written.map((f) => unlink(f).catch(() => undefined)));
    throw new TaskSaveError(`Could not save the task in ${input.dir}: ${(e as Error).message}`);
  }
  return { taskId: input.taskId, scriptPath, metadataPath, specPath };
}

export interface SaveScriptTaskInput {
  dir: string;
  taskId: string;
  /** The working script, as the user wrote it. */
  script: string;
  description: string;
  /** argv after `train.py`; omitted when empty (the loader then derives them from the script). */
  args?: string[];
  /** Relative path -> text, written beside the script in every run. */
  files?: Record<string, string>;
  difficulty?: Difficulty;
  versions?: LibraryVersions;
  tags?: string[];
  taken: ReadonlySet<string>;
  /**
   * The task-making pipeline's entry (env, adaptations, verdict, hub, verify, …), saved as it is;
   * the fields above (the user's id, description, difficulty, snapshot, args, files, tags) go on top.
   */
  pipelineEntry?: TaskMetadata;
}

export interface SavedScriptTask {
  taskId: string;
  scriptPath: string;
  metadataPath: string;
}

/**
 * "Make task from this script": any working Python file becomes a task (its script and one tasks.json
 * entry with the run's args, extra files, difficulty and snapshot). The entry is validated with the
 * corpus's own schema, so a bad arg or file path is refused with the field named, before anything is written.
 */
export async function saveScriptTask(input: SaveScriptTaskInput): Promise<SavedScriptTask> {
  const problem = taskIdProblem(input.taskId, input.dir, input.taken);
  if (problem) throw new TaskSaveError(problem);
  const existing = readTaskMetadata(input.dir);
  if (existing.some((e) => e.task_id === input.taskId))
    throw new TaskSaveError(`${TASK_METADATA_FILE} already has an entry "${input.taskId}"`);
  const entry: TaskMetadata = {
    ...(input.pipelineEntry ?? {}),
    task_id: input.taskId,
    description: input.description,
    tags: [...new Set([...(input.pipelineEntry?.tags ?? []), ...(input.tags ?? []), 'user-script'])],
    ...(input.difficulty ? { difficulty: input.difficulty } : {}),
    ...(input.versions ? { library_versions: input.versions } : {}),
    ...(input.args?.length ? { args: input.args } : {}),
    ...(input.files && Object.keys(input.files).length ? { files: input.files } : {}),
  };
  const parsed = TaskMetadataFileSchema.safeParse([...existing, entry]);
  if (!parsed.success) throw new TaskSaveError(`The task is not valid: ${formatZodError(parsed.error)}`);
  const scriptPath = join(input.dir, `${input.taskId}.py`);
  const metadataPath = join(input.dir, TASK_METADATA_FILE);
  try {
    await writeFileAtomic(scriptPath, input.script);
  } catch (e) {
    throw new TaskSaveError(`Could not save the task in ${input.dir}: ${(e as Error).message}`);
  }
  try {
    await writeFileAtomic(metadataPath, JSON.stringify(parsed.data, null, 2) + '\n');
  } catch (e) {
    await unlink(scriptPath).catch(() => undefined);
    throw new TaskSaveError(`Could not save the task in ${input.dir}: ${(e as Error).message}`);
  }
  return { taskId: input.taskId, scriptPath, metadataPath };
}

/** Splits an args line the way a POSIX shell would for plain words and quotes (no expansion). */
export function splitArgsLine(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quote: '"' | "'" | undefined;
  let any = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === quote) quote = undefined;
      else if (c === '\\' && quote === '"' && i + 1 < line.length) cur += line[++i];
      else cur += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      any = true;
    } else if (c === '\\' && i + 1 < line.length) {
      cur += line[++i];
      any = true;
    } else if (/\s/.test(c)) {
      if (any || cur) out.push(cur);
      cur = '';
      any = false;
    } else {
      cur += c;
    }
  }
  if (quote) throw new TaskSaveError(`Unclosed ${quote} quote in the arguments`);
  if (any || cur) out.push(cur);
  return out;
}

/** The inverse of splitArgsLine, for showing args in an input box. */
export function joinArgsLine(args: readonly string[]): string {
  return args.map((a) => (/^[A-Za-z0-9_./:=@%+,-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ');
}
