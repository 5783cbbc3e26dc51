// Make Task as a new user meets it, in a real VS Code (simulated mode): two scripts written here go
// through the real questions into ONE task folder, Enter saves what each question highlights
// (the proposed folder, difficulty and snapshot), and an episode starts on each task without a
// reload; a task written into the folder by another tool is known once the watcher sees it, and
// Refresh Task Queue reloads the task list.
import * as assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { deriveDifficulty, loadTaskFolder, TASK_METADATA_FILE } from '../../src/env/tasks/tasks';
import { CORPUS_SNAPSHOT, snapshotVersions } from '../../src/env/snapshots/versions';
import type { StartResult } from '../../src/editor/episode/results';
import type { MadeTask } from '../../src/editor/lab/makeTask';
import { DEDICATED_TASK_FOLDER, LAST_TASK_FOLDER_KEY } from '../../src/editor/lab/taskFolderChoice';
import type { ForgeContext } from '../../src/editor/context';
import type { CommandResult } from '../../src/editor/commandArgs';
import { api, endAnyEpisode, ok, setSetting, timing, workspaceDir } from './helpers';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits for the next question matching `title` (asked after `after`), returns what it highlights. */
async function question(ctx: ForgeContext, title: RegExp, after: number): Promise<NonNullable<ForgeContext['lastQuestion']>> {
  for (let i = 0; i < 200; i++) {
    const q = ctx.lastQuestion;
    if (q && q.seq > after && title.test(q.title)) {
      await sleep(150); // the quick pick is shown; let the workbench render it before Enter
      return q;
    }
    await sleep(50);
  }
  assert.fail(`no question matching ${title} was asked`);
}

/** Enter on the quick pick: takes whatever VS Code highlights. */
const enter = () => vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');

