// A person's successful repair of a natural-drift task of a user folder solves it: the repair
// becomes the task's reference (its oracle). Best effort: the demonstration is stored either way.
import type { RepairEvaluation } from '../../env/episode/episodeTypes';
import type { Task } from '../../env/schemas';
import { markNaturalDriftSolved } from '../../env/taskmaking/naturalDrift';

interface Log {
  info(message: string): void;
  warn(message: string): void;
}

export async function recordNaturalDriftSolved(task: Task, final: RepairEvaluation, log: Log): Promise<void> {
  if (!final.success || !task.natural_drift || task.natural_drift.solved || task.source === 'builtin') return;
  try {
    await markNaturalDriftSolved(task.source, task.task_id, final, 'human');
    log.info(`natural-drift task ${task.task_id} solved: the repair is recorded as its reference in ${task.source}`);
  } catch (e) {
    log.warn(`natural-drift task ${task.task_id} not marked solved: ${(e as Error).message}`);
  }
}
