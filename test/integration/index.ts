// Suite entry that VS Code's extension host loads (extensionTestsPath); it calls run().
// scripts/run-vscode-tests.mjs launches VS Code twice and tells us which launch this is through
// FORGEENV_TEST_PHASE: `untrusted` runs only *.untrusted.test.js (workspace trust enabled, the
// folder untrusted), `trusted` (the default) runs all the other suites.
import * as fs from 'node:fs';
import * as path from 'node:path';
import Mocha from 'mocha';

export function run(): Promise<void> {
  // Stack traces that point at the .ts sources (the extension host replaces Error.prepareStackTrace,
  // so Node's own source-map support has no effect here).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  require('source-map-support').install();
  const phase = process.env.FORGEENV_TEST_PHASE === 'untrusted' ? 'untrusted' : 'trusted';
  const mocha = new Mocha({ ui: 'tdd', color: false, timeout: 60_000, reporter: 'spec', grep: process.env.VSCODE_TEST_GREP });
  const files = fs
    .readdirSync(__dirname)
    .filter((f) => f.endsWith('.test.js'))
    .filter((f) => (phase === 'untrusted') === f.endsWith('.untrusted.test.js'))
    .sort();
  for (const f of files) mocha.addFile(path.join(__dirname, f));
  console.log(`[forgeenv-tests] start (${phase}: ${files.length} files)`);
  return new Promise((resolve, reject) => {
    const runner = mocha.run((failures) => {
      const { passes = 0, pending = 0 } = runner.stats ?? {};
      // The closing line that the runner and CI count: "N passed, N failed[, N skipped]".
      console.log(`${passes} passed, ${failures} failed${pending ? `, ${pending} skipped` : ''}`);
      if (failures > 0) reject(new Error(`${failures} tests failed.`));
      else resolve();
    });
  });
}
