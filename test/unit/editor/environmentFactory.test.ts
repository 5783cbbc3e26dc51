// The editor's one environment factory: every run-affecting setting reaches the environment it
// builds, every setting is classified, and no editor feature builds an environment by hand.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import {
  environmentConfigFrom,
  environmentFrom,
  interpreterForMode,
  NOT_RUN_SETTINGS,
  RUN_SETTINGS,
} from '../../../src/editor/environmentFactory';
import { defaultSettings, SETTING_KEYS, type ForgeSettings, type SettingKey } from '../../../src/editor/settingsSchema';

const ROOT = join(__dirname, '..', '..', '..');
const choice = { mode: 'simulated' as const, interpreter: 'python3', taskDirs: [] };

/** A valid value other than the default, for each run setting. */
const OTHER: { [K in (typeof RUN_SETTINGS)[number]]: ForgeSettings[K] } = {
  runTimeoutSeconds: 7,
  outputCapKiB: 3,
  maxDiffBytes: 2048,
  warmRuntime: false,
  'real.modelArchitectures': { 'acme/tiny-model': 'llama' },
  'sandbox.mode': 'off',
  'sandbox.allowNetwork': true,
  'sandbox.passEnv': ['MY_TOKEN'],
  'sandbox.cpuSeconds': 11,
  'sandbox.addressSpaceMiB': 1234,
  'sandbox.fileSizeMiB': 13,
  'sandbox.processes': 17,
  'sandbox.diskMiB': 19,
};

test('every forgeenv.* setting is either a run setting or says why it is not one', () => {
  const run = new Set<string>(RUN_SETTINGS);
  const other = new Set(Object.keys(NOT_RUN_SETTINGS));
  for (const key of SETTING_KEYS) {
    assert.ok(run.has(key) !== other.has(key), `forgeenv.${key} must be in exactly one of RUN_SETTINGS and NOT_RUN_SETTINGS`);
  }
  for (const key of [...run, ...other]) assert.ok((SETTING_KEYS as string[]).includes(key), `${key} is not a setting`);
});

test('each run setting changes the config of the environment the editor builds', () => {
  const base = environmentConfigFrom(defaultSettings(), choice);
  for (const key of RUN_SETTINGS) {
    const value = OTHER[key];
    assert.notDeepEqual(value, defaultSettings()[key], `test value for ${key} must differ from its default`);
    const changed = environmentConfigFrom({ ...defaultSettings(), [key]: value }, choice);
    assert.notDeepEqual(changed, base, `forgeenv.${key} does not reach the environment`);
    // And the environment itself keeps it (its schema does not drop the option).
    const env = environmentFrom({ ...defaultSettings(), [key]: value }, choice);
    const plain = environmentFrom(defaultSettings(), choice);
    try {
      assert.notDeepEqual(env.config, plain.config, `ForgeEnvironment drops forgeenv.${key}`);
    } finally {
      void env.dispose();
      void plain.dispose();
    }
  }
});

test('the sandbox settings reach the environment (Rescore Dataset once ignored them)', () => {
  const s: ForgeSettings = { ...defaultSettings(), 'sandbox.mode': 'off', 'sandbox.cpuSeconds': 11, 'sandbox.passEnv': ['MY_TOKEN'] };
  const env = environmentFrom(s, choice);
  try {
    assert.equal(env.config.sandbox?.mode, 'off');
    assert.equal(env.config.sandbox?.limits?.cpuSeconds, 11);
    assert.deepEqual(env.config.sandbox?.passEnv, ['MY_TOKEN']);
  } finally {
    void env.dispose();
  }
});

test('real mode runs the managed venv unless forgeenv.pythonPath names an interpreter', () => {
  assert.equal(interpreterForMode('real', { interpreter: '/usr/bin/python3', source: 'default' }), undefined);
  assert.equal(interpreterForMode('real', { interpreter: '/usr/bin/python3', source: 'python-extension' }), undefined);
  assert.equal(interpreterForMode('real', { interpreter: '/opt/py/bin/python', source: 'setting' }), '/opt/py/bin/python');
  assert.equal(interpreterForMode('simulated', { interpreter: '/usr/bin/python3', source: 'default' }), '/usr/bin/python3');
});

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? tsFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

test('no editor feature builds an environment except through the factory', () => {
  const editor = join(ROOT, 'src', 'editor');
  const offenders = tsFiles(editor)
    .filter((f) => !f.endsWith('environmentFactory.ts'))
    .filter((f) => /new\s+ForgeEnvironment\s*\(/.test(readFileSync(f, 'utf8')))
    .map((f) => relative(ROOT, f));
  assert.deepEqual(offenders, []);
});

test('every run setting is read in the factory only', () => {
  const editor = join(ROOT, 'src', 'editor');
  const offenders: string[] = [];
  for (const f of tsFiles(editor)) {
    if (f.endsWith('environmentFactory.ts') || f.endsWith('settingsSchema.ts')) continue;
    const text = readFileSync(f, 'utf8');
    for (const key of RUN_SETTINGS as readonly SettingKey[]) {
      const read = key.includes('.') ? `['${key}']` : `.${key}`;
      if (text.includes(`settings${read}`) || text.includes(`s${read}`)) offenders.push(`${relative(ROOT, f)}: ${key}`);
    }
  }
  assert.deepEqual(offenders, []);
});
