// Times summary and exports on a large synthetic dataset folder (not kept in git):
//   node --import tsx bench/store.bench.ts [--records 100000] [--keep] [--dir EXISTING_FOLDER]
// The folder goes to the OS temp dir and is deleted afterwards unless --keep is given;
// --dir reuses a folder kept earlier (no generation, never deleted).
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createDemonstrationRecord } from '../src/store/demonstrationBuilder';
import { exportDataset } from '../src/store/export/exportDataset';
import type { ExportFormat, PromptStyle } from '../src/store/export/formats';
import { appendJsonl, appendLines } from '../src/store/jsonlFile';
import {
  DATASET_FILES,
  DemonstrationRecordSchema,
  REVIEW_SCHEMA,
  SKIP_REASONS,
  SKIP_SCHEMA,
  type DemonstrationRecord,
} from '../src/store/records';
import { summarizeDataset } from '../src/store/summary';

const { values } = parseArgs({
  options: { records: { type: 'string', default: '100000' }, keep: { type: 'boolean', default: false }, dir: { type: 'string' } },
});
const N = Number(values.records);
const PRIMITIVES = [
  'RenameApiCall',
  'DeprecateImport',
  'ChangeArgumentSignature',
  'ModifyConfigField',
  'RemoveDeprecatedMethod',
  'RestructureDatasetSchema',
  'ChangeTokenizerBehavior',
  'ChangeReturnType',
];
const TASKS = Array.from({ length: 60 }, (_, i) => `task_${String(i).padStart(3, '0')}`);

// A deterministic PRNG so runs are comparable.
let state = 12345;
const rand = () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)];

function script(task: string): string {
  const lines = [
    `# ${task}: fine-tune a classifier`,
    'from transformers import AutoTokenizer, AutoModelForSequenceClassification, Trainer, TrainingArguments',
    'from datasets import load_dataset',
  ];
  for (let i = 0; i < 36; i++) lines.push(`value_${i} = compute_step(${i}, batch_size=16, learning_rate=2e-5)  # step ${i}`);
  lines.push(
    'args = TrainingArguments(output_dir="out", eval_strategy="epoch")',
    'trainer = Trainer(model=model, args=args)',
    'trainer.train()',
  );
  return lines.join('\n') + '\n';
}
const SCRIPTS = new Map(TASKS.map((t) => [t, script(t)]));
const TRACE =
  'Traceback (most recent call last):\n  File "train.py", line 40, in <module>\n    args = TrainingArguments(output_dir="out", evaluation_strategy="epoch")\nTypeError: TrainingArguments.__init__() got an unexpected keyword argument \'evaluation_strategy\'';

function diff(added: number, removed: number, salt: number): string {
  const out = ['--- a/train.py', '+++ b/train.py', `@@ -40,${removed + 1} +40,${added + 1} @@`, ' import os'];
  for (let i = 0; i < removed; i++) out.push(`-args = TrainingArguments(output_dir="out", evaluation_strategy="epoch")  # ${i}`);
  for (let i = 0; i < added; i++) out.push(`+args = TrainingArguments(output_dir="out", eval_strategy="epoch")  # ${i} v${salt}`);
  return out.join('\n') + '\n';
}

function synthetic(i: number, previous?: DemonstrationRecord): DemonstrationRecord {
  const task = previous?.task_id ?? pick(TASKS);
  const primitive = previous?.primitive_type ?? pick(PRIMITIVES);
  const seed = previous?.info.seed ?? Math.floor(rand() * 1000);
  const success = rand() < 0.8;
  const src = SCRIPTS.get(task)!;
  const prompt = `The training script below broke.\nTarget category: ${primitive}\ntransformers=4.50.0\ndatasets=3.2.0\ntrl=0.12.0\n\`\`\`python\n${src}\`\`\`\nError:\n${TRACE}\nAnswer with a unified diff.`;
  const activeMs = Math.floor(20_000 + rand() * 900_000);
  return createDemonstrationRecord({
    rollout: {
      task_id: task,
      primitive_type: primitive,
      drift_prompt: `Target category: ${primitive}\n\`\`\`python\n${src}\`\`\``,
      drift_completion: JSON.stringify({
        primitive_type: primitive,
        params: { old_name: 'eval_strategy', new_name: 'evaluation_strategy' },
      }),
      repair_prompt: prompt,
      repair_completion: diff(1 + Math.floor(rand() * 3), 1 + Math.floor(rand() * 3), i),
      visible_reward: success ? 1.2 + rand() * 0.6 : rand() * 0.5 - 0.2,
      visible_breakdown: {
        script_executes: success ? 1 : 0,
        loss_decreased: success ? 1 : 0,
        checkpoint_appeared: success ? 1 : 0,
        diff_size_penalty: 0,
      },
      held_out_breakdown: { executed_cleanly: success ? 1 : 0 },
      success,
      error_trace: success ? '' : TRACE,
      info: {},
    },
    originalScript: src,
    episodeId: previous?.info.episode_id ?? `ep-${i}`,
    seed,
    primitive: { primitive_type: primitive, params: { old_name: 'eval_strategy', new_name: 'evaluation_strategy' } },
    libraryVersions: { transformers: '4.50.0', datasets: '3.2.0', trl: '0.12.0' },
    provenance: {
      session_id: `s-${i % 97}`,
      annotator_id: `annotator-${i % 12}`,
      mode: 'simulated',
      interpreter: 'python3',
      extension_version: '0.1.0',
      env_version: '0.1.0',
      started_at: '2025-03-01T10:00:00.000Z',
      submitted_at: '2025-03-01T10:10:00.000Z',
      active_ms: activeMs,
      wall_ms: activeMs + 30_000,
      runs: 1 + (i % 4),
    },
    previous,
    recordId: `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`,
  });
}

