// Cold and incremental dataset summary and export on large synthetic dataset folders:
//   node --import tsx bench/summary.bench.ts [--records 100000,1000000] [--append 1000]
//        [--script-lines 36] [--repeat 3] [--export-max N] [--keep]
// For each size: generates the folder in the OS temp dir (valid records, ~10 KiB each like real
// ones with the default --script-lines 36, 3% revisions, reviews and skips), then prints
//   - one plain pass: read every line with readline and JSON.parse it (the floor a cold run is
//     held to), and a tighter one: our chunked line reader + JSON.parse, nothing else,
//   - the cold summary (no index), the warm one (index, nothing appended); plain and cold are run
//     --repeat times, interleaved, and the best and median of each are shown (the machine is shared),
//   - the warm summary, and --repeat rounds of appending --append records then summarizing (only
//     new lines are parsed), best, median and slowest, and their share of cold,
//   - a trl-sft export, cold and after --append more records (incremental: rows appended), checked
//     byte for byte against a full export (sizes up to --export-max, default all).
// Folders, exports and indexes are deleted afterwards unless --keep. Needs about 3x the folder
// size in free disk for the export (source, staging file, output); see `df -h`.
import { createHash } from 'node:crypto';
import { createReadStream, mkdtempSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { createDemonstrationRecord } from '../src/store/demonstrationBuilder';
import { exportDataset } from '../src/store/export/exportDataset';
import { recordHash } from '../src/store/hashing';
import { clearExportIndex } from '../src/store/export/exportIndex';
import { appendLines, linesOfHandle } from '../src/store/jsonlFile';
import { DATASET_FILES, REVIEW_SCHEMA, SKIP_REASONS, SKIP_SCHEMA, type DemonstrationRecord } from '../src/store/records';
import { summarizeDataset } from '../src/store/summary';
import { clearSummaryIndex, summaryIndexPath } from '../src/store/summaryIndex';

const { values } = parseArgs({
  options: {
    records: { type: 'string', default: '100000,1000000' },
    append: { type: 'string', default: '1000' },
    keep: { type: 'boolean', default: false },
    'export-max': { type: 'string', default: String(Number.MAX_SAFE_INTEGER) },
    'script-lines': { type: 'string', default: '36' },
    repeat: { type: 'string', default: '3' },
  },
});
const EXPORT_MAX = Number(values['export-max']);
const SCRIPT_LINES = Number(values['script-lines']);
const REPEAT = Number(values.repeat);
const SIZES = values.records.split(',').map(Number);
const APPEND = Number(values.append);
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

let state = 12345;
const rand = () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)];
const uuid = (prefix: string, n: number) => `${prefix}-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;

function script(task: string): string {
  const lines = [
    `# ${task}: fine-tune a classifier`,
    'from transformers import AutoTokenizer, AutoModelForSequenceClassification, Trainer, TrainingArguments',
  ];
  for (let i = 0; i < SCRIPT_LINES; i++) lines.push(`value_${i} = compute_step(${i}, batch_size=16, learning_rate=2e-5)  # step ${i}`);
  lines.push('args = TrainingArguments(output_dir="out", eval_strategy="epoch")', 'trainer.train()');
  return lines.join('\n') + '\n';
}

function diff(n: number): string {
  const out = ['--- a/train.py', '+++ b/train.py', '@@ -40,2 +40,2 @@', ' import os'];
  for (let i = 0; i < 1 + (n % 3); i++) out.push(`-args = TrainingArguments(output_dir="out", evaluation_strategy="epoch")  # ${i}`);
  for (let i = 0; i < 1 + ((n >> 2) % 3); i++) out.push(`+args = TrainingArguments(output_dir="out", eval_strategy="epoch")  # ${i} v${n}`);
  return out.join('\n') + '\n';
}

