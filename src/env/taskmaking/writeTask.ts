// Saving a made task: `<task_id>.py` and its entry merged into the folder's tasks.json. Each file is
// written atomically, the script first and tasks.json last (replaced whole, other entries kept); if
// the second write fails the script is removed again, so nothing is ever half-written. An existing
// tasks.json that cannot be read is never overwritten.
import { existsSync } from 'node:fs';
import { mkdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../../store/atomicWrite';
import { readFolderFile } from '../tasks/folderFile';
import { MAX_TASK_METADATA_BYTES } from '../limits';
import { tasksDir } from '../paths';
import { formatZodError, TaskSchema } from '../schemas';
import { TASK_METADATA_FILE, TaskMetadataFileSchema, type TaskMetadata } from '../tasks/tasks';

export class TaskWriteError extends Error {
  override readonly name = 'TaskWriteError';
}

/** The folder's entries; throws when tasks.json exists but is unusable. */
export function readEntries(dir: string): TaskMetadata[] {
  const read = readFolderFile(dir, TASK_METADATA_FILE, MAX_TASK_METADATA_BYTES);
  if (!read.ok) {
    if (read.missing) return [];
    throw new TaskWriteError(`${read.problem}; fix it first, it is not overwritten`);
  }
  let json: unknown;
  try {
    json = JSON.parse(read.text);
  } catch (e) {
    throw new TaskWriteError(
      `${join(dir, TASK_METADATA_FILE)} is not valid JSON (${(e as Error).message}); fix it first, it is not overwritten`,
    );
  }
  const parsed = TaskMetadataFileSchema.safeParse(json);
  if (!parsed.success)
    throw new TaskWriteError(
      `${join(dir, TASK_METADATA_FILE)} is not a valid task list (${formatZodError(parsed.error)}); fix it first, it is not overwritten`,
    );
  return parsed.data;
}

/** A task id from a file name, unique in `dir` (its scripts and entries) and among the built-in tasks (which would shadow it). */
export function uniqueTaskId(fileName: string, dir: string, entries: readonly TaskMetadata[]): string {
  let base =
    fileName
      .replace(/\.py$/, '')
      .replace(/[^A-Za-z0-9_.-]+/g, '_')
      .replace(/^[._-]+/, '') || 'task';
  if (!TaskSchema.shape.task_id.safeParse(base).success) base = 'task';
  const taken = (id: string) =>
    existsSync(join(dir, `${id}.py`)) || existsSync(join(tasksDir(), `${id}.py`)) || entries.some((e) => e.task_id === id);
  if (!taken(base)) return base;
  for (let i = 2; ; i++) if (!taken(`${base}_${i}`)) return `${base}_${i}`;
}

/** Writes the task; returns the paths written. */
export async function writeTask(dir: string, entry: TaskMetadata, script: string): Promise<{ scriptPath: string; metadataPath: string }> {
  await mkdir(dir, { recursive: true });
  const existing = readEntries(dir);
  const next = TaskMetadataFileSchema.safeParse([...existing.filter((e) => e.task_id !== entry.task_id), entry]);
  if (!next.success) throw new TaskWriteError(`the task entry is invalid: ${formatZodError(next.error)}`);
  const scriptPath = join(dir, `${entry.task_id}.py`);
  const metadataPath = join(dir, TASK_METADATA_FILE);
  await writeFileAtomic(scriptPath, script);
  try {
    await writeFileAtomic(metadataPath, JSON.stringify(next.data, null, 2) + '\n');
  } catch (e) {
    await unlink(scriptPath).catch(() => undefined);
    throw new TaskWriteError(`could not write ${metadataPath}: ${(e as Error).message}`);
  }
  return { scriptPath, metadataPath };
}
