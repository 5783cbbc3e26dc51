// Builds a dataset for the trl-dpo export: two real oracle episodes (`forgeenv episode --repair
// oracle --out`, simulated mode) give the passing repairs,
// plus failing attempts at the same broken scripts (the broken script is rebuilt by the
// environment, and the failing repair exits before training), one as a model attempt, one as a
// Suggest Repair suggestion kept in a record's info, one stored twice; and one record stored as a
// failure whose repair in fact passes (the export must leave it out). Not a test file itself.
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { main } from '../../src/cli/main';
import { join } from 'node:path';
import { applyRepairDiff, createRepairDiff } from '../../src/env/diff/diff';
import type { ForgeEnvironment } from '../../src/env/episode/environment';
import { recordHash } from '../../src/store/hashing';
import { DemonstrationRecordSchema, type DemonstrationRecord } from '../../src/store/records';
import { verifiedSuccess } from '../../src/store/export/selection';

export const FAILING_PREFIX = 'raise SystemExit(3)  # a repair that gives up\n';

async function brokenScriptOf(env: ForgeEnvironment, r: DemonstrationRecord): Promise<string> {
  await env.reset({
    taskId: r.task_id,
    seed: r.info.seed,
    library_versions: r.info.library_versions,
    target_category: r.info.primitive.primitive_type,
  });
  await env.step({ breakage: { primitive_type: r.info.primitive.primitive_type, params: r.info.primitive.params } });
  const broken = env.state?.broken_script;
  if (typeof broken !== 'string') throw new Error(`no broken script for ${r.task_id}`);
  return broken;
}

function attempt(r: DemonstrationRecord, diff: string, success: boolean, info: Record<string, unknown> = {}): DemonstrationRecord {
  const { verification: _v, ...rest } = r.info;
  return {
    ...r,
    repair_completion: diff,
    success,
    visible_reward: success ? r.visible_reward : 0,
    info: {
      ...rest,
      ...(success ? { verification: r.info.verification } : {}),
      record_id: randomUUID(),
      record_hash: recordHash(r.info.task_hash, diff),
      ...info,
    },
  };
}

/** Episodes of these (task, seed) are the dataset's passing repairs. */
export const DPO_EPISODES: ReadonlyArray<[string, number]> = [
  ['simple_regression', 1],
  ['tiny_mlp_mnist', 2],
];

export async function buildDpoDataset(outDir: string, env: ForgeEnvironment): Promise<{ passing: DemonstrationRecord[] }> {
  for (const [task, seed] of DPO_EPISODES) {
    const code = await main(
      ['episode', '--task', task, '--seed', String(seed), '--repair', 'oracle', '--out', outDir],
      () => undefined,
      () => undefined,
    );
    if (code !== 0) throw new Error(`forgeenv episode --task ${task} exited ${code}`);
  }
  const lines = readFileSync(join(outDir, 'demonstrations.jsonl'), 'utf8').split('\n').filter(Boolean);
  const records = lines.flatMap((l) => {
    try {
      const p = DemonstrationRecordSchema.safeParse(JSON.parse(l));
      return p.success ? [p.data] : [];
    } catch {
      return [];
    }
  });
  const passing = records.filter((r) => verifiedSuccess(r)).slice(0, 2);
  if (passing.length < 2) throw new Error('the fixture needs two passing records');
  const [a, b] = passing as [DemonstrationRecord, DemonstrationRecord];
  const brokenA = await brokenScriptOf(env, a);
  const brokenB = await brokenScriptOf(env, b);
  const failA = createRepairDiff(brokenA, FAILING_PREFIX + brokenA);
  const failB = createRepairDiff(brokenB, FAILING_PREFIX + brokenB);
  const fixedA = applyRepairDiff(brokenA, a.repair_completion);
  if (!fixedA.ok) throw new Error(fixedA.error);
  const out: DemonstrationRecord[] = [
    a,
    // A model's failing attempt, stored twice (one candidate).
    attempt(a, failA, false, { agent: { kind: 'model', model: 'fixture-model' } }),
    attempt(a, failA, false, { agent: { kind: 'model', model: 'fixture-model' } }),
    // Stored as a failure, but it passes: left out at export.
    attempt(a, createRepairDiff(brokenA, `${fixedA.script}# a comment only\n`), false),
    // A passing human repair that kept the model's failing suggestion beside it.
    {
      ...b,
      info: {
        ...b.info,
        suggestion: { agent: { kind: 'model', model: 'fixture-model' }, diff: failB, accepted: false, score: { success: false } },
      },
    },
  ];
  writeFileSync(join(outDir, 'demonstrations.jsonl'), out.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return { passing: [a, b] };
}
