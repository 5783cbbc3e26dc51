// The repair session without VS Code: a plain-object EpisodeEditor, the real embedded environment
// (simulated mode, a real Python), a real dataset folder. Start → edit → Run & Score → Submit lands
// one validated JSONL line with the edits' timeline; cancelled pickers say so; a new session
// resumes the open episode from the saved state.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { loadCorpus, TaskSampler } from '../../../src/env/tasks/tasks';
import { JsonFileTeacherStore } from '../../../src/env/episode/teacher';
import { probeInterpreter } from '../../../src/env/run/executor';
import type { EditorActivity, EpisodeEditor, EpisodeView } from '../../../src/editor/episode/editorPort';
import { PendingWrites, type KeyValueStore } from '../../../src/editor/episode/pendingWrites';
import { RepairSession } from '../../../src/editor/episode/session';
import { discardRevision, startRevision } from '../../../src/editor/episode/revisionStart';
import type { SessionServices } from '../../../src/editor/episode/services';
import { defaultSettings } from '../../../src/editor/settingsSchema';
import { DemonstrationRecordSchema } from '../../../src/store/records';

const root = mkdtempSync(join(tmpdir(), 'forgeenv-session-'));
after(() => rmSync(root, { recursive: true, force: true }));
const tasks = new TaskSampler(loadCorpus().tasks);
const TASK = 'distilbert_sst2';
const PRIMITIVE = { primitive_type: 'RenameApiCall', params: { old_name: 'DataCollatorWithPadding', new_name: 'DataCollatorPadding' } };

function memento(): KeyValueStore {
  const data = new Map<string, unknown>();
  return {
    get: <T>(k: string) => structuredClone(data.get(k)) as T | undefined,
    update: async (k, v) => void (v === undefined ? data.delete(k) : data.set(k, structuredClone(v))),
  };
}

/** The editor as a test sees it: buffers in a map, answers queued, everything shown recorded. */
class FakeEditor implements EpisodeEditor {
  buffers = new Map<string, string>();
  answers: { task?: string; breakage?: null; failingSubmit?: boolean } = {};
  messages: Array<{ kind: string; message: string }> = [];
  problems = new Map<string, number>();
  views: Array<EpisodeView | 'starting' | undefined> = [];
  closed: string[] = [];
  listeners: EditorActivity[] = [];
  chooseTask = async () => this.answers.task;
  chooseBreakage = async () => this.answers.breakage;
  chooseSkip = async () => undefined;
  confirmFailingSubmit = async () => this.answers.failingSubmit ?? false;
  withProgress = <T>(_title: string, work: (signal: AbortSignal, report: (m: string) => void) => Promise<T>) =>
    work(new AbortController().signal, () => undefined);
  info = (message: string) => void this.messages.push({ kind: 'info', message });
  warn = (message: string) => void this.messages.push({ kind: 'warn', message });
  error = (message: string) => void this.messages.push({ kind: 'error', message });
  openScript = async (file: string) => void (this.buffers.has(file) || this.buffers.set(file, readFileSync(file, 'utf8')));
  readScript = async (file: string) => this.buffers.get(file) ?? readFileSync(file, 'utf8');
  closeEpisodeEditors = async (_id: string, file: string) => void this.closed.push(file);
  watchScript = (_file: string, l: EditorActivity) => (
    this.listeners.push(l),
    { dispose: () => (this.listeners = this.listeners.filter((x) => x !== l)) }
  );
  setBrokenScript = () => undefined;
  setRunOutput = () => undefined;
  forgetEpisode = () => undefined;
  runOutput = () => ({ write: () => undefined, flush: () => undefined });
  showProblems = (file: string, specs: readonly unknown[]) => void this.problems.set(file, specs.length);
  clearProblems = (file: string) => void this.problems.delete(file);
  render = (v: EpisodeView | 'starting' | undefined) => void this.views.push(v);
  episodeStarting = async () => undefined;

  /** Types `text` over the whole buffer, as the editor's change event reports it. */
  type(file: string, text: string): void {
    this.buffers.set(file, text);
    for (const l of this.listeners) l.onChange(2, [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, text }]);
  }
}

function services(name: string, state: KeyValueStore): SessionServices & { commands: string[] } {
  const commands: string[] = [];
  return {
    commands,
    settings: () => ({ ...defaultSettings(), annotatorId: 'tester' }),
    tasks: () => tasks,
    taskDirs: () => [],
    datasetDir: () => join(root, name, 'dataset'),
    episodesDir: () => join(root, name, 'episodes'),
    state,
    pending: new PendingWrites(memento()),
    reportWriteFailure: (o) => assert.fail(`write failed: ${o.error}`),
    queue: { nextTaskId: async () => TASK, refresh: () => undefined },
    resolveInterpreter: async () => ({ interpreter: 'python3', source: 'default' }),
    probeInterpreter,
    teacherStore: () => new JsonFileTeacherStore(join(root, name, 'teacher.json'), () => undefined),
    command: (id) => void commands.push(id),
    sandboxWarning: () => undefined,
    log: { info: () => undefined, warn: () => undefined, error: () => undefined },
    sessionId: 'session-test',
    extensionVersion: '0.0.0-test',
    client: { app: 'unit test', vscode_version: '0', ui_kind: 'desktop' },
  };
}

