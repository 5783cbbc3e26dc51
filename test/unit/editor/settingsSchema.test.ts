import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { SETTING_KEYS, defaultSettings, parseSettings, sandboxOptionsOf } from '../../../src/editor/settingsSchema';
import { DEFAULT_LIMITS, SANDBOX_MODES } from '../../../src/env/sandbox/options';

const pkg = JSON.parse(readFileSync(join(__dirname, '../../../package.json'), 'utf8'));
const props: Record<string, { default: unknown; markdownDescription?: string; description?: string; enum?: unknown[] }> =
  pkg.contributes.configuration.properties;

describe('forgeenv settings', () => {
  test('package.json declares every setting the schema reads, with the same defaults', () => {
    const declared = new Set(Object.keys(props));
    for (const k of SETTING_KEYS) assert.ok(declared.has(`forgeenv.${k}`), `forgeenv.${k} is declared`);
    const defaults = defaultSettings() as Record<string, unknown>;
    for (const k of SETTING_KEYS) {
      assert.deepEqual(props[`forgeenv.${k}`].default, defaults[k], `default of forgeenv.${k}`);
      assert.ok(
        (props[`forgeenv.${k}`].markdownDescription ?? props[`forgeenv.${k}`].description ?? '').length > 20,
        `description of forgeenv.${k}`,
      );
    }
  });

  test('enums in package.json match the schema', () => {
    assert.deepEqual(props['forgeenv.executionMode'].enum, ['simulated', 'real']);
    assert.deepEqual(props['forgeenv.backend'].enum, ['embedded', 'remote']);
    assert.deepEqual(props['forgeenv.sandbox.mode'].enum, [...SANDBOX_MODES]);
  });

  test('sandbox settings are user-only (a workspace cannot weaken them) and map onto the executor options', () => {
    for (const k of SETTING_KEYS.filter((k) => k.startsWith('sandbox.')))
      assert.equal((props[`forgeenv.${k}`] as { scope?: string }).scope, 'machine', k);
    const raw: Record<string, unknown> = {
      'sandbox.mode': 'off',
      'sandbox.passEnv': ['MY_VAR'],
      'sandbox.processes': 64,
      'sandbox.fileSizeMiB': -1,
    };
    const { settings, problems } = parseSettings((k) => raw[k]);
    assert.deepEqual(sandboxOptionsOf(settings), {
      mode: 'off',
      allowNetwork: false,
      passEnv: ['MY_VAR'],
      limits: {
        cpuSeconds: DEFAULT_LIMITS.cpuSeconds,
        addressSpaceMiB: DEFAULT_LIMITS.addressSpaceMiB,
        fileSizeMiB: DEFAULT_LIMITS.fileSizeMiB,
        processes: 64,
        diskMiB: DEFAULT_LIMITS.diskMiB,
      },
    });
    assert.match(problems.join('\n'), /forgeenv\.sandbox\.fileSizeMiB/);
    assert.equal(parseSettings((k) => (k === 'sandbox.passEnv' ? ['NOT A NAME'] : undefined)).problems.length, 1);
  });

  test('a bad value falls back to its default with a readable problem; others are kept', () => {
    const raw: Record<string, unknown> = { runTimeoutSeconds: -5, executionMode: 'real', remoteUrl: 'not a url', taskFolders: ['  /a  '] };
    const { settings, problems } = parseSettings((k) => raw[k]);
    assert.equal(settings.runTimeoutSeconds, 60);
    assert.equal(settings.executionMode, 'real');
    assert.equal(settings.remoteUrl, '');
    assert.deepEqual(settings.taskFolders, ['/a']);
    assert.equal(problems.length, 2);
    assert.match(problems.join('\n'), /forgeenv.runTimeoutSeconds: .*using the default/);
    assert.match(problems.join('\n'), /forgeenv.remoteUrl/);
  });
});
