// Duplicate groups over the summary index's columns: equal strings group together, a different
// string under the same integer key (a key28 collision) never joins them, and only the positions
// asked about count.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { duplicateGroups, key28, StrColumn } from '../../src/store/columns';

function column(values: string[]): StrColumn {
  const c = new StrColumn();
  for (const v of values) c.push(v);
  return c;
}

/** The same answer computed the plain way, with a map of strings. */
function reference(values: string[], positions: number[]): { groups: number; extra: number } {
  const sizes = new Map<string, number>();
  for (const p of positions) sizes.set(values[p], (sizes.get(values[p]) ?? 0) + 1);
  let groups = 0;
  let extra = 0;
  for (const s of sizes.values()) {
    if (s > 1) {
      groups++;
      extra += s - 1;
    }
  }
  return { groups, extra };
}

describe('duplicateGroups', () => {
  test('counts groups of equal strings and their extra copies, over a subset of positions', () => {
    const values = ['a', 'b', 'a', 'c', 'a', 'b', 'd'];
    const keys = values.map(key28);
    assert.deepEqual(duplicateGroups(keys, column(values), [0, 1, 2, 3, 4, 5, 6]), { groups: 2, extra: 3 });
    assert.deepEqual(duplicateGroups(keys, column(values), [0, 1, 3, 5]), { groups: 1, extra: 1 }, 'only the b pair is in the subset');
    assert.deepEqual(duplicateGroups(keys, column(values), []), { groups: 0, extra: 0 });
  });

  test('different strings under one key (a collision) are told apart by their characters', () => {
    const values = ['x1', 'y2', 'x1', 'z3', 'y2', 'y2'];
    const sameKey = values.map(() => 7); // every string collides
    assert.deepEqual(duplicateGroups(sameKey, column(values), [0, 1, 2, 3, 4, 5]), { groups: 2, extra: 3 });
  });

  test('matches a map of strings on random data with forced collisions', () => {
    let seed = 42;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const values = Array.from({ length: 5000 }, () => `h${Math.floor(rand() * 3000)}`);
    const keys = values.map((v) => key28(v) & 0xff); // 256 keys for ~3000 strings: many collisions
    const positions = Array.from({ length: values.length }, (_, i) => i).filter(() => rand() < 0.8);
    assert.deepEqual(duplicateGroups(keys, column(values), positions), reference(values, positions));
  });
});
