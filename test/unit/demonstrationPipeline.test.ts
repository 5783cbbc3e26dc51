// The one builder and write path of demonstrations (src/store/demonstrationBuilder.ts,
// src/store/episodeWriter.ts) and how old fenced completions are read.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { isFencedCompletion, rawCompletion } from '../../src/store/completion';
import { DatasetStore } from '../../src/store/datasetStore';
import {
  breakageFailed,
  buildDemonstration,
  createDemonstrationRecord,
  IdenticalRevisionError,
  timelineFileFor,
} from '../../src/store/demonstrationBuilder';
import { saveEpisodeAs, storeEpisode } from '../../src/store/episodeWriter';
import { recordHash } from '../../src/store/hashing';
import { fencedDiff } from '../../src/store/export/formats';
import { RecordValidationError } from '../../src/store/jsonlFile';
import type { RepairEvaluation } from '../../src/env/episode/episodeTypes';
import { diffOf, makeDemo, provenance, tempDir } from './storeTestUtils';

const DIFF = diffOf(1, 1);

function facts(exitCode: number | null) {
  return {
    episodeId: 'ep-facts',
    seed: 3,
    task: { task_id: 'task_a' },
    libraryVersions: { transformers: '4.50.0' },
    targetCategory: 'RenameApiCall',
    breakageSpec: { primitive_type: 'RenameApiCall', params: { old_name: 'a', new_name: 'b' } },
    originalScript: 'print(1)\n',
    brokenExecution: { exit_code: exitCode, timed_out: false },
    driftPrompt: 'drift',
    driftCompletion: '{}',
    repairPrompt: 'repair',
  };
}

function evaluation(diff: string, success = true): RepairEvaluation {
  return {
    unified_diff: diff,
    apply: { ok: true, mode: 'strict', warnings: [] },
    repaired_script: 'print(1)\n',
    reward: success ? 1.8 : 0,
    reward_breakdown: { script_executes: success ? 1 : 0 },
    held_out_breakdown: { executed_cleanly: success ? 1 : 0 },
    success,
    error_trace: '',
    findings: [],
    execution: null,
  };
}

describe('completions are stored raw', () => {
  test('a whole fenced block is unwrapped; a raw diff and prose are left alone', () => {
    assert.equal(rawCompletion('```diff\n' + DIFF + '```\n'), DIFF);
    assert.equal(rawCompletion(fencedDiff(DIFF)), DIFF);
    assert.equal(rawCompletion('````diff\n' + DIFF + '+```\n````'), DIFF + '+```\n');
    assert.equal(rawCompletion(DIFF), DIFF);
    const prose = 'Here:\n```diff\n' + DIFF + '```\n';
    assert.equal(rawCompletion(prose), prose);
    const trailing = '```diff\n' + DIFF + '```\nthanks';
    assert.equal(rawCompletion(trailing), trailing);
    assert.equal(isFencedCompletion('```\n' + DIFF + '```'), true);
  });

  test('the builder stores a fenced completion raw, hashed as stored', () => {
    const rec = makeDemo({ n: 1, diff: '```diff\n' + DIFF + '```\n' });
    assert.equal(rec.repair_completion, DIFF);
    assert.equal(rec.info.record_hash, recordHash(rec.info.task_hash, DIFF));
  });

  test('an old fenced line is read raw, and its line on disk is never rewritten', async () => {
    const dir = tempDir();
    const old = makeDemo({ n: 2 });
    const fenced = '```diff\n' + DIFF + '```\n';
    // An old writer's line: the fenced text, hashed as it was stored.
    const line = JSON.stringify({
      ...old,
      repair_completion: fenced,
      info: { ...old.info, record_hash: recordHash(old.info.task_hash, fenced) },
    });
    writeFileSync(join(dir, 'demonstrations.jsonl'), line + '\n');
    const snap = await new DatasetStore(dir).readAll();
    assert.equal(snap.problems.length, 0, JSON.stringify(snap.problems));
    assert.equal(snap.demonstrations.all[0].repair_completion, DIFF);
    assert.equal(readFileSync(join(dir, 'demonstrations.jsonl'), 'utf8'), line + '\n');
  });
});

