// Drift primitives in the editor (issue 4), in a real VS Code: the quick pick follows the
// registry, applying shows original ↔ broken without touching the file, the broken side runs
// with diagnostics, the inverse restores, Save as task, code actions, the batch check view and
// library snapshot drift.
import * as assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { checkPrimitives } from '../../src/env/primitives/checkPrimitives';
import { applicablePrimitives, applySpec } from '../../src/env/primitives/registry';
import { loadCorpus, loadTaskFolder } from '../../src/env/tasks/tasks';
import { snapshotVersions } from '../../src/env/snapshots/versions';
import { getSnapshot } from '../../src/env/snapshots/registry';
import { intersectingCandidates } from '../../src/editor/lab/core/applicability';
import { CheckExportSchema } from '../../src/editor/lab/core/checkResults';
import type { ApplyOutcome } from '../../src/editor/lab/applyPrimitive';
import type { RunBrokenResult } from '../../src/editor/lab/labActions';
import type { SnapshotDriftResult } from '../../src/editor/lab/snapshotDrift';
import type { PrimitivePickItem } from '../../src/editor/lab/core/prefill';
import type { InverseCheck } from '../../src/editor/lab/core/inverseCheck';
import type { CheckRow, CheckSummary } from '../../src/env/primitives/checkPrimitives';
import type { SavedTask } from '../../src/editor/lab/core/taskWriter';
import type { StartResult } from '../../src/editor/episode/results';
import { api, endAnyEpisode, ok, setSetting, timing, workspaceDir } from './helpers';

type ChecksSnapshot = {
  status: string;
  groups: Array<{ label: string; description: string; rows: Array<{ label: string; description: string; status: string }> }>;
};

function activeDiff(): vscode.TabInputTextDiff | undefined {
  const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
  return input instanceof vscode.TabInputTextDiff ? input : undefined;
}

