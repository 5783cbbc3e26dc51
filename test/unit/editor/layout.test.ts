// The editor layer's shape, kept by tests: no file in src/editor over 300 lines, the repair
// session and everything it imports free of `vscode` (so it is unit-tested here), and no quick
// pick or input box that closes silently when focus moves away.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, test } from 'node:test';

const root = resolve(__dirname, '../../..');
const editorDir = join(root, 'src/editor');

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? walk(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** Every module `file` imports, transitively, within src/ (relative imports only). */
function importClosure(file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen;
  seen.add(file);
  for (const m of readFileSync(file, 'utf8').matchAll(/^(?:import|export)[^'"]*from '(\.[^']+)'/gm)) {
    const base = resolve(dirname(file), m[1]);
    const target = [`${base}.ts`, join(base, 'index.ts')].find((p) => existsSync(p));
    if (target) importClosure(target, seen);
  }
  return seen;
}

describe('editor layout', () => {
  test('no file in src/editor is over 300 lines, and the old controller is gone', () => {
    const long = walk(editorDir)
      .map((f) => ({ f: f.slice(root.length + 1), lines: readFileSync(f, 'utf8').split('\n').length - 1 }))
      .filter((x) => x.lines > 300);
    assert.deepEqual(long, []);
    assert.equal(existsSync(join(editorDir, 'controller.ts')), false);
  });

  test('the repair session and everything it imports never import vscode', () => {
    const closure = [...importClosure(join(editorDir, 'episode/session.ts'))];
    assert.ok(closure.length > 10, `walked ${closure.length} modules`);
    const offenders = closure
      .filter((f) => /from 'vscode'|require\('vscode'\)/.test(readFileSync(f, 'utf8')))
      .map((f) => f.slice(root.length + 1));
    assert.deepEqual(offenders, []);
  });

  test('every quick pick and input box of the editor stays open when focus moves away', () => {
    const silent: string[] = [];
    for (const f of walk(editorDir)) {
      const text = readFileSync(f, 'utf8');
      for (const m of text.matchAll(/vscode\.window\.(showQuickPick|showInputBox)(?:<[^>(]*>)?\(/g)) {
        // The call's text up to its closing parenthesis.
        let depth = 1;
        let i = m.index + m[0].length;
        while (depth > 0 && i < text.length) {
          depth += '([{'.includes(text[i]) ? 1 : ')]}'.includes(text[i]) ? -1 : 0;
          i++;
        }
        if (!text.slice(m.index, i).includes('ignoreFocusOut: true'))
          silent.push(`${f.slice(root.length + 1)}:${text.slice(0, m.index).split('\n').length}`);
      }
      for (const m of text.matchAll(/const (\w+) = vscode\.window\.createQuickPick/g)) {
        if (!text.includes(`${m[1]}.ignoreFocusOut = true`)) silent.push(`${f.slice(root.length + 1)} (createQuickPick)`);
      }
    }
    assert.deepEqual(silent, []);
  });
});