describe('buildDemonstration', () => {
  test('records whether the breakage made the script fail', () => {
    const failed = buildDemonstration({ start: facts(1), final: evaluation(DIFF), provenance: provenance() });
    assert.equal(failed.info.breakage_failed, true);
    assert.equal(breakageFailed(failed), true);
    const ran = buildDemonstration({ start: facts(0), final: evaluation(DIFF), provenance: provenance() });
    assert.equal(ran.info.breakage_failed, false);
    assert.equal(breakageFailed(ran), false);
    assert.equal(breakageFailed(makeDemo({ n: 3 })), undefined, 'records from before the flag: unknown');
  });

  test('a revision gets its own timeline file; an identical revision is refused', () => {
    const first = buildDemonstration({ start: facts(1), final: evaluation(DIFF), provenance: provenance() });
    assert.equal(first.info.timeline_file, timelineFileFor('ep-facts'));
    assert.throws(
      () => buildDemonstration({ start: facts(1), final: evaluation(DIFF), provenance: provenance(), previous: first }),
      IdenticalRevisionError,
    );
    // Reopening rebuilds the episode under a new environment episode id; the revision keeps the original's.
    const second = buildDemonstration({
      start: { ...facts(1), episodeId: 'ep-rebuilt' },
      final: evaluation(diffOf(2, 1)),
      provenance: provenance(),
      previous: first,
    });
    assert.equal(second.info.revision, 2);
    assert.equal(second.info.episode_id, 'ep-facts');
    assert.equal(second.info.timeline_file, 'timelines/ep-facts.r2.jsonl');
    assert.notEqual(second.info.timeline_file, first.info.timeline_file);
  });
});

describe('storeEpisode / saveEpisodeAs', () => {
  const events = [
    { t_ms: 0, kind: 'focus' as const },
    { t_ms: 5, kind: 'run' as const, n: 1 },
  ];

  test("timeline under the record's own timeline file, then the record", async () => {
    const dir = tempDir();
    const first = makeDemo({ n: 10 });
    const second = createDemonstrationRecord({ ...argsOf(first), rollout: { ...first, repair_completion: diffOf(3, 1) }, previous: first });
    await storeEpisode(dir, { kind: 'demonstration', record: first, timeline: events });
    await storeEpisode(dir, { kind: 'demonstration', record: second, timeline: events.slice(0, 1) });
    assert.equal(readFileSync(join(dir, first.info.timeline_file), 'utf8').trim().split('\n').length, 2);
    assert.equal(readFileSync(join(dir, second.info.timeline_file), 'utf8').trim().split('\n').length, 1, "the revision's own events");
    const snap = await new DatasetStore(dir).readAll();
    assert.deepEqual(
      snap.demonstrations.current.map((r) => r.info.record_id),
      [second.info.record_id],
    );
  });

  test('a tampered record is refused before anything is written', async () => {
    const dir = tempDir();
    const rec = makeDemo({ n: 11 });
    await assert.rejects(
      storeEpisode(dir, { kind: 'demonstration', record: { ...rec, repair_completion: diffOf(5, 5) }, timeline: events }),
      RecordValidationError,
    );
    assert.equal(existsSync(join(dir, 'timelines')), false);
    assert.equal(existsSync(join(dir, 'demonstrations.jsonl')), false);
  });

  test('Save As applies the same checks and appends a valid line plus its timeline', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'out'));
    const file = join(dir, 'out', 'demonstration-ep.jsonl');
    const rec = makeDemo({ n: 12 });
    await saveEpisodeAs(file, { kind: 'demonstration', record: rec, timeline: events });
    await assert.rejects(
      saveEpisodeAs(file, { kind: 'demonstration', record: { ...rec, success: 'yes' }, timeline: [] }),
      RecordValidationError,
    );
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    assert.equal(lines.length, 1);
    assert.equal(JSON.parse(lines[0]).info.record_id, rec.info.record_id);
    assert.equal(
      readFileSync(join(dir, 'out', 'demonstration-ep.timeline.jsonl'), 'utf8')
        .trim()
        .split('\n').length,
      2,
    );
  });
});

function argsOf(rec: ReturnType<typeof makeDemo>) {
  return {
    originalScript: `# script of ${rec.task_id}\nprint("hello")\n`,
    episodeId: rec.info.episode_id,
    seed: rec.info.seed,
    primitive: rec.info.primitive,
    libraryVersions: rec.info.library_versions,
    provenance: provenance(),
  };
}
