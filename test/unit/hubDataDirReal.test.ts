// One hub dataset id loaded with two `data_dir`s (a reward/eval pair of subfolders), built for real by each
// snapshot venv's own `datasets` (make_hub_items.py) and read back offline the way the script reads it.
// datasets < 2.19 cannot find such a config in its prepared cache offline (before 2.14 only a cached loading
// script loads offline; 2.14–2.18's `cache` builder takes the newest config whatever the data_dir and appends
// the data_dir to its id again), so those releases get the item as a cached loading script; later ones as a
// prepared cache. Either way each data_dir must give its own rows, and reading must write no data into the hub
// (no dataset prepared at run time).
import assert from 'node:assert/strict';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { deriveHubNeeds } from '../../src/env/hub/needs';
import { realHubFixture } from './realHubFixture';

const { skipReason, buildItems, readBack } = realHubFixture('forgeenv-datadir-');

// A script the project has never seen: one dataset id, two subfolders.
const SCRIPT = `
from datasets import load_dataset
train = load_dataset("acme/support-pairs", data_dir="data/rl", split="train")
evals = load_dataset("acme/support-pairs", data_dir="data/evaluation", split="train")
print(train[0]["question"], evals[0]["answer"])
`;

const READER = `
import json
from datasets import load_dataset
train = load_dataset("acme/support-pairs", data_dir="data/rl", split="train")
evals = load_dataset("acme/support-pairs", data_dir="data/evaluation", split="train")
again = load_dataset("acme/support-pairs", data_dir="data/rl", split="train")
print(json.dumps({"train": [train.num_rows, sorted(train.column_names)], "evals": [evals.num_rows, sorted(evals.column_names)], "again": again.num_rows}))
`;

/** Every data file under `dir` with its size and mtime: what a read-only use leaves unchanged. */
function listing(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      // Only prepared data: datasets' own lock files and module __init__.py are written beside any cache it reads.
      else if (p.endsWith('.arrow') || p.endsWith('dataset_info.json')) out.push(`${p} ${statSync(p).size} ${statSync(p).mtimeMs}`);
    }
  };
  walk(dir);
  return out.sort();
}

for (const snapshot of ['2023-06', '2023-12', '2024-09', '2026-11']) {
  describe(`one dataset id with two data_dirs in the ${snapshot} venv`, { skip: skipReason(snapshot) }, () => {
    test('each data_dir loads its own rows offline, twice, without writing into the hub', { timeout: 900_000 }, async () => {
      const needs = deriveHubNeeds(SCRIPT);
      assert.deepEqual(
        needs.datasets.map((d) => d.data_dir),
        ['data/rl', 'data/evaluation'],
      );
      // Distinct row counts tell the two subfolders apart.
      needs.datasets[1].rows = 7;
      const r = await buildItems(snapshot, {
        needs,
      });
      assert.deepEqual(r.refusals, []);
      const before = listing(r.hubDir);
      const res = JSON.parse(readBack(snapshot, r.hubDir, READER).trim().split('\n').pop()!) as Record<string, unknown>;
      assert.deepEqual(res, { train: [64, ['answer', 'question']], evals: [7, ['answer', 'question']], again: 64 });
      const after = listing(r.hubDir);
      assert.deepEqual(
        after.filter((f) => !before.includes(f)),
        [],
        'prepared data written or changed at run time',
      );
    });
  });
}
