// "Check inverse": applying the inverse spec to the broken script must give back the original
// byte for byte (that is what makes the oracle repair exist). No vscode import.
import { applySpec } from '../../../env/primitives/registry';
import { PrimitiveRefusal } from '../../../env/primitives/types';
import type { PrimitiveSpec } from '../../../env/schemas';

export type InverseCheck =
  | { exact: true; restored: string }
  | { exact: false; restored: string; mismatch: { line: number; expected: string; actual: string }; summary: string }
  | { exact: false; restored: undefined; error: string; summary: string };

/** The first differing line (1-based) of two texts, with both versions of it. */
export function firstMismatch(expected: string, actual: string): { line: number; expected: string; actual: string } {
  const a = expected.split('\n');
  const b = actual.split('\n');
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] !== b[i]) return { line: i + 1, expected: a[i] ?? '(end of file)', actual: b[i] ?? '(end of file)' };
  }
  return { line: a.length, expected: '', actual: '' };
}

export function checkInverse(original: string, broken: string, inverse: PrimitiveSpec): InverseCheck {
  let restored: string;
  try {
    restored = applySpec(broken, inverse).script;
  } catch (e) {
    const why = e instanceof PrimitiveRefusal ? e.reason : e instanceof Error ? e.message : String(e);
    return {
      exact: false,
      restored: undefined,
      error: why,
      summary: `The inverse ${inverse.primitive_type} refused the broken script: ${why}`,
    };
  }
  if (restored === original) return { exact: true, restored };
  const mismatch = firstMismatch(original, restored);
  const detail =
    mismatch.expected === mismatch.actual
      ? 'line endings or the final newline differ'
      : `expected ${JSON.stringify(mismatch.expected)}, got ${JSON.stringify(mismatch.actual)}`;
  return {
    exact: false,
    restored,
    mismatch,
    summary: `The inverse ${inverse.primitive_type} does not restore the original: line ${mismatch.line}: ${detail}`,
  };
}