suite('Make Task: two scripts into one task folder, an episode on each', () => {
  let ctx: ForgeContext;
  let scripts: string;
  let dedicated: string;
  let foldersBefore: string[] | undefined;
  const suffix = Date.now().toString(36);
  const ids = { review: `review_sentiment_${suffix}`, lm: `tiny_lm_${suffix}` };

  suiteSetup(async () => {
    const a = await api();
    ctx = a.context();
    await endAnyEpisode();
    await setSetting('executionMode', 'simulated');
    foldersBefore = vscode.workspace.getConfiguration('forgeenv').inspect<string[]>('taskFolders')?.workspaceValue;
    // The first Make Task of this workspace: nothing remembered, so the dedicated folder is proposed.
    await ctx.extension.workspaceState.update(LAST_TASK_FOLDER_KEY, undefined);
    dedicated = join(workspaceDir(), DEDICATED_TASK_FOLDER);
    rmSync(dedicated, { recursive: true, force: true });
    scripts = mkdtempSync(join(workspaceDir(), 'user-scripts-'));
    const fixtures = join(a.extension.extensionPath, 'test/fixtures/user-scripts');
    for (const f of ['review_sentiment.py', 'tiny_lm.py']) writeFileSync(join(scripts, f), readFileSync(join(fixtures, f), 'utf8'));
  });

  suiteTeardown(async () => {
    await endAnyEpisode();
    await setSetting('executionMode', undefined);
    await setSetting('taskFolders', foldersBefore);
    rmSync(dedicated, { recursive: true, force: true });
    rmSync(scripts, { recursive: true, force: true });
  });

  async function makeTask(file: string, taskId: string, extra: Record<string, unknown>, folderActive: RegExp): Promise<MadeTask> {
    await vscode.window.showTextDocument(vscode.Uri.file(join(scripts, file)));
    const before = ctx.lastQuestion?.seq ?? 0;
    const t0 = Date.now();
    const pending = vscode.commands.executeCommand<CommandResult<MadeTask>>('forgeenv.lab.makeTask', {
      taskId,
      files: [],
      confirm: true,
      start: false,
      ...extra,
    });
    const folder = await question(ctx, /save it in/, before);
    assert.match(folder.active ?? '', folderActive);
    await enter();
    if (!('difficulty' in extra)) {
      const q = await question(ctx, /difficulty/, folder.seq);
      const derived = deriveDifficulty(readFileSync(join(scripts, file), 'utf8'));
      assert.equal(q.active, derived, 'the derived difficulty is highlighted');
      await enter();
    }
    const snap = await question(ctx, /snapshot/, folder.seq);
    assert.equal(snap.active, CORPUS_SNAPSHOT, 'the proposed snapshot is highlighted');
    await enter();
    const r = await pending;
    assert.ok(r?.ok, `Make Task failed: ${r && !r.ok ? r.message : 'no result'}`);
    timing(`Make Task ${file} (questions + make-task's pipeline, simulated)`, Date.now() - t0);
    return r;
  }

  /**
   * Starts an episode on `id` with `primitive` (the task list must know it: no reload), checks it
   * opened, and that a breakage which does not break stays as a warning on the script; skips it.
   */
  async function episodeOn(
    id: string,
    primitive: { primitive_type: string; params: Record<string, unknown> },
    breaks: boolean,
  ): Promise<void> {
    assert.ok(ctx.tasks().getById(id), `${id} is known without a reload`);
    const t0 = Date.now();
    const r = await ok<StartResult>('forgeenv.startEpisode', { taskId: id, primitive });
    timing(`episode start on ${id}`, Date.now() - t0);
    try {
      await checkEpisode(r, id, breaks, primitive.primitive_type);
    } finally {
      await ok('forgeenv.skipEpisode', { reason: 'other', note: 'make task test' });
    }
  }

  async function checkEpisode(r: StartResult, id: string, breaks: boolean, primitiveType: string): Promise<void> {
    assert.equal(r.taskId, id);
    assert.equal(r.broke, breaks, `${primitiveType} ${breaks ? 'breaks' : 'does not break'} this script in simulated mode`);
    const active = vscode.window.activeTextEditor?.document;
    assert.ok(active && active.uri.fsPath.endsWith('train.py'), `the episode's script is open (${active?.uri.fsPath})`);
    // The episode's diagnostics link their code to the run output: { value, target }.
    const codeOf = (d: vscode.Diagnostic) => (typeof d.code === 'object' ? d.code.value : d.code);
    const note = vscode.languages.getDiagnostics(active.uri).find((d) => codeOf(d) === 'breakage-did-not-break');
    if (breaks) assert.equal(note, undefined, 'no "did not break" warning on a breakage that broke');
    else {
      assert.ok(note, 'the breakage that did not break stays on the script as a warning, not only in a toast');
      assert.equal(note.severity, vscode.DiagnosticSeverity.Warning);
      // ChangeDefaultValue removed `report_to="none",` from the TrainingArguments call: the note is in that call.
      const lines = active.getText().split('\n');
      const from = lines.findIndex((l) => l.startsWith('training_args = TrainingArguments('));
      const to = lines.indexOf(')', from);
      assert.ok(
        from >= 0 && note.range.start.line >= from && note.range.start.line <= to,
        `the note (line ${note.range.start.line}) is where the breakage changed the script (${from}-${to})`,
      );
    }
  }
  // Measured with the stand-ins (simulated, snapshot 2025-03): the first leaves the script running, the second breaks it.
  const NO_BREAK = {
    primitive_type: 'ChangeDefaultValue',
    params: { function: 'TrainingArguments', keyword: 'report_to', value: '"none"' },
  };
  const BREAKS = { primitive_type: 'RestructureDatasetSchema', params: { old_column: 'text', new_column: 'sentence' } };

  test('first script: Enter saves the highlighted folder (forgeenv-tasks/), difficulty and snapshot; an episode starts on it', async function () {
    this.timeout(120_000);
    const first = await makeTask(
      'review_sentiment.py',
      ids.review,
      { args: ['--model_name', 'distilbert-base-uncased'] },
      new RegExp(`^\\$\\(new-folder\\) .*${DEDICATED_TASK_FOLDER}$`),
    );
    assert.equal(first.metadataPath, join(dedicated, TASK_METADATA_FILE), 'saved in the dedicated folder, not the workspace root');
    assert.equal(first.verdict.originalRuns, true, `the original ran: ${first.verdict.lines.join(' ')}`);
    // What is saved is what make-task's pipeline decided: its adaptations and its verdict, as shown.
    const saved = (JSON.parse(readFileSync(first.metadataPath, 'utf8')) as Array<Record<string, unknown>>).find(
      (e) => e.task_id === ids.review,
    ) as
      | {
          adaptations?: Array<{ rule: string; change: string }>;
          verdict?: { mode: string; verified: boolean; original_runs: { verified: number; of: number } };
          args?: string[];
        }
      | undefined;
    assert.ok(saved?.verdict, "the pipeline's verdict is saved in the entry");
    assert.equal(saved.verdict.mode, 'simulated');
    assert.equal(saved.verdict.verified, first.verdict.verified, 'the saved verdict is the one shown');
    assert.ok(saved.verdict.original_runs.of >= 3, 'verification ran the original (3 times)');
    assert.deepEqual(
      (saved.adaptations ?? []).map((x) => `${x.rule}: ${x.change}`),
      first.adaptations.map((x) => `${x.rule}: ${x.change}`),
      'the saved adaptations are the ones shown',
    );
    assert.ok(first.adaptations.length > 0, 'the pipeline bounded the run through the parser (an adaptation)');
    assert.deepEqual(
      saved.args?.slice(0, 2),
      ['--model_name', 'distilbert-base-uncased'],
      "the user's args are where the pipeline started",
    );
    const review = loadTaskFolder(dedicated).tasks.find((t) => t.task_id === ids.review);
    assert.ok(review);
    assert.equal(review.difficulty, 'medium', 'what was highlighted (33 lines: medium), not the first item');
    assert.deepEqual(review.library_versions, snapshotVersions(CORPUS_SNAPSHOT), 'what was highlighted, not the first snapshot');
    const folders = vscode.workspace.getConfiguration('forgeenv').get<string[]>('taskFolders') ?? [];
    assert.ok(folders.includes(dedicated), 'the folder joins forgeenv.taskFolders');
    // The task list is loaded now (the episode reads it): the second task must not wait for a reload.
    await episodeOn(ids.review, NO_BREAK, false);
  });

  test('second script into the same folder (asked again, last answer highlighted): known at once, an episode starts on it', async function () {
    this.timeout(120_000);
    const second = await makeTask(
      'tiny_lm.py',
      ids.lm,
      { args: ['--model_name_or_path', 'gpt2', '--output_dir', 'out'], difficulty: 'easy' },
      /^\$\(history\) .*forgeenv-tasks$/,
    );
    assert.equal(second.metadataPath, join(dedicated, TASK_METADATA_FILE), 'both tasks in one task folder');
    const entries = JSON.parse(readFileSync(second.metadataPath, 'utf8')) as Array<Record<string, unknown>>;
    assert.deepEqual(entries.map((e) => e.task_id).sort(), [ids.review, ids.lm].sort());
    // Nothing the verifier replaced comes back with a made task: no printed-metric ranges.
    for (const e of entries) {
      assert.equal(e.expected_loss_range, undefined);
      assert.equal(e.expected_accuracy_range, undefined);
    }
    await episodeOn(ids.lm, BREAKS, true);
    // And the first one again, still there, in the same window.
    await episodeOn(ids.review, BREAKS, true);
  });

  test('a task another tool writes into the folder is known once the watcher sees it; Refresh Task Queue reloads at once', async function () {
    this.timeout(30_000);
    const watched = `watched_${suffix}`;
    writeFileSync(join(dedicated, `${watched}.py`), readFileSync(join(scripts, 'tiny_lm.py'), 'utf8'));
    let known = false;
    for (let i = 0; i < 100 && !known; i++) {
      known = !!ctx.tasks().getById(watched);
      if (!known) await sleep(100);
    }
    assert.ok(known, 'the file watcher reloaded the task list');
    const refreshed = `refreshed_${suffix}`;
    writeFileSync(join(dedicated, `${refreshed}.py`), readFileSync(join(scripts, 'tiny_lm.py'), 'utf8'));
    await ok('forgeenv.refreshTaskQueue');
    assert.ok(ctx.tasks().getById(refreshed), 'known right after Refresh Task Queue');
    assert.ok(existsSync(join(dedicated, `${refreshed}.py`)));
  });
});

