// Nested column shapes (a list of structs of structs, as UltraFeedback's `completions`): what a dataset
// table entry declares for a column of kind `nested`, so the synthetic data has the real structure a
// script walks (`ex["completions"][i]["annotations"]["helpfulness"]["Rating"]`). Built by
// make_hub_items.py (datasets features: a list of a struct is `[{…}]`, a list of a value a Sequence)
// and by dataFiles.ts for local json files.
import { z } from 'zod';

export type NestedShape =
  /** A scalar; `values`: the real values when a script compares with them (model names, "1".."5" ratings). */
  | { value: 'string' | 'int' | 'float' | 'bool'; values?: string[] }
  /** A list; `length`: a fixed length when the dataset has one (4 completions per prompt), drawn without repeats from `values`. */
  | { list: NestedShape; length?: number }
  | { struct: Record<string, NestedShape> };

const FIELD = z.string().regex(/^[A-Za-z_][\w -]{0,60}$/);

export const NestedShapeSchema: z.ZodType<NestedShape> = z.lazy(() =>
  z.union([
    z
      .object({ value: z.enum(['string', 'int', 'float', 'bool']), values: z.array(z.string().max(200)).min(1).max(200).optional() })
      .strict(),
    z.object({ list: NestedShapeSchema, length: z.number().int().min(1).max(32).optional() }).strict(),
    z.object({ struct: z.record(FIELD, NestedShapeSchema) }).strict(),
  ]),
);

/** A synthetic value of `shape` (deterministic for a given `r`); `text()` gives a sentence. */
export function nestedValue(shape: NestedShape, r: () => number, text: () => string): unknown {
  if ('struct' in shape) return Object.fromEntries(Object.entries(shape.struct).map(([k, s]) => [k, nestedValue(s, r, text)]));
  if ('list' in shape) {
    const n = shape.length ?? 1 + Math.floor(r() * 3);
    const item = shape.list;
    // A fixed-length list of pooled values (the models that answered one prompt): distinct when the pool allows.
    if ('value' in item && item.values && item.values.length >= n) {
      const pool = [...item.values];
      return Array.from({ length: n }, () => pool.splice(Math.floor(r() * pool.length), 1)[0]);
    }
    return Array.from({ length: n }, () => nestedValue(item, r, text));
  }
  if (shape.values) {
    const v = shape.values[Math.floor(r() * shape.values.length)];
    return shape.value === 'string' ? v : shape.value === 'bool' ? v === 'true' : Number(v);
  }
  if (shape.value === 'string') return text();
  if (shape.value === 'int') return Math.floor(r() * 5);
  if (shape.value === 'float') return Math.round(r() * 1e4) / 1e4;
  return r() < 0.5;
}
