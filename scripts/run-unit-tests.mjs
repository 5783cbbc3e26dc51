// Runs the vscode-free unit tests (test/unit/**/*.test.ts) with Node's own test runner.
// TypeScript is loaded through tsx; Node 20's runner has no glob support, so we list the files here.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const filter = process.argv.slice(2);
function walk(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? walk(p) : p.endsWith('.test.ts') ? [p] : [];
  });
}
// Matched against the path relative to the checkout: a checkout in a folder named e.g. `wt-sandbox`
// would otherwise match every file for `-- sandbox`.
const files = walk(join(root, 'test/unit'))
  .map((f) => relative(root, f))
  .filter((f) => filter.length === 0 || filter.some((s) => f.includes(s)))
  .sort();
if (files.length === 0) {
  console.error('no unit test files found');
  process.exit(1);
}
const r = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', ...files], {
  cwd: root,
  stdio: 'inherit',
});
process.exit(r.status ?? 1);