/** One valid template record per (task, primitive); records are cheap variations of it. */
const templates = new Map<string, DemonstrationRecord>();
function template(task: string, primitive: string): DemonstrationRecord {
  const key = `${task}/${primitive}`;
  let t = templates.get(key);
  if (!t) {
    const src = script(task);
    const prompt = `The training script below broke.\nTarget category: ${primitive}\ntransformers=4.50.0\n\`\`\`python\n${src.repeat(2)}\`\`\`\nError:\nTypeError: unexpected keyword argument 'evaluation_strategy'\nAnswer with a unified diff.`;
    t = createDemonstrationRecord({
      rollout: {
        task_id: task,
        primitive_type: primitive,
        drift_prompt: `Target category: ${primitive}\n\`\`\`python\n${src}\`\`\``,
        drift_completion: JSON.stringify({ primitive_type: primitive, params: { old_name: 'eval_strategy' } }),
        repair_prompt: prompt,
        repair_completion: diff(0),
        visible_reward: 1.8,
        visible_breakdown: { script_executes: 1, loss_decreased: 1, checkpoint_appeared: 1, diff_size_penalty: 0 },
        held_out_breakdown: { executed_cleanly: 1 },
        success: true,
        error_trace: '',
        info: { breakage_failed: true },
      },
      originalScript: src,
      episodeId: 'ep-template',
      seed: 1,
      primitive: { primitive_type: primitive, params: { old_name: 'eval_strategy' } },
      libraryVersions: { transformers: '4.50.0', datasets: '3.2.0', trl: '0.12.0' },
      provenance: {
        session_id: 's',
        annotator_id: 'a',
        mode: 'simulated',
        interpreter: 'python3',
        extension_version: '0.1.0',
        env_version: '0.1.0',
        started_at: '2025-03-01T10:00:00.000Z',
        submitted_at: '2025-03-01T10:10:00.000Z',
        active_ms: 1,
        wall_ms: 1,
        runs: 1,
      },
    });
    templates.set(key, t);
  }
  return t;
}

const recent: Array<{ id: string; episode: string; revision: number; task: string; primitive: string }> = [];
function line(i: number): string {
  const prev = recent.length && rand() < 0.03 ? recent.splice(Math.floor(rand() * recent.length), 1)[0] : undefined;
  const task = prev?.task ?? pick(TASKS);
  const primitive = prev?.primitive ?? pick(PRIMITIVES);
  const t = template(task, primitive);
  const success = rand() < 0.8;
  const d = diff(i);
  const id = uuid('00000000', i);
  const episode = prev?.episode ?? `ep-${i}`;
  const revision = prev ? prev.revision + 1 : 1;
  const active = Math.floor(20_000 + rand() * 900_000);
  recent.push({ id, episode, revision, task, primitive });
  if (recent.length > 50) recent.shift();
  return JSON.stringify({
    ...t,
    repair_completion: d,
    visible_reward: success ? 1.2 + rand() * 0.6 : rand() * 0.5 - 0.2,
    success,
    held_out_breakdown: { executed_cleanly: success ? 1 : 0 },
    info: {
      ...t.info,
      record_id: id,
      episode_id: episode,
      annotator_id: `annotator-${i % 12}`,
      active_ms: active,
      wall_ms: active + 30_000,
      revision,
      supersedes: prev?.id ?? null,
      timeline_file: revision === 1 ? `timelines/${episode}.jsonl` : `timelines/${episode}.r${revision}.jsonl`,
      breakage_failed: rand() > 0.02,
      record_hash: recordHash(t.info.task_hash, d),
    },
  });
}

let next = 0;
async function appendDemos(dir: string, n: number): Promise<void> {
  const file = join(dir, DATASET_FILES.demonstrations);
  let batch: string[] = [];
  for (let k = 0; k < n; k++) {
    batch.push(line(next++));
    if (batch.length === 2000) {
      await appendLines(file, batch, []);
      batch = [];
    }
  }
  await appendLines(file, batch, []);
}

async function sideFiles(dir: string, n: number): Promise<void> {
  const reviews = Array.from({ length: Math.floor(n / 10) }, (_, k) =>
    JSON.stringify({
      kind: 'review',
      schema: REVIEW_SCHEMA,
      review_id: uuid('10000000', k),
      record_id: uuid('00000000', Math.floor(rand() * n)),
      reviewer: 'rev',
      verdict: rand() < 0.85 ? 'approve' : 'reject',
      comment: '',
      at: '2025-03-02T10:00:00.000Z',
    }),
  );
  await appendLines(join(dir, DATASET_FILES.reviews), reviews, []);
  const skips = Array.from({ length: Math.floor(n / 50) }, (_, k) =>
    JSON.stringify({
      kind: 'skip',
      schema: SKIP_SCHEMA,
      episode_id: `skip-${k}`,
      task_id: pick(TASKS),
      primitive: { primitive_type: pick(PRIMITIVES), params: {} },
      reason: pick(SKIP_REASONS),
      note: '',
      annotator_id: `annotator-${k % 12}`,
      at: '2025-03-02T10:00:00.000Z',
    }),
  );
  await appendLines(join(dir, DATASET_FILES.skips), skips, []);
}