suite('Lab: drift primitives in the editor', () => {
  let root: string;
  let base: string;
  const files: Array<{ name: string; path: string; text: string }> = [];
  let trainer: { path: string; text: string; uri: vscode.Uri };

  suiteSetup(async () => {
    const a = await api();
    root = a.extension.extensionPath;
    // A fresh folder per run, so a reused workspace never mixes runs.
    const dir = mkdtempSync(join(workspaceDir(), 'lab-'));
    base = dir;
    // Scripts of different styles: Trainer, custom loop, TRL + PEFT (corpus), plus the primitives' fixtures when present.
    const { tasks } = loadCorpus();
    for (const id of ['distilbert_sst2', 'simple_regression', 'gpt2_sft_lora']) {
      const t = tasks.find((x) => x.task_id === id);
      assert.ok(t, `corpus task ${id}`);
      const path = join(dir, `${id}.py`);
      writeFileSync(path, t.script_content);
      files.push({ name: id, path, text: t.script_content });
    }
    const fixtures = join(root, 'test/fixtures/scripts');
    try {
      cpSync(fixtures, join(dir, 'fixtures'), { recursive: true });
      for (const f of loadTaskFolder(join(dir, 'fixtures')).tasks.slice(0, 3))
        files.push({ name: `fixtures/${f.task_id}`, path: join(dir, 'fixtures', `${f.task_id}.py`), text: f.script_content });
    } catch {
      /* no fixtures folder yet: the corpus scripts cover the styles */
    }
    const t = files[0];
    trainer = { ...t, uri: vscode.Uri.file(t.path) };
  });

  test('the primitive quick pick offers exactly applicablePrimitives(...) of the file', async () => {
    for (const f of files) {
      const r = await ok<{ items: PrimitivePickItem[] }>('forgeenv.lab.applyPrimitive', {
        uri: vscode.Uri.file(f.path).toString(),
        list: true,
      });
      const expected = applicablePrimitives(f.text);
      assert.deepEqual(
        r.items.map((i) => i.primitive),
        expected.map((e) => e.primitive.name),
        f.name,
      );
      assert.ok(r.items.length > 0, `${f.name}: something applies`);
      r.items.forEach((item, i) =>
        assert.ok(item.detail.includes(expected[i].primitive.models), `${f.name} ${item.label}: shows the drift it models`),
      );
    }
  });

  test("applying each applicable primitive shows applySpec(...).script on the diff's right side; the file is untouched", async () => {
    let applied = 0;
    for (const f of files) {
      const uri = vscode.Uri.file(f.path);
      for (const { primitive, candidates } of applicablePrimitives(f.text)) {
        const params = candidates[0].params;
        const r = await ok<ApplyOutcome>('forgeenv.lab.applyPrimitive', {
          uri: uri.toString(),
          primitive: primitive.name,
          params,
          quiet: true,
        });
        const expected = applySpec(f.text, { primitive_type: primitive.name, params }).script;
        assert.equal(r.script, expected);
        const diff = activeDiff();
        assert.ok(diff, `${f.name} ${primitive.name}: a diff editor is active`);
        assert.equal(diff.modified.toString(), r.brokenUri);
        assert.equal(diff.modified.scheme, 'forgeenv-lab');
        const right = await vscode.workspace.openTextDocument(diff.modified);
        const left = await vscode.workspace.openTextDocument(diff.original);
        assert.equal(right.getText(), expected, `${f.name} ${primitive.name}: right side`);
        assert.equal(left.getText(), f.text);
        assert.equal(readFileSync(f.path, 'utf8'), f.text, 'the file on disk is untouched');
        const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
        assert.ok(!doc || (!doc.isDirty && doc.getText() === f.text), 'the open document is untouched');
        applied++;
      }
    }
    assert.ok(applied >= 10, `${applied} primitives applied`);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  test("invalid params are refused with the schema's message, nothing opens", async () => {
    const r = await vscode.commands.executeCommand<{ ok: boolean; reason?: string; message?: string }>('forgeenv.lab.applyPrimitive', {
      uri: trainer.uri.toString(),
      primitive: 'RenameApiCall',
      params: { old_name: 'Trainer' },
      quiet: true,
    });
    assert.equal(r.ok, false);
    assert.equal(r.reason, 'invalid_args');
    assert.match(r.message ?? '', /new_name/);
  });

  let session: ApplyOutcome;
  test('Run broken version: its error shows as a diagnostic on the right-side document', async () => {
    // `evaluation_strategy` was removed in transformers 4.51 (deprecated from 4.41), so break under 2025-09 (4.56).
    const versions = snapshotVersions('2025-09');
    const m = applicablePrimitives(trainer.text, versions).find((a) => a.primitive.name === 'ModifyConfigField')!;
    const c = m.candidates.find((x) => x.params.old_field === 'eval_strategy')!;
    assert.notEqual(c.breaks, false, 'the real release rejects evaluation_strategy at 2025-09');
    session = await ok<ApplyOutcome>('forgeenv.lab.applyPrimitive', {
      uri: trainer.uri.toString(),
      primitive: 'ModifyConfigField',
      params: c.params,
      versions,
      quiet: true,
    });
    const t0 = Date.now();
    const run = await ok<RunBrokenResult>('forgeenv.lab.runBroken', { session: session.session, quiet: true });
    timing('run broken version', Date.now() - t0);
    assert.equal(run.broke, true, run.headline);
    const brokenUri = vscode.Uri.parse(session.brokenUri);
    const diags = vscode.languages.getDiagnostics(brokenUri);
    assert.equal(diags.length, run.diagnostics);
    assert.ok(diags.length >= 1);
    const d = diags[0];
    assert.equal(d.severity, vscode.DiagnosticSeverity.Error);
    assert.match(d.message, new RegExp(String(c.params.new_field)));
    // The diagnostic sits on the failing call, inside the edited statement.
    const brokenLines = session.script.split('\n');
    const line = brokenLines[d.range.start.line] ?? '';
    const edit = session.edits[0];
    const editLine = trainer.text.slice(0, edit.from).split('\n').length - 1;
    assert.ok(
      d.range.start.line <= editLine,
      `diagnostic line ${d.range.start.line} (${line.trim()}) is at or before the edit on line ${editLine}`,
    );
    assert.ok(/TrainingArguments|evaluation_strategy/.test(brokenLines.slice(d.range.start.line, editLine + 1).join('\n')));
    assert.deepEqual(
      vscode.languages.getDiagnostics(trainer.uri).filter((x) => x.source === 'ForgeEnv lab'),
      [],
      'nothing on the real file',
    );
  });

  test('Check inverse restores the original exactly', async () => {
    const r = await ok<InverseCheck & { session: string }>('forgeenv.lab.checkInverse', { session: session.session, quiet: true });
    assert.equal(r.exact, true);
    assert.equal(r.restored, trainer.text);
  });

  test('Save as task writes <id>.py + a tasks.json entry the corpus loader reads', async () => {
    const folder = join(base, 'tasks');
    const r = await ok<SavedTask>('forgeenv.lab.saveAsTask', { session: session.session, folder, taskId: 'lab_saved_task', quiet: true });
    const loaded = loadTaskFolder(folder);
    assert.deepEqual(loaded.problems, []);
    const t = loaded.tasks.find((x) => x.task_id === 'lab_saved_task');
    assert.ok(t);
    assert.equal(t.script_content, trainer.text);
    const spec = JSON.parse(readFileSync(r.specPath, 'utf8')) as { primitive_type: string; params: Record<string, unknown> };
    assert.equal(applySpec(t.script_content, spec).script, session.script, 'the saved spec reproduces the broken script');
    const again = await vscode.commands.executeCommand<{ ok: boolean; reason?: string }>('forgeenv.lab.saveAsTask', {
      session: session.session,
      folder,
      taskId: 'lab_saved_task',
      quiet: true,
    });
    assert.equal(again.ok, false, 'an existing id is refused');
  });

  test('Make Task from This Script: a plain script becomes a task with its args, files, difficulty and snapshot, and an episode starts on it', async function () {
    this.timeout(120_000);
    const folder = mkdtempSync(join(base, 'made-'));
    const scriptDir = mkdtempSync(join(base, 'user-'));
    const userScript = join(scriptDir, 'train_user.py');
    writeFileSync(userScript, trainer.text);
    writeFileSync(join(scriptDir, 'config.yaml'), 'learning_rate: 0.1\n');
    await vscode.window.showTextDocument(vscode.Uri.file(userScript));
    const r = await ok<{ taskId: string; scriptPath: string; started: boolean; episodeId?: string }>('forgeenv.lab.makeTask', {
      folder,
      taskId: 'made_from_script',
      args: ['--config', 'config.yaml'],
      files: ['config.yaml'],
      difficulty: 'hard',
      // The script passes `processing_class` (transformers >= 4.46): make-task's run refuses an era where it fails.
      snapshot: '2025-03',
      start: true,
      confirm: true,
    });
    assert.equal(r.started, true);
    const t = loadTaskFolder(folder).tasks.find((x) => x.task_id === 'made_from_script');
    assert.ok(t, 'the task loads from its folder');
    assert.equal(t.script_content, trainer.text);
    assert.deepEqual(t.args, ['--config', 'config.yaml']);
    assert.deepEqual(t.files, { 'config.yaml': 'learning_rate: 0.1\n' });
    assert.equal(t.difficulty, 'hard');
    assert.equal(t.library_versions?.transformers, getSnapshot('2025-03').versions.transformers);
    const folders = vscode.workspace.getConfiguration('forgeenv').get<string[]>('taskFolders') ?? [];
    assert.ok(folders.includes(folder), 'the folder joins forgeenv.taskFolders so episodes find the task');
    assert.ok(r.episodeId, 'an episode started on the new task');
    const active = vscode.window.activeTextEditor?.document;
    assert.ok(active && active.uri.fsPath.includes('made_from_script'), `the episode's script is open (${active?.uri.fsPath})`);
    await endAnyEpisode();
    const bad = await vscode.commands.executeCommand<{ ok: boolean; message?: string }>('forgeenv.lab.makeTask', {
      folder,
      taskId: 'made_bad',
      args: [],
      files: ['missing.yaml'],
      difficulty: 'easy',
      snapshot: '2024-09',
      quiet: true,
    });
    assert.equal(bad.ok, false);
    assert.match(bad.message ?? '', /missing\.yaml/);
    const unknown = await vscode.commands.executeCommand<{ ok: boolean; message?: string }>('forgeenv.lab.makeTask', {
      folder,
      taskId: 'made_bad2',
      args: [],
      files: [],
      difficulty: 'easy',
      snapshot: '1999-01',
      quiet: true,
    });
    assert.equal(unknown.ok, false);
    assert.match(unknown.message ?? '', /2026-11/, 'an unknown snapshot lists the known ones');
  });

  test('code actions on a selected keyword offer exactly the primitives whose candidates meet it', async () => {
    const editor = await vscode.window.showTextDocument(trainer.uri);
    const at = trainer.text.indexOf('eval_strategy');
    assert.ok(at > 0);
    const range = new vscode.Range(editor.document.positionAt(at), editor.document.positionAt(at + 'eval_strategy'.length));
    const actions = await vscode.commands.executeCommand<vscode.CodeAction[]>(
      'vscode.executeCodeActionProvider',
      trainer.uri,
      range,
      vscode.CodeActionKind.Refactor.append('forgeenv').value,
    );
    const ours = actions.filter((x) => x.title.startsWith('ForgeEnv: break with'));
    const expected = intersectingCandidates(applicablePrimitives(trainer.text), at, at + 'eval_strategy'.length);
    assert.ok(expected.length > 0);
    assert.deepEqual(
      [...new Set(ours.map((x) => (x.command?.arguments?.[0] as { primitive: string }).primitive))].sort(),
      expected.map((e) => e.primitive.name).sort(),
    );
    for (const x of ours) assert.equal((x.command?.arguments?.[0] as { uri: string }).uri, trainer.uri.toString());
  });

  let checked: { summary: CheckSummary; results: CheckRow[] };
  test('Check all on the corpus: the view shows the same counts as checkPrimitives', async function () {
    this.timeout(120_000);
    const t0 = Date.now();
    checked = await ok<{ summary: CheckSummary; results: CheckRow[]; noRun: boolean }>('forgeenv.lab.checkAll', {
      corpus: true,
      noRun: true,
      quiet: true,
    });
    timing('batch check on the corpus (no runs)', Date.now() - t0);
    const { tasks } = loadCorpus();
    const direct = await checkPrimitives(
      tasks.filter((t) => t.source === 'builtin').map((t) => ({ name: t.task_id, script: t.script_content, versions: t.library_versions })),
      { mode: 'simulated', noRun: true },
    );
    for (const k of ['scripts', 'primitives', 'rows', 'applied', 'restored'] as const)
      assert.equal(checked.summary[k], direct.summary[k], k);
    const view = await vscode.commands.executeCommand<ChecksSnapshot>('forgeenv.lab.inspectChecks');
    const rows = view.groups.flatMap((g) => g.rows);
    assert.equal(view.groups.length, direct.summary.scripts);
    assert.equal(rows.length, direct.summary.rows);
    assert.equal(rows.filter((r) => r.description.startsWith('applied')).length, direct.summary.applied);
    assert.equal(rows.filter((r) => / · restored/.test(r.description)).length, direct.summary.restored);
    assert.equal(rows.filter((r) => r.status === 'not-applicable').length, direct.summary.rows - direct.summary.applied);
    assert.match(view.status, new RegExp(`${direct.summary.applied} applied`));
  });

  test('Check all with runs on a folder: broke / restored / passes counts in the view match the summary', async function () {
    this.timeout(180_000);
    const folder = mkdtempSync(join(base, 'check-'));
    for (const f of files.slice(0, 2)) writeFileSync(join(folder, `${f.name.replace(/\W/g, '_')}.py`), f.text);
    const t0 = Date.now();
    const r = await ok<{ summary: CheckSummary; results: CheckRow[] }>('forgeenv.lab.checkAll', { folder, quiet: true });
    timing(`batch check with runs (${r.summary.scripts} scripts × ${r.summary.primitives} primitives)`, Date.now() - t0);
    assert.equal(r.summary.scripts, 2);
    assert.ok(r.summary.broke > 0, 'some primitive broke a script');
    const view = await vscode.commands.executeCommand<ChecksSnapshot>('forgeenv.lab.inspectChecks');
    const rows = view.groups.flatMap((g) => g.rows);
    assert.equal(rows.length, r.summary.rows);
    assert.equal(rows.filter((x) => / · broke/.test(x.description)).length, r.summary.broke);
    assert.equal(rows.filter((x) => / · restored/.test(x.description)).length, r.summary.restored);
    assert.equal(rows.filter((x) => / · passes after repair/.test(x.description)).length, r.summary.passes_after_repair);
    checked = r;

    // A row opens its diff.
    const row = r.results.find((x) => x.applied)!;
    const opened = await ok<{ brokenUri: string; script: string }>('forgeenv.lab.openCheckRow', {
      script: row.script,
      primitive: row.primitive,
    });
    assert.equal(activeDiff()?.modified.toString(), opened.brokenUri);
    const source = readFileSync(join(folder, row.script), 'utf8');
    assert.equal(opened.script, applySpec(source, { primitive_type: row.primitive, params: row.params! }).script);
  });

  test('Export results as JSON writes a valid file atomically', async () => {
    const out = join(base, 'exports', 'checks.json');
    await ok('forgeenv.lab.exportChecks', { out });
    const data = CheckExportSchema.parse(JSON.parse(readFileSync(out, 'utf8')));
    assert.equal(data.results.length, checked.summary.rows);
    assert.deepEqual(data.summary, checked.summary);
  });

  test('Library snapshot drift: under 2023-12 the script fails and the diagnostic names the real-world change', async function () {
    this.timeout(60_000);
    const r = await ok<SnapshotDriftResult>('forgeenv.lab.snapshotDrift', {
      uri: trainer.uri.toString(),
      snapshot: '2023-12',
      quiet: true,
    });
    // The corpus targets 2025-03 (eval_strategy=, added in transformers 4.41); 4.36 does not know it.
    assert.equal(r.runsCleanly, false);
    assert.match(r.headline, /eval_strategy/);
    assert.ok(r.explanation);
    assert.equal(r.explanation.source, 'drift-table');
    assert.match(r.explanation.change, /eval_strategy/);
    const diags = vscode.languages.getDiagnostics(trainer.uri).filter((d) => d.source === 'ForgeEnv snapshot 2023-12');
    assert.equal(diags.length, r.diagnostics);
    assert.ok(diags[0].message.includes(`Real-world change: ${r.explanation.change}`), diags[0].message);
    assert.match(trainer.text.split('\n')[diags[0].range.start.line] ?? '', /TrainingArguments|eval_strategy/);
    // The latest snapshot is what the corpus is written for: it runs cleanly and clears the problems.
    const latest = await ok<SnapshotDriftResult>('forgeenv.lab.snapshotDrift', {
      uri: trainer.uri.toString(),
      snapshot: '2025-03',
      quiet: true,
    });
    assert.equal(latest.runsCleanly, true, latest.headline);
    assert.equal(vscode.languages.getDiagnostics(trainer.uri).filter((d) => d.source?.startsWith('ForgeEnv snapshot')).length, 0);
  });

  test("a new repair episode clears the lab's diagnostics, and an ended episode closes its editors", async function () {
    this.timeout(90_000);
    await setSetting('datasetFolder', '.forgeenv/dataset-lab');
    try {
      await ok<SnapshotDriftResult>('forgeenv.lab.snapshotDrift', { uri: trainer.uri.toString(), snapshot: '2023-12', quiet: true });
      const labProblems = () => vscode.languages.getDiagnostics(trainer.uri).filter((d) => d.source?.startsWith('ForgeEnv snapshot'));
      assert.ok(labProblems().length >= 1, 'the lab left diagnostics');
      const first = await ok<StartResult>('forgeenv.startEpisode', { taskId: 'simple_regression', seed: 5 });
      assert.equal(labProblems().length, 0, 'they went when the episode started');
      await ok('forgeenv.showRunOutput');
      await ok('forgeenv.reviewChanges');
      const script = vscode.Uri.file(first.filePath).toString();
      const editorsOf = (episodeId: string) =>
        vscode.window.tabGroups.all
          .flatMap((g) => g.tabs)
          .filter((t) => {
            const i = t.input;
            const uris = i instanceof vscode.TabInputText ? [i.uri] : i instanceof vscode.TabInputTextDiff ? [i.original, i.modified] : [];
            return uris.some((u) => u.toString() === script || (u.scheme.startsWith('forgeenv-') && u.path.startsWith(`/${episodeId}/`)));
          });
      assert.ok(editorsOf(first.episodeId).length >= 3, 'train.py, its run output and its diff are open');
      await ok('forgeenv.skipEpisode', { reason: 'too_hard' });
      assert.deepEqual(
        editorsOf(first.episodeId).map((t) => t.label),
        [],
        "the ended episode's editors are closed",
      );
    } finally {
      await endAnyEpisode();
      await setSetting('datasetFolder', undefined);
    }
  });
});