async function time<T>(label: string, fn: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  const r = await fn();
  console.log(`${label.padEnd(34)} ${((performance.now() - t0) / 1000).toFixed(2).padStart(7)} s`);
  return r;
}

async function main(): Promise<void> {
  const reuse = values.dir;
  const dir = reuse ?? mkdtempSync(join(tmpdir(), 'forgeenv-bench-store-'));
  const outDir = join(dir, 'exports');
  console.log(`dataset folder: ${dir}`);
  try {
    if (!reuse)
      await time(`generate ${N} demonstrations`, async () => {
        const file = join(dir, DATASET_FILES.demonstrations);
        let batch: string[] = [];
        const recent: DemonstrationRecord[] = [];
        for (let i = 0; i < N; i++) {
          // ~3% are revisions of a recent record (reopened episodes).
          const prev = recent.length && rand() < 0.03 ? recent.splice(Math.floor(rand() * recent.length), 1)[0] : undefined;
          const rec = synthetic(i, prev);
          recent.push(rec);
          if (recent.length > 50) recent.shift();
          batch.push(JSON.stringify(DemonstrationRecordSchema.parse(rec)));
          if (batch.length === 1000) {
            await appendLines(file, batch, []);
            batch = [];
          }
        }
        await appendLines(file, batch, []);
        const reviews = Array.from({ length: Math.floor(N / 10) }, (_, k) => ({
          kind: 'review',
          schema: REVIEW_SCHEMA,
          review_id: `10000000-0000-4000-8000-${k.toString(16).padStart(12, '0')}`,
          record_id: `00000000-0000-4000-8000-${Math.floor(rand() * N)
            .toString(16)
            .padStart(12, '0')}`,
          reviewer: 'rev',
          verdict: rand() < 0.85 ? 'approve' : 'reject',
          comment: '',
          at: '2025-03-02T10:00:00.000Z',
        }));
        await appendJsonl(join(dir, DATASET_FILES.reviews), (await import('../src/store/records')).ReviewRecordSchema, reviews, 'review');
        const skips = Array.from({ length: Math.floor(N / 50) }, (_, k) => ({
          kind: 'skip',
          schema: SKIP_SCHEMA,
          episode_id: `skip-${k}`,
          task_id: pick(TASKS),
          primitive: { primitive_type: pick(PRIMITIVES), params: {} },
          reason: pick(SKIP_REASONS),
          note: '',
          annotator_id: `annotator-${k % 12}`,
          at: '2025-03-02T10:00:00.000Z',
        }));
        await appendJsonl(join(dir, DATASET_FILES.skips), (await import('../src/store/records')).SkipRecordSchema, skips, 'skip');
      });
    console.log(`demonstrations.jsonl: ${(statSync(join(dir, DATASET_FILES.demonstrations)).size / 2 ** 20).toFixed(0)} MiB`);
    const summary = await time('summarizeDataset', () => summarizeDataset(dir));
    console.log(
      `  ${summary.counts.submitted} submitted, ${summary.counts.superseded} superseded, ${summary.counts.skipped} skipped, ${summary.problems.total} problems`,
    );
    const runs: Array<[ExportFormat, PromptStyle]> = [
      ['trl-sft', 'standard'],
      ['trl-sft', 'conversational'],
      ['trl-grpo', 'standard'],
      ['swebench', 'standard'],
    ];
    for (const [format, style] of runs) {
      const r = await time(`export ${format} (${style})`, () =>
        exportDataset({
          format,
          style,
          dir,
          out: join(outDir, `${format}-${style}`, `${format}-${style}.jsonl`),
          systemPrompt: 'SYSTEM PROMPT',
        }),
      );
      console.log(`  ${r.rows} rows, ${r.deduplicated} deduplicated, ${(statSync(r.out).size / 2 ** 20).toFixed(0)} MiB`);
    }
    console.log(`peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB`);
  } finally {
    if (reuse) rmSync(outDir, { recursive: true, force: true });
    else if (values.keep) console.log(`kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

void main();