/** Wall time, and this process's CPU time (steadier on a machine shared with other work). */
async function timed<T>(label: string, fn: () => Promise<T>, quiet = false): Promise<{ r: T; s: number; cpu: number }> {
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const r = await fn();
  const s = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  const cpu = (c.user + c.system) / 1e6;
  if (!quiet) console.log(`  ${label.padEnd(46)} ${s.toFixed(3).padStart(8)} s wall ${cpu.toFixed(3).padStart(8)} s cpu`);
  return { r, s, cpu };
}

/** Best and median of repeated runs, wall and cpu separately. */
function stats(label: string, runs: Array<{ s: number; cpu: number }>): { s: number; cpu: number } {
  const mid = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
  const best = { s: Math.min(...runs.map((r) => r.s)), cpu: Math.min(...runs.map((r) => r.cpu)) };
  const med = { s: mid(runs.map((r) => r.s)), cpu: mid(runs.map((r) => r.cpu)) };
  console.log(
    `  ${label.padEnd(46)} ${best.s.toFixed(3).padStart(8)} s wall ${best.cpu.toFixed(3).padStart(8)} s cpu (best of ${runs.length}; median ${med.s.toFixed(3)} / ${med.cpu.toFixed(3)})`,
  );
  return best;
}

const pct = (a: { s: number; cpu: number }, b: { s: number; cpu: number }) =>
  `${((100 * a.s) / b.s).toFixed(1)}% wall, ${((100 * a.cpu) / b.cpu).toFixed(1)}% cpu`;

/** The floor: every line of the three files read and JSON.parse'd, nothing else. */
async function plainParse(dir: string): Promise<number> {
  let n = 0;
  for (const f of [DATASET_FILES.demonstrations, DATASET_FILES.reviews, DATASET_FILES.skips]) {
    const rl = createInterface({ input: createReadStream(join(dir, f)), crlfDelay: Infinity });
    for await (const l of rl) {
      if (!l) continue;
      JSON.parse(l);
      n++;
    }
  }
  return n;
}

/** The tighter floor: the chunked line reader the summary uses, and JSON.parse of each line. */
async function readerParse(dir: string): Promise<number> {
  let n = 0;
  for (const f of [DATASET_FILES.demonstrations, DATASET_FILES.reviews, DATASET_FILES.skips]) {
    const fh = await open(join(dir, f), 'r');
    try {
      for await (const raw of linesOfHandle(fh)) {
        if (!('text' in raw) || !raw.text) continue;
        JSON.parse(raw.text);
        n++;
      }
    } finally {
      await fh.close();
    }
  }
  return n;
}

async function fileHash(f: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(f)) h.update(chunk as Buffer);
  return h.digest('hex');
}

