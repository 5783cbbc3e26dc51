// The quick checks the summary runs before zod (src/store/quickCheck.ts) must never accept what
// the schema rejects, and must accept the valid records we write (or they save nothing). Every
// field of valid records is replaced by values of every JSON type and by near-miss formats.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { quickDemonstration, quickReview, quickSkip } from '../../src/store/quickCheck';
import { DemonstrationRecordSchema, REVIEW_SCHEMA, ReviewRecordSchema, SKIP_SCHEMA, SkipRecordSchema } from '../../src/store/records';
import { makeDemo, uuidFor } from './storeTestUtils';
import type { z } from 'zod';

const SMALL = resolve(__dirname, '../fixtures/datasets/small');

const REPLACEMENTS: unknown[] = [
  undefined,
  null,
  '',
  'x',
  ' ',
  0,
  -0,
  -1,
  1,
  2,
  1.5,
  Number.MAX_SAFE_INTEGER + 2,
  Infinity,
  NaN,
  true,
  false,
  [],
  ['x'],
  {},
  { a: 'x' },
  { a: 1 },
  { '': '1.0' },
  uuidFor(5),
  'not-a-uuid',
  '00000000-0000-0000-0000-000000000000',
  'a'.repeat(64),
  'A'.repeat(64),
  'g'.repeat(64),
  '2025-03-01T10:00:00.000Z',
  '2025-03-01T10:00:00',
  '2025-13-01T10:00:00Z',
  '../escape',
  '/abs/path',
  '.hidden',
  'ep-1',
  'simulated',
  'real',
  'approve',
  'reject',
  'skip',
  'review',
  'too_hard',
  'RenameApiCall',
  'task_a',
  '4.50.0',
  '4.x',
  'synthetic',
  'forgeenv.demonstration/v1',
  REVIEW_SCHEMA,
  SKIP_SCHEMA,
];

/** Every path to a value inside `v` (objects and arrays), the root excluded. */
function paths(v: unknown, prefix: string[] = []): string[][] {
  if (v === null || typeof v !== 'object') return [];
  const out: string[][] = [];
  for (const k of Object.keys(v)) {
    const p = [...prefix, k];
    out.push(p, ...paths((v as Record<string, unknown>)[k], p));
  }
  return out;
}

function withValue(v: unknown, path: string[], value: unknown): unknown {
  const copy = structuredClone(v) as Record<string, unknown>;
  let at = copy;
  for (const k of path.slice(0, -1)) at = at[k] as Record<string, unknown>;
  if (value === undefined) delete at[path[path.length - 1]];
  else at[path[path.length - 1]] = value;
  return copy;
}

function assertSound(name: string, quick: (v: unknown) => boolean, schema: z.ZodType, valid: unknown[]): void {
  let tried = 0;
  let rejected = 0;
  for (const base of valid) {
    assert.equal(quick(base), true, `${name}: a valid record passes quickly`);
    assert.equal(schema.safeParse(base).success, true);
    const extra = [...paths(base), ['extra_key'], ...('info' in (base as object) ? [['info', 'extra_key']] : [])];
    for (const p of extra) {
      for (const value of REPLACEMENTS) {
        const v = withValue(base, p, value);
        tried++;
        if (!quick(v)) {
          rejected++;
          continue;
        }
        const r = schema.safeParse(v);
        assert.ok(
          r.success,
          `${name}: quick check accepted ${p.join('.')} = ${JSON.stringify(value)}, which the schema rejects: ${r.success ? '' : r.error.message}`,
        );
      }
    }
  }
  assert.ok(rejected > tried / 4, `${name}: most mutations are not accepted quickly (${rejected}/${tried})`);
}

function jsonLines(file: string): unknown[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as unknown];
      } catch {
        return [];
      }
    });
}

describe('quick checks never accept what the schema rejects', () => {
  test('demonstrations', () => {
    const first = makeDemo({ n: 1 });
    const valid = [
      first,
      makeDemo({ n: 2, previous: first, breakageFailed: false }),
      makeDemo({ n: 3, success: false, versions: { transformers: '4.45.0' } }),
    ];
    assertSound('demonstration', quickDemonstration, DemonstrationRecordSchema, valid);
  });

  test('skips and reviews', () => {
    const skip = {
      kind: 'skip',
      schema: SKIP_SCHEMA,
      episode_id: 'ep-1',
      task_id: 't',
      primitive: { primitive_type: 'RenameApiCall', params: {} },
      reason: 'other',
      note: 'n',
      annotator_id: 'a',
      at: '2025-03-01T10:00:00.000Z',
      session_id: 's',
      seed: 3,
    };
    assertSound('skip', quickSkip, SkipRecordSchema, [skip]);
    const review = {
      kind: 'review',
      schema: REVIEW_SCHEMA,
      review_id: uuidFor(7),
      record_id: uuidFor(8),
      reviewer: 'r',
      verdict: 'approve',
      comment: '',
      at: '2025-03-01T10:00:00+02:00',
    };
    assertSound('review', quickReview, ReviewRecordSchema, [review]);
  });

  test('on the fixture folder: the same verdict as the schema for every line the quick check accepts, and every valid line accepted', () => {
    const cases: Array<[string, (v: unknown) => boolean, z.ZodType]> = [
      ['demonstrations.jsonl', quickDemonstration, DemonstrationRecordSchema],
      ['skips.jsonl', quickSkip, SkipRecordSchema],
      ['reviews.jsonl', quickReview, ReviewRecordSchema],
    ];
    for (const [file, quick, schema] of cases) {
      const lines = jsonLines(join(SMALL, file));
      assert.ok(lines.length > 0);
      for (const v of lines) assert.equal(quick(v), schema.safeParse(v).success, `${file}: ${JSON.stringify(v).slice(0, 80)}`);
    }
  });
});