suite('Make Task: real mode interpreter question', () => {
  let ctx: ForgeContext;
  const config = () => vscode.workspace.getConfiguration('forgeenv');
  let before: { mode: unknown; path: unknown };

  suiteSetup(async () => {
    ctx = (await api()).context();
    before = { mode: config().inspect('executionMode')?.globalValue, path: config().inspect('pythonPath')?.globalValue };
    // The command writes user settings: no workspace value may hide them.
    await setSetting('executionMode', undefined);
    await setSetting('pythonPath', undefined);
  });
  suiteTeardown(async () => {
    await config().update('executionMode', before.mode, vscode.ConfigurationTarget.Global);
    await config().update('pythonPath', before.path, vscode.ConfigurationTarget.Global);
  });

  test("Enter keeps the current mode, then takes the snapshot's managed environment; python3 without transformers is flagged", async function () {
    this.timeout(60_000);
    await ok('forgeenv.configureExecution', { mode: 'real', pythonPath: 'python3' });
    const seq = ctx.lastQuestion?.seq ?? 0;
    const pending = vscode.commands.executeCommand<CommandResult<{ mode: string; pythonPath: string }>>('forgeenv.configureExecution');
    const mode = await question(ctx, /execution mode/, seq);
    assert.equal(mode.active, 'real', 'the current mode is highlighted');
    await enter();
    const which = await question(ctx, /Python for real mode/, mode.seq);
    assert.match(which.active ?? '', /managed environment of snapshot/, 'the managed environment is the highlighted default');
    assert.ok(
      !which.items.some((i) => /Python extension/.test(i.label)),
      "real mode does not offer the Python extension's interpreter (it would be ignored)",
    );
    const onPath = which.items.find((i) => /python3 on PATH/.test(i.label));
    assert.ok(onPath);
    // What python3 on PATH really lacks on this machine, probed the same way, must be said.
    const { probeLibraries } = await import('../../src/env/run/realMode');
    const probe = await probeLibraries('python3');
    if (probe.ok && probe.missing.length)
      assert.match(onPath.detail ?? '', new RegExp(`Not usable for real mode: cannot import ${probe.missing.join(', ')}`));
    else assert.doesNotMatch(onPath.detail ?? '', /Not usable/);
    await enter();
    const r = await pending;
    assert.ok(r?.ok);
    assert.equal(r.mode, 'real');
    assert.equal(r.pythonPath, '', 'no interpreter set: the managed environment');
  });
});
