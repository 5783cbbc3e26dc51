import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { api } from './helpers';

interface Manifest {
  version: string;
  activationEvents: string[];
  contributes: {
    commands: Array<{ command: string; title: string; category?: string }>;
    configuration: { properties: Record<string, { default?: unknown; description?: string; markdownDescription?: string }> };
    menus: { commandPalette: Array<{ command: string; when?: string }> };
    views: Record<string, Array<{ id: string }>>;
    viewsContainers: { activitybar: Array<{ id: string; icon: string }> };
    walkthroughs: Array<{ id: string; steps: unknown[] }>;
  };
  capabilities: { untrustedWorkspaces: { supported: string | boolean; description?: string } };
}

suite('Extension manifest', () => {
  let manifest: Manifest;
  suiteSetup(async () => {
    const a = await api();
    manifest = a.extension.packageJSON as Manifest;
    console.log(`    vscode ${vscode.version}, ${vscode.env.appName}, node ${process.version}`);
  });

  test('every declared command is registered, and every registered forgeenv.* command is declared', async () => {
    const registered = new Set((await vscode.commands.getCommands(true)).filter((c) => c.startsWith('forgeenv.')));
    const declared = new Set(manifest.contributes.commands.map((c) => c.command));
    // VS Code itself adds `<view id>.focus`, `.open`, … for every contributed view.
    const viewIds = Object.values(manifest.contributes.views)
      .flat()
      .map((v) => v.id);
    for (const c of [...registered]) if (viewIds.some((v) => c.startsWith(`${v}.`))) registered.delete(c);
    const missing = [...declared].filter((c) => !registered.has(c));
    const undeclared = [...registered].filter((c) => !declared.has(c));
    assert.deepEqual(missing, [], 'declared but not registered');
    assert.deepEqual(undeclared, [], 'registered but not declared');
    assert.ok(declared.size >= 14);
  });

  test('commands have the ForgeEnv category; episode commands are hidden from the palette without an episode', () => {
    for (const c of manifest.contributes.commands) assert.equal(c.category, 'ForgeEnv', c.command);
    const when = new Map(manifest.contributes.menus.commandPalette.map((m) => [m.command, m.when]));
    for (const c of ['forgeenv.runAndScore', 'forgeenv.submitEpisode', 'forgeenv.skipEpisode', 'forgeenv.reviewChanges']) {
      assert.match(when.get(c) ?? '', /forgeenv\.episodeActive/, `${c} palette when clause`);
    }
    // Lab commands act on a Python file: hidden without one.
    for (const c of manifest.contributes.commands.map((x) => x.command).filter((id) => id.startsWith('forgeenv.lab.'))) {
      if (['forgeenv.lab.checkAll'].includes(c)) continue; // a folder or the corpus, no file needed
      assert.ok(when.has(c), `${c} has a palette when clause`);
    }
    // Submit Revision stays in the palette (typing it must never run Reopen instead); it explains when nothing is open.
    assert.equal(when.has('forgeenv.review.submitRevision'), false);
  });

  test('Submit Revision without an open revision says what to do instead of running anything', async () => {
    const r = await vscode.commands.executeCommand<{ ok: boolean; reason?: string; message?: string }>('forgeenv.review.submitRevision');
    assert.equal(r.ok, false);
    assert.equal(r.reason, 'no_episode');
    assert.match(r.message ?? '', /Reopen Demonstration as a New Revision/);
  });

  test('every setting has a default and a description, and VS Code reads the same default', () => {
    const props = manifest.contributes.configuration.properties;
    const keys = Object.keys(props);
    assert.ok(keys.length >= 11);
    const config = vscode.workspace.getConfiguration();
    for (const k of keys) {
      assert.ok('default' in props[k], `${k} has a default`);
      assert.ok((props[k].markdownDescription ?? props[k].description ?? '').length > 10, `${k} has a description`);
      assert.deepEqual(config.inspect(k)?.defaultValue, props[k].default, `${k}: VS Code's default`);
    }
  });

  test('activation is lazy; views, walkthrough and trust capability are declared', () => {
    assert.ok(!manifest.activationEvents.includes('*'));
    assert.ok(!manifest.activationEvents.includes('onStartupFinished'));
    assert.ok(manifest.contributes.viewsContainers.activitybar.some((c) => c.id === 'forgeenv' && c.icon.startsWith('media/')));
    assert.ok(manifest.contributes.views.forgeenv.some((v) => v.id === 'forgeenv.taskQueue'));
    const walk = manifest.contributes.walkthroughs.find((w) => w.id === 'gettingStarted');
    assert.equal(walk?.steps.length, 5);
    assert.equal(manifest.capabilities.untrustedWorkspaces.supported, 'limited');
    assert.ok((manifest.capabilities.untrustedWorkspaces.description ?? '').length > 20);
  });
});
