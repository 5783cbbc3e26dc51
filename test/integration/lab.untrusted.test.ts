// In Restricted Mode the lab still applies primitives and checks inverses (no Python runs), but
// refuses to run scripts: the broken version, a snapshot, a batch check only without runs.
import * as assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { applicablePrimitives } from '../../src/env/primitives/registry';
import { loadCorpus } from '../../src/env/tasks/tasks';
import type { ApplyOutcome } from '../../src/editor/lab/applyPrimitive';
import { ok, workspaceDir } from './helpers';

type Result = { ok: boolean; reason?: string; noRun?: boolean; exact?: boolean };

suite('Lab in an untrusted workspace', () => {
  let uri: vscode.Uri;
  let text: string;
  let folder: string;
  suiteSetup(() => {
    const t = loadCorpus().tasks.find((x) => x.task_id === 'roberta_sentiment')!;
    const dir = mkdtempSync(join(workspaceDir(), 'lab-untrusted-'));
    folder = dir;
    writeFileSync(join(dir, 'train.py'), t.script_content);
    uri = vscode.Uri.file(join(dir, 'train.py'));
    text = t.script_content;
  });

  test('applying and checking the inverse work; running is refused', async () => {
    assert.equal(vscode.workspace.isTrusted, false);
    const { primitive, candidates } = applicablePrimitives(text)[0];
    const applied = await ok<ApplyOutcome>('forgeenv.lab.applyPrimitive', {
      uri: uri.toString(),
      primitive: primitive.name,
      params: candidates[0].params,
      quiet: true,
    });
    const inv = await vscode.commands.executeCommand<Result>('forgeenv.lab.checkInverse', { session: applied.session, quiet: true });
    assert.equal(inv.exact, true);
    const run = await vscode.commands.executeCommand<Result>('forgeenv.lab.runBroken', { session: applied.session, quiet: true });
    assert.deepEqual([run.ok, run.reason], [false, 'untrusted']);
    assert.deepEqual(vscode.languages.getDiagnostics(vscode.Uri.parse(applied.brokenUri)), []);
    const snap = await vscode.commands.executeCommand<Result>('forgeenv.lab.snapshotDrift', {
      uri: uri.toString(),
      snapshot: '2023-12',
      quiet: true,
    });
    assert.deepEqual([snap.ok, snap.reason], [false, 'untrusted']);
  });

  test('a batch check falls back to apply / restore / diff without runs', async () => {
    const r = await vscode.commands.executeCommand<Result & { summary: { passes_after_repair: number; applied: number } }>(
      'forgeenv.lab.checkAll',
      { folder, quiet: true },
    );
    assert.equal(r.ok, true);
    assert.equal(r.noRun, true);
    assert.ok(r.summary.applied > 0);
    assert.equal(r.summary.passes_after_repair, 0, 'nothing ran');
  });

  test('reopening a demonstration (which re-runs it) is refused', async () => {
    const r = await vscode.commands.executeCommand<Result>('forgeenv.review.reopen', { recordId: '00000000-0000-4000-8000-000000000001' });
    assert.deepEqual([r.ok, r.reason], [false, 'untrusted']);
  });
});
