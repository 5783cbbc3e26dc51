// Suite entry that VS Code's extension host loads (extensionTestsPath); it calls run().
// scripts/run-vscode-tests.mjs launches VS Code once per phase and says which through
// FORGEENV_TEST_PHASE:
//   trusted    (default) every *.test.js except the two kinds below
//   untrusted  *.untrusted.test.js: workspace trust enabled, the folder untrusted
//   reload     *.reload.test.js, in two halves around a real window reload: the "before" suites
//              run, their counts go to FORGEENV_TEST_STATE_DIR, the window reloads (the extension
//              host dies and VS Code starts the tests again), then the "after" suites run and the
//              closing line counts both halves.
import * as fs from 'node:fs';
import * as path from 'node:path';
import Mocha from 'mocha';
import * as vscode from 'vscode';

type Phase = 'trusted' | 'untrusted' | 'reload';

/** Written by the "before" half of the reload phase; read by the "after" half. */
export const RELOAD_MARKER = 'reloaded.json';

function phase(): Phase {
  const p = process.env.FORGEENV_TEST_PHASE;
  return p === 'untrusted' || p === 'reload' ? p : 'trusted';
}

function filesFor(p: Phase): string[] {
  const all = fs.readdirSync(__dirname).filter((f) => f.endsWith('.test.js'));
  if (p === 'untrusted') return all.filter((f) => f.endsWith('.untrusted.test.js'));
  if (p === 'reload') return all.filter((f) => f.endsWith('.reload.test.js'));
  return all.filter((f) => !f.endsWith('.untrusted.test.js') && !f.endsWith('.reload.test.js'));
}

export function run(): Promise<void> {
  // Stack traces that point at the .ts sources (the extension host replaces Error.prepareStackTrace,
  // so Node's own source-map support has no effect here).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  require('source-map-support').install();
  const p = phase();
  const stateDir = process.env.FORGEENV_TEST_STATE_DIR ?? '';
  const markerFile = path.join(stateDir, RELOAD_MARKER);
  let half: 'before' | 'after' | undefined;
  let earlier = { passes: 0, failures: 0, pending: 0 };
  let grep = process.env.VSCODE_TEST_GREP;
  if (p === 'reload') {
    if (!stateDir) return Promise.reject(new Error('FORGEENV_TEST_STATE_DIR is not set for the reload phase'));
    half = fs.existsSync(markerFile) ? 'after' : 'before';
    if (half === 'after') earlier = JSON.parse(fs.readFileSync(markerFile, 'utf8')).counts ?? earlier;
    grep = `\\(${half} reload\\)`;
  }
  const mocha = new Mocha({ ui: 'tdd', color: false, timeout: 60_000, reporter: 'spec', grep });
  const files = filesFor(p).sort();
  for (const f of files) mocha.addFile(path.join(__dirname, f));
  if (half !== 'after') console.log(`[forgeenv-tests] start (${p}${half ? `, ${half} reload` : ''}: ${files.length} files)`);
  else console.log(`[forgeenv-tests] start (${p}, after reload)`);
  return new Promise((resolve, reject) => {
    const runner = mocha.run((failures) => {
      const { passes = 0, pending = 0 } = runner.stats ?? {};
      if (half === 'before' && failures === 0) {
        // Keep the counts, then reload for real; this extension host ends with the window.
        const marker = fs.existsSync(markerFile) ? JSON.parse(fs.readFileSync(markerFile, 'utf8')) : {};
        fs.writeFileSync(markerFile, JSON.stringify({ ...marker, counts: { passes, failures, pending } }));
        console.log(`[forgeenv-tests] ${passes} passed before the reload; reloading the window`);
        void vscode.commands.executeCommand('workbench.action.reloadWindow');
        return; // never settles: the reload replaces this extension host
      }
      const total = { passes: passes + earlier.passes, failures: failures + earlier.failures, pending: pending + earlier.pending };
      // The closing line that the runner and CI count: "N passed, N failed[, N skipped]".
      console.log(`${total.passes} passed, ${total.failures} failed${total.pending ? `, ${total.pending} skipped` : ''}`);
      if (total.failures > 0) reject(new Error(`${total.failures} tests failed.`));
      else resolve();
    });
  });
}
