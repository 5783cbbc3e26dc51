import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { buildQueue, nextTaskId, type QueueTaskInfo } from '../../../src/editor/episode/taskQueueModel';

const t = (task_id: string, difficulty: QueueTaskInfo['difficulty']): QueueTaskInfo => ({
  task_id,
  difficulty,
  description: task_id,
  category: 'general',
});
const tasks = [t('c_hard', 'hard'), t('a_easy', 'easy'), t('b_medium', 'medium'), t('d_easy', 'easy'), t('e_easy', 'easy')];

describe('buildQueue', () => {
  test('every task in exactly one group; submitted beats skipped; in progress beats both', () => {
    const q = buildQueue(tasks, {
      demonstrations: [
        { task_id: 'a_easy', visible_reward: 1.2 },
        { task_id: 'a_easy', visible_reward: 1.8 },
      ],
      skips: [{ task_id: 'a_easy' }, { task_id: 'b_medium' }, { task_id: 'e_easy' }],
      inProgressTaskId: 'e_easy',
    });
    assert.deepEqual(
      q.submitted.map((e) => e.task.task_id),
      ['a_easy'],
    );
    assert.equal(q.submitted[0].demonstrations, 2);
    assert.equal(q.submitted[0].bestReward, 1.8);
    assert.deepEqual(
      q.skipped.map((e) => e.task.task_id),
      ['b_medium'],
    );
    assert.deepEqual(
      q.inProgress.map((e) => e.task.task_id),
      ['e_easy'],
    );
    assert.deepEqual(
      q.todo.map((e) => e.task.task_id),
      ['d_easy', 'c_hard'],
      'easy first',
    );
    const all = [...q.todo, ...q.inProgress, ...q.submitted, ...q.skipped].map((e) => e.task.task_id).sort();
    assert.deepEqual(all, tasks.map((x) => x.task_id).sort());
  });

  test('next task: easiest to-do, then easiest skipped, then none', () => {
    assert.equal(nextTaskId(buildQueue(tasks, { demonstrations: [], skips: [] })), 'a_easy');
    const onlySkipped = buildQueue([t('x', 'hard'), t('y', 'easy')], {
      demonstrations: [{ task_id: 'y', visible_reward: 1 }],
      skips: [{ task_id: 'x' }],
    });
    assert.equal(nextTaskId(onlySkipped), 'x');
    assert.equal(nextTaskId(buildQueue([t('y', 'easy')], { demonstrations: [{ task_id: 'y', visible_reward: 1 }], skips: [] })), undefined);
  });
});