describe('RepairSession (no VS Code)', () => {
  test('start, edit, Run & Score, Submit: one validated demonstration with the edit timeline', async () => {
    const editor = new FakeEditor();
    const s = services('loop', memento());
    const session = new RepairSession(editor, s);
    const start = await session.start({ taskId: TASK, seed: 7, primitive: PRIMITIVE });
    assert.ok(start.ok, JSON.stringify(start));
    assert.equal(start.broke, true, 'the renamed import makes train.py fail');
    assert.ok(start.diagnostics >= 1);
    assert.equal(editor.problems.get(start.filePath), start.diagnostics, 'the traceback is shown on train.py');
    assert.equal(session.current?.episodeId, start.episodeId);

    const broken = readFileSync(start.filePath, 'utf8');
    const fixed = broken.replace(/DataCollatorPadding/g, 'DataCollatorWithPadding');
    assert.notEqual(fixed, broken);
    editor.type(start.filePath, fixed);
    const scored = await session.runAndScore();
    assert.ok(scored.ok, JSON.stringify(scored));
    assert.equal(scored.success, true);
    assert.equal(scored.run, 1);

    const submitted = await session.submit();
    assert.ok(submitted.ok, JSON.stringify(submitted));
    assert.equal(submitted.stored, true);
    assert.equal(session.current, undefined, 'the episode ended');
    assert.deepEqual(editor.closed, [start.filePath], "the episode's editors were closed");
    assert.equal(editor.problems.has(start.filePath), false, 'its diagnostics were cleared');
    assert.equal(s.state.get('forgeenv.episode'), undefined, 'nothing left to resume');

    const lines = readFileSync(join(s.datasetDir(), 'demonstrations.jsonl'), 'utf8').trim().split('\n');
    assert.equal(lines.length, 1);
    const rec = DemonstrationRecordSchema.parse(JSON.parse(lines[0]));
    assert.equal(rec.info.record_id, submitted.recordId);
    assert.equal(rec.success, true);
    assert.match(rec.repair_completion, /^--- a\/train\.py/m, 'the completion is the raw diff');
    assert.match(rec.repair_completion, /\+from transformers import .*DataCollatorWithPadding/);
    assert.equal(rec.info.annotator_id, 'tester');
    const timeline = readFileSync(join(s.datasetDir(), rec.info.timeline_file), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { kind: string; event?: string });
    assert.deepEqual(
      timeline.filter((e) => e.kind !== 'focus' && e.kind !== 'blur').map((e) => e.event ?? e.kind),
      ['change', 'run', 'submit'],
      'the typed edit, the run and the submit, in order',
    );
  });

  test('a cancelled picker says why nothing started', async () => {
    const editor = new FakeEditor();
    const session = new RepairSession(editor, services('cancel', memento()));
    const r = await session.start();
    assert.equal(r.ok, false);
    assert.equal(!r.ok && r.reason, 'cancelled');
    assert.match(editor.messages.at(-1)?.message ?? '', /No episode started: no task was chosen/);
    editor.answers.task = TASK;
    const r2 = await session.start();
    assert.equal(!r2.ok && r2.reason, 'cancelled');
    assert.match(editor.messages.at(-1)?.message ?? '', /no breakage was chosen for distilbert_sst2/);
    assert.equal(session.current, undefined);
  });

  test('the score view keeps the skipped state: closing the script (a focus change) does not re-render the live episode', async () => {
    const editor = new FakeEditor();
    // As in VS Code: closing the episode's tab changes the active editor, which reaches the episode's focus listener.
    editor.closeEpisodeEditors = async (_id: string, file: string) => {
      editor.closed.push(file);
      for (const l of editor.listeners) l.onFocus(false, false);
    };
    const session = new RepairSession(editor, services('skip', memento()));
    const start = await session.start({ taskId: TASK, seed: 5, primitive: PRIMITIVE });
    assert.ok(start.ok, JSON.stringify(start));
    const skipped = await session.skip({ reason: 'too_hard' });
    assert.ok(skipped.ok && skipped.stored, JSON.stringify(skipped));
    assert.deepEqual(editor.closed, [start.filePath]);
    const shown = editor.views.filter((v): v is EpisodeView => typeof v === 'object');
    assert.equal(
      shown.at(-1)?.score,
      'skipped',
      `last score state shown: ${shown
        .slice(-3)
        .map((v) => v.score)
        .join(' → ')}`,
    );
    assert.equal(editor.views.at(-1), undefined, 'the episode views end idle');
  });

  test('a failing repair is not submitted unless confirmed, and a new session resumes the episode', async () => {
    const editor = new FakeEditor();
    const state = memento();
    const s = services('resume', state);
    const session = new RepairSession(editor, s);
    const start = await session.start({ taskId: TASK, seed: 3, primitive: PRIMITIVE });
    assert.ok(start.ok);
    const refused = await session.submit();
    assert.equal(!refused.ok && refused.reason, 'cancelled', 'the default answer keeps editing');
    assert.equal(session.current?.episodeId, start.episodeId, 'the episode is still open');
    await session.suspend();

    const editor2 = new FakeEditor();
    const resumed = new RepairSession(editor2, { ...s, pending: new PendingWrites(memento()) });
    const r = await resumed.restore();
    assert.ok(r.ok && r.episodeId === start.episodeId, JSON.stringify(r));
    assert.equal(resumed.current?.state.runs, 1, 'the refused submit still scored once');
    assert.ok((editor2.problems.get(start.filePath) ?? 0) >= 1, 'diagnostics shown again');
    editor2.answers.failingSubmit = true;
    const forced = await resumed.submit();
    assert.ok(forced.ok && forced.stored && forced.success === false);
    await resumed.suspend();
  });

  test('a revision is a mode of the session: rebuilt from the record, Submit supersedes it through the same write path', async () => {
    const editor = new FakeEditor();
    const s = services('revision', memento());
    const session = new RepairSession(editor, s);
    const start = await session.start({ taskId: TASK, seed: 11, primitive: PRIMITIVE });
    assert.ok(start.ok, JSON.stringify(start));
    const fixed = readFileSync(start.filePath, 'utf8').replace(/DataCollatorPadding/g, 'DataCollatorWithPadding');
    editor.type(start.filePath, fixed);
    const first = await session.submit();
    assert.ok(first.ok && first.stored, JSON.stringify(first));
    const demos = () =>
      readFileSync(join(s.datasetDir(), 'demonstrations.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => DemonstrationRecordSchema.parse(JSON.parse(l)));
    const previous = demos()[0];

    const opened = await startRevision(session, { previous, datasetDir: s.datasetDir() }, { open: true });
    assert.ok(opened.ok, JSON.stringify(opened));
    assert.equal(opened.revision, 2);
    assert.equal(readFileSync(opened.file, 'utf8'), fixed, 'train.py holds the recorded repair');
    assert.equal(session.current?.state.revision?.previous.info.record_id, previous.info.record_id);
    // One repair loop: no episode starts beside it, and a revision is discarded, never skipped.
    const other = await session.start({ taskId: TASK, seed: 1, primitive: PRIMITIVE });
    assert.ok(!other.ok && other.reason === 'episode_open' && /revision/.test(other.message), JSON.stringify(other));
    const skipped = await session.skip({ reason: 'other' });
    assert.ok(!skipped.ok && skipped.reason === 'invalid_args');
    // The recorded repair again: refused before scoring, the revision stays open.
    const same = await session.submit();
    assert.ok(!same.ok && same.reason === 'unchanged' && /identical/.test(same.message), JSON.stringify(same));
    assert.ok(session.current, 'still open');

    const revised = fixed + '# checked by hand\n';
    editor.type(opened.file, revised);
    const stored = await session.submit();
    assert.ok(stored.ok && stored.stored, JSON.stringify(stored));
    assert.equal(stored.revision, 2);
    assert.equal(stored.supersedes, previous.info.record_id);
    assert.equal(session.current, undefined);
    const all = demos();
    assert.equal(all.length, 2);
    assert.deepEqual(all[0], previous, 'the old line is unchanged');
    const rec = all[1];
    assert.equal(rec.info.record_id, stored.recordId);
    assert.equal(rec.info.supersedes, previous.info.record_id);
    assert.equal(rec.info.task_hash, previous.info.task_hash);
    assert.equal(rec.info.episode_id, previous.info.episode_id);
    assert.equal(rec.info.timeline_file, `timelines/${previous.info.episode_id}.r2.jsonl`);
    assert.match(rec.repair_completion, /\+# checked by hand/);
    const events = readFileSync(join(s.datasetDir(), rec.info.timeline_file), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { kind: string; event?: string });
    assert.deepEqual(
      events.filter((e) => e.event).map((e) => e.event),
      ['revision_start', 'submit'],
    );

    // Discard: nothing is written, the current record stays current.
    const again = await startRevision(session, { previous: rec, datasetDir: s.datasetDir() }, { open: false });
    assert.ok(again.ok && again.revision === 3, JSON.stringify(again));
    const discarded = await discardRevision(session);
    assert.ok(discarded.ok && /^Revision 3 of .* discarded; revision 2 is unchanged/.test(discarded.message), JSON.stringify(discarded));
    assert.equal(session.current, undefined);
    assert.equal(demos().length, 2);
    assert.equal((await discardRevision(session)).ok, false);
  });
});
