// Shared plumbing for primitives: parse-or-refuse, edit application, results.
import { applyEdits, parsePython, type ParsedScript } from '../python/syntax';
import type { PrimitiveSpec } from '../schemas';
import { PrimitiveRefusal, type PrimitiveResult } from './types';

export type Edit = { from: number; to: number; insert: string };

/** Parses `script`; a script with a syntax error is refused with the line of the first error. */
export function parseOrRefuse(primitive: string, script: string): ParsedScript {
  const p = parsePython(script);
  if (p.errorLine !== undefined) throw new PrimitiveRefusal(primitive, `the script does not parse (syntax error near line ${p.errorLine}); fix it first`);
  return p;
}

/** Parses for candidate listing: a script that does not parse simply has no candidates. */
export function parseOrNull(script: string): ParsedScript | null {
  const p = parsePython(script);
  return p.errorLine === undefined ? p : null;
}

export function resultOf(primitive: string, script: string, edits: Edit[], inverse: PrimitiveSpec, nothing: string): PrimitiveResult {
  if (edits.length === 0) throw new PrimitiveRefusal(primitive, nothing);
  return { script: applyEdits(script, edits), inverse, edits };
}

/** First occurrence range of a set of edits (for candidates). */
export function spanOf(edits: Edit[]): { from: number; to: number } {
  return { from: Math.min(...edits.map((e) => e.from)), to: Math.max(...edits.map((e) => e.to)) };
}

/** Well-known Hugging Face / PyTorch top-level modules: imported names from these are API surface. */
export const LIBRARY_MODULES = new Set(['transformers', 'datasets', 'evaluate', 'trl', 'peft', 'torch', 'accelerate', 'diffusers', 'tokenizers', 'sentence_transformers']);
export const isLibraryModule = (m: string): boolean => LIBRARY_MODULES.has(m.split('.')[0]!);
