// `npm start`'s user settings (scripts/demo-settings.mjs, run by scripts/start.sh on every start):
// the first screen is the README with no empty secondary side bar, demo folders made by an older
// start.sh get the new keys, and what the user set survives.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, test } from 'node:test';

const ROOT = resolve(__dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'forgeenv-demo-settings-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

/** Runs the script as start.sh does on a settings file holding `text` (none when undefined). */
function merge(text: string | undefined) {
  const file = join(dir, `settings-${n++}.json`);
  if (text !== undefined) writeFileSync(file, text);
  const r = spawnSync(process.execPath, [join(ROOT, 'scripts/demo-settings.mjs'), file], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return { text: existsSync(file) ? readFileSync(file, 'utf8') : undefined, stderr: r.stderr };
}
const parse = (text: string | undefined) => JSON.parse(text ?? 'null') as Record<string, unknown>;

/** What scripts/start.sh wrote before the README became the first screen. */
const OLD_START_SH = `{
  "workbench.startupEditor": "none",
  "telemetry.telemetryLevel": "off",
  "update.mode": "none",
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false,
  "chat.disableAIFeatures": true,
  "git.enabled": false
}
`;

describe('demo settings (npm start)', () => {
  test('a new demo opens the README and hides the secondary side bar', () => {
    const s = parse(merge(undefined).text);
    assert.equal(s['workbench.startupEditor'], 'readme');
    assert.equal(s['workbench.secondarySideBar.defaultVisibility'], 'hidden');
    assert.equal(s['telemetry.telemetryLevel'], 'off');
  });

  test("a demo made by the old start.sh gets the new keys and keeps the user's", () => {
    const old = { ...parse(OLD_START_SH), 'editor.fontSize': 17, 'git.enabled': true };
    const s = parse(merge(JSON.stringify(old)).text);
    assert.equal(s['workbench.startupEditor'], 'readme', "the old script's 'none' is replaced");
    assert.equal(s['workbench.secondarySideBar.defaultVisibility'], 'hidden');
    assert.equal(s['editor.fontSize'], 17);
    assert.equal(s['git.enabled'], true, 'a value the user changed stays');
  });

  test("the user's own start-up editor and side bar choice stay", () => {
    const mine = { 'workbench.startupEditor': 'welcomePage', 'workbench.secondarySideBar.defaultVisibility': 'visible' };
    const s = parse(merge(JSON.stringify(mine)).text);
    assert.equal(s['workbench.startupEditor'], 'welcomePage');
    assert.equal(s['workbench.secondarySideBar.defaultVisibility'], 'visible');
  });

  test('an up-to-date file is left byte for byte', () => {
    const first = merge(OLD_START_SH).text;
    assert.equal(merge(first).text, first);
  });

  test('a settings.json with comments is left alone, with a message saying so', () => {
    const jsonc = '{\n  // mine\n  "editor.fontSize": 17\n}\n';
    const r = merge(jsonc);
    assert.equal(r.text, jsonc);
    assert.match(r.stderr, /left .*settings-\d+\.json as it is/);
  });

  // The keys only work if the pinned VS Code (code-server 4.139.1 = VS Code 1.139.1) declares
  // them with these values: a renamed setting would silently bring the squeezed layout back.
  const workbench = join(ROOT, 'test/vscode-host/node_modules/code-server/lib/vscode/out/vs/code/browser/workbench/workbench.js');
  test(
    'the VS Code of the test host declares the layout settings and their values',
    { skip: existsSync(workbench) ? false : 'test host not installed (npm run setup:vscode)' },
    () => {
      const source = readFileSync(workbench, 'utf8');
      const s = parse(merge(undefined).text);
      for (const key of ['workbench.startupEditor', 'workbench.secondarySideBar.defaultVisibility']) {
        const at = source.indexOf(`"${key}":{`);
        assert.ok(at >= 0, `${key} is a setting of this VS Code`);
        const enumList = /enum:\[([^\]]*)\]/.exec(source.slice(at, at + 600))?.[1] ?? '';
        assert.ok(enumList.includes(`"${String(s[key])}"`), `${key}: "${String(s[key])}" is one of ${enumList}`);
      }
    },
  );
});