async function benchSize(n: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), `forgeenv-bench-summary-${n}-`));
  const out = mkdtempSync(join(tmpdir(), 'forgeenv-bench-exports-'));
  console.log(`\n${n} records (${dir})`);
  try {
    next = 0;
    await timed(`generate ${n} demonstrations`, async () => {
      await appendDemos(dir, n);
      await sideFiles(dir, n);
    });
    const mib = statSync(join(dir, DATASET_FILES.demonstrations)).size / 2 ** 20;
    console.log(`  demonstrations.jsonl ${mib.toFixed(0)} MiB`);
    await clearSummaryIndex(dir);
    const runs: Record<'plain' | 'reader' | 'cold', Array<{ s: number; cpu: number }>> = { plain: [], reader: [], cold: [] };
    for (let k = 0; k < REPEAT; k++) {
      runs.plain.push(await timed('', () => plainParse(dir), true));
      runs.reader.push(await timed('', () => readerParse(dir), true));
      runs.cold.push(await timed('', () => summarizeDataset(dir, { index: false }), true));
    }
    const plain = stats('plain pass: readline + JSON.parse every line', runs.plain);
    const reader = stats('floor: chunked reader + JSON.parse, nothing else', runs.reader);
    const cold = stats('summary, cold (no index)', runs.cold);
    await timed('summary, cold, building the index', () => summarizeDataset(dir));
    const warmRuns: Array<{ s: number; cpu: number }> = [];
    for (let k = 0; k < REPEAT; k++) warmRuns.push(await timed('', () => summarizeDataset(dir), true));
    const warm = stats('summary, warm (index, nothing new)', warmRuns);
    // REPEAT rounds of appends, each followed by a summary: a round whose few lines are not worth
    // rewriting the index for leaves them to be parsed again by the next (summaryIndex.ts).
    const incRuns: Array<{ s: number; cpu: number; r: Awaited<ReturnType<typeof summarizeDataset>> }> = [];
    for (let k = 0; k < REPEAT; k++) {
      await appendDemos(dir, APPEND);
      incRuns.push(await timed('', () => summarizeDataset(dir), true));
    }
    console.log(`  each round: ${incRuns.map((x) => `${x.s.toFixed(3)} s / ${x.cpu.toFixed(3)} s cpu`).join(', ')}`);
    const incStats = stats(`summary after ${APPEND} appends (incremental)`, incRuns);
    const worst = { s: Math.max(...incRuns.map((x) => x.s)), cpu: Math.max(...incRuns.map((x) => x.cpu)) };
    const inc = { ...incStats, r: incRuns.at(-1)!.r };
    const check = await timed('summary after appends, cold (no index)', () => summarizeDataset(dir, { index: false }));
    const same = JSON.stringify({ ...inc.r, dir: '' }) === JSON.stringify({ ...check.r, dir: '' });
    console.log(
      `  index ${summaryIndexPath(realpathSync(dir))}: ${(statSync(summaryIndexPath(realpathSync(dir))).size / 2 ** 20).toFixed(1)} MiB`,
    );
    console.log(
      `  cold / plain pass: ${(cold.s / plain.s).toFixed(2)} wall, ${(cold.cpu / plain.cpu).toFixed(2)} cpu; cold / floor: ${(cold.s / reader.s).toFixed(2)} wall, ${(cold.cpu / reader.cpu).toFixed(2)} cpu`,
    );
    console.log(
      `  warm / cold: ${pct(warm, cold)}; incremental / cold: ${pct(inc, cold)} (slowest round ${pct(worst, cold)}); incremental summary = cold summary: ${same}`,
    );
    console.log(
      `  ${inc.r.counts.submitted} submitted, ${inc.r.counts.superseded} superseded, ${inc.r.counts.skipped} skipped, ${inc.r.problems.total} problems`,
    );
    if (!same) process.exitCode = 1;
    if (n > EXPORT_MAX) return;
    const sft = join(out, 'a', 'sft.jsonl');
    const e1 = await timed('export trl-sft, cold (full)', () =>
      exportDataset({ format: 'trl-sft', dir, out: sft, systemPrompt: 'S', now: new Date(0) }),
    );
    // Revisions among these appends revise records of this batch only (as revisions follow their
    // original shortly): a revision of an exported row would rightly mean a full export.
    recent.length = 0;
    await appendDemos(dir, APPEND);
    const e2 = await timed(`export trl-sft after ${APPEND} appends`, () =>
      exportDataset({ format: 'trl-sft', dir, out: sft, systemPrompt: 'S', now: new Date(0) }),
    );
    console.log(
      `  export rows ${e1.r.rows} → ${e2.r.rows} (${e2.r.mode}, ${e2.r.parsedLines} lines parsed); after appends / cold: ${pct(e2, e1)}; output ${(statSync(sft).size / 2 ** 20).toFixed(0)} MiB`,
    );
    const fullOut = join(out, 'b', 'sft.jsonl');
    const e3 = await timed('export trl-sft, full, for comparison', () =>
      exportDataset({ format: 'trl-sft', dir, out: fullOut, systemPrompt: 'S', now: new Date(0), incremental: false }),
    );
    const equal =
      (await fileHash(sft)) === (await fileHash(fullOut)) && readFileSync(e2.r.card, 'utf8') === readFileSync(e3.r.card, 'utf8');
    console.log(`  incremental export = full export (data and card, byte for byte): ${equal}`);
    if (!equal || e2.r.mode !== 'appended') process.exitCode = 1;
    await clearExportIndex(realpathSync(sft));
    await clearExportIndex(realpathSync(fullOut));
  } finally {
    if (values.keep) console.log(`  kept ${dir}`);
    else {
      await clearSummaryIndex(dir);
      rmSync(dir, { recursive: true, force: true });
    }
    rmSync(out, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  console.log(
    `node ${process.version}; sizes ${SIZES.join(', ')}; ${APPEND} appended; ${SCRIPT_LINES} script lines per prompt; load average ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
  for (const n of SIZES) await benchSize(n);
  console.log(`peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB`);
}

void main();
