// Shared helpers for the primitive tests: the scripts to run over (our fixtures plus whatever
// the task corpus holds), and checks that an edit touched only the lines it should.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { structuredPatch } from 'diff';
import { tasksDir } from '../../src/env/paths';
import { applySpec } from '../../src/env/primitives/registry';
import { PrimitiveRefusal, type PrimitiveResult } from '../../src/env/primitives/types';

export const FIXTURE_DIR = join(__dirname, '..', 'fixtures', 'scripts');

export function fixture(name: string): string {
  return readFileSync(join(FIXTURE_DIR, name), 'utf8');
}

export function corpusTask(name: string): string {
  return readFileSync(join(tasksDir(), name), 'utf8');
}

function pyFiles(dir: string, label: string): Array<{ name: string; script: string }> {
  let files: string[];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith('.py'));
  } catch {
    return [];
  }
  return files.sort().map((f) => ({ name: `${label}/${f}`, script: readFileSync(join(dir, f), 'utf8') }));
}

/** Every fixture script and every corpus task script (the corpus folder is globbed, not listed). */
export function allScripts(): Array<{ name: string; script: string }> {
  return [...pyFiles(FIXTURE_DIR, 'fixtures'), ...pyFiles(tasksDir(), 'tasks')];
}

/** Applies, checks that the inverse restores the input byte for byte, and returns the result. */
export function breakAndRestore(script: string, primitive_type: string, params: Record<string, unknown>): PrimitiveResult {
  const result = applySpec(script, { primitive_type, params });
  assert.notEqual(result.script, script, `${primitive_type} changed nothing`);
  const restored = applySpec(result.script, result.inverse).script;
  assert.equal(restored, script, `${primitive_type}: the inverse ${result.inverse.primitive_type} did not restore the script exactly`);
  return result;
}

/** 1-based line numbers of the input that the change from `before` to `after` removed or replaced. */
export function changedLines(before: string, after: string): number[] {
  const patch = structuredPatch('a', 'b', before, after, '', '', { context: 0 });
  const lines: number[] = [];
  for (const h of patch.hunks) {
    for (let i = 0; i < h.oldLines; i++) lines.push(h.oldStart + i);
    // A pure insertion changes no old line; count the line it follows so the position is checked too.
    if (h.oldLines === 0) lines.push(h.oldStart);
  }
  return lines;
}

/** The input lines (1-based) whose text contains `needle`. */
export function linesWith(script: string, needle: string): number[] {
  return script.split('\n').flatMap((l, i) => (l.includes(needle) ? [i + 1] : []));
}

/** Asserts the primitive refuses with a reason matching `reason`. */
export function assertRefuses(script: string, primitive_type: string, params: Record<string, unknown>, reason: RegExp): void {
  assert.throws(
    () => applySpec(script, { primitive_type, params }),
    (e: unknown) => {
      assert.ok(e instanceof PrimitiveRefusal, `expected a PrimitiveRefusal, got ${String(e)}`);
      assert.match(e.message, reason);
      return true;
    },
  );
}

/** A copy of `script` with a syntax error appended near its end, and that line's number. */
export function withSyntaxError(script: string): { script: string; line: number } {
  const broken = `${script.trimEnd()}\nvalue = compute(1,\n`;
  return { script: broken, line: broken.trimEnd().split('\n').length };
}
