// Diff application under attack (issue 11): apply times for ordinary repairs and for hostile
// submissions, the work each took (placement steps), and the longest the event loop was blocked
// while applyRepairDiffAsync ran. Also runs jsdiff's applyPatch (the previous placement code) on
// the hunk-header attack at smaller claimed lines, to show the old linear growth in the same run.
//   npm run bench:diff            (node --import tsx bench/diff.bench.ts [--quick])
import { applyPatch } from 'diff';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { applyRepairDiffCounted, createRepairDiff } from '../src/env/diff/diff';
import { applyRepairDiffAsync, prewarmDiffWorker, type AsyncApplyInfo } from '../src/env/diff/diffAsync';

const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false } } });
const REPS = values.quick ? 1 : 3;
const ms = (x: number) => `${x < 10 ? x.toFixed(2) : x.toFixed(0)} ms`;
const pad = (s: string, n: number) => s.padEnd(n);

const SCRIPT = readFileSync(join(__dirname, '..', 'resources', 'tasks', 'bert_ner.py'), 'utf8');
const LINES = SCRIPT.split('\n');
const FIX = createRepairDiff(SCRIPT, SCRIPT.replace(LINES[20], `${LINES[20]}  # fixed`));
const goldens = (() => {
  const dir = join(__dirname, '..', 'test', 'fixtures', 'diffs');
  return readdirSync(dir)
    .filter((n) => statSync(join(dir, n)).isDirectory())
    .map((n) => ({ before: readFileSync(join(dir, n, 'before.py'), 'utf8'), after: readFileSync(join(dir, n, 'after.py'), 'utf8') }));
})();

function hostile1MB(kind: 'nonmatching' | 'scrambled' | 'inserts', size = 1_000_000): string {
  let s = '';
  for (let i = 0; s.length < size; i++) {
    const a = (i * 7) % (LINES.length - 12);
    if (kind === 'nonmatching') s += `@@ -${a + 1},3 +${a + 1},3 @@\n ${LINES[a]}\n-nothing_${i} = 0\n+y = 1\n ${LINES[a + 2]}\n`;
    else if (kind === 'scrambled')
      s += `@@ -${a + 1},4 +${a + 1},4 @@\n ${LINES[a + 5]}\n ${LINES[a + 9]}\n-${LINES[a + 2]}\n+z = 0\n ${LINES[a + 11]}\n ${LINES[a]}\n`;
    else s += `@@ -1,0 +1,1 @@\n+inserted_${i} = 0\n`;
  }
  return s;
}

const cases: Array<{ name: string; submission: string; script?: string }> = [
  { name: 'ordinary repair (one hunk)', submission: FIX },
  {
    name: 'hunk header @@ -99999999999999999999',
    submission: FIX.replace(/@@ -\d+,(\d+) \+\d+,(\d+) @@/, '@@ -99999999999999999999,$1 +99999999999999999999,$2 @@'),
  },
  { name: '16 KB scrambled hunks (inline, then worker)', submission: hostile1MB('scrambled', 16_000) },
  {
    name: '16 KB whole script, no import lines',
    submission: Array.from({ length: 800 }, (_, i) => `value_${i} = ${i} * 2`).join('\n') + '\n',
  },
  { name: '1 MB non-matching hunks', submission: hostile1MB('nonmatching') },
  { name: '1 MB scrambled hunks (fuzzy search)', submission: hostile1MB('scrambled') },
  { name: '1 MB of insertions', submission: hostile1MB('inserts') },
  { name: '2 MiB fence line (old regex: quadratic)', submission: '```' + 'a'.repeat(2 * 1024 * 1024 - 10) },
  { name: '50 MB diff', submission: '+x\n'.repeat((50 * 1024 * 1024) / 3) },
];

/** Longest gap between 1 ms timer ticks while `work` runs: how long the event loop was blocked. */
async function maxLoopGap<T>(work: () => Promise<T>): Promise<{ result: T; gap: number; syncPart: number; total: number; busy: number }> {
  let gap = 0;
  let last = performance.now();
  const tick = setInterval(() => {
    const now = performance.now();
    gap = Math.max(gap, now - last);
    last = now;
  }, 1);
  await new Promise((r) => setTimeout(r, 5));
  last = performance.now();
  const elu = performance.eventLoopUtilization();
  const t0 = performance.now();
  const pending = work();
  const syncPart = performance.now() - t0;
  const result = await pending;
  const total = performance.now() - t0;
  // Time the main thread spent running code (not waiting) during the call, timer ticks included.
  const busy = performance.eventLoopUtilization(elu).active;
  clearInterval(tick);
  return { result, gap: Math.max(gap, syncPart), syncPart, total, busy };
}

/** The same measurement while another thread spins: the machine's own scheduling noise. */
async function noiseFloor(): Promise<number> {
  const w = new Worker(
    'const { parentPort } = require("node:worker_threads"); parentPort.on("message", (n) => { const t = Date.now(); while (Date.now() - t < n); parentPort.postMessage(0); });',
    { eval: true },
  );
  const { gap } = await maxLoopGap(() => new Promise((r) => (w.once('message', r), w.postMessage(300))));
  await w.terminate();
  return gap;
}

async function main(): Promise<void> {
  console.log(
    `diff application (node ${process.version}, ${REPS} repetition(s), best shown; script: bert_ner.py, ${LINES.length} lines)\n`,
  );

  // Ordinary diffs: the golden fixtures.
  let worst = 0;
  const t0 = performance.now();
  for (const g of goldens) {
    const d = createRepairDiff(g.before, g.after);
    const s = performance.now();
    applyRepairDiffCounted(g.before, d);
    worst = Math.max(worst, performance.now() - s);
  }
  console.log(`golden fixtures: ${goldens.length} diffs applied in ${ms(performance.now() - t0)} (slowest ${ms(worst)})\n`);

  console.log('previous placement code (jsdiff applyPatch) on the hunk-header attack:');
  const [hunkLine] = FIX.split('\n').filter((l) => l.startsWith('@@'));
  applyPatch(SCRIPT, FIX); // warm-up
  for (const start of [1e5, 1e6, 1e7]) {
    const attack = FIX.replace(hunkLine, hunkLine.replace(/-\d+/, `-${start}`));
    const s = performance.now();
    applyPatch(SCRIPT, attack);
    console.log(`  claimed line ${start.toExponential(0).padEnd(5)} ${ms(performance.now() - s)}`);
  }
  console.log('  (linear in the claimed line: 1e20 would take about 10^13 times as long as 1e7)\n');

  prewarmDiffWorker();
  await new Promise((r) => setTimeout(r, 300));
  console.log(
    `${pad('case', 42)} ${pad('sync apply', 11)} ${pad('steps', 8)} ${pad('async total', 12)} ${pad('where', 8)} ${pad('call blocks', 12)} ${pad('main busy', 10)} ${pad('max loop gap', 13)} outcome`,
  );
  for (const c of cases) {
    let sync = Infinity;
    let steps = 0;
    let outcome = '';
    for (let r = 0; r < REPS; r++) {
      const s = performance.now();
      const { result, cost } = applyRepairDiffCounted(c.script ?? SCRIPT, c.submission);
      sync = Math.min(sync, performance.now() - s);
      steps = cost.steps;
      outcome = result.ok ? `applied (${result.mode})` : `refused: ${result.error.slice(0, 60)}${result.error.length > 60 ? '…' : ''}`;
    }
    let total = Infinity;
    let gap = Infinity;
    let syncPart = Infinity;
    let busy = Infinity;
    const info: AsyncApplyInfo = { where: 'inline' };
    for (let r = 0; r < REPS; r++) {
      const m = await maxLoopGap(() => applyRepairDiffAsync(c.script ?? SCRIPT, c.submission, {}, info));
      total = Math.min(total, m.total);
      gap = Math.min(gap, m.gap);
      syncPart = Math.min(syncPart, m.syncPart);
      busy = Math.min(busy, m.busy);
    }
    console.log(
      `${pad(c.name, 42)} ${pad(ms(sync), 11)} ${pad(String(steps), 8)} ${pad(ms(total), 12)} ${pad(info.where, 8)} ${pad(ms(syncPart), 12)} ${pad(ms(busy), 10)} ${pad(ms(gap), 13)} ${outcome}`,
    );
  }
  const noise = Math.min(...(await Promise.all([noiseFloor()])));
  console.log(`\nnoise floor: the same loop-block measurement while an unrelated thread spins: ${ms(noise)}`);
  console.log('"call blocks": the synchronous part of applyRepairDiffAsync (the inline application, or handing the job to the worker);');
  console.log('"main busy": all the time the main thread ran code during the call (event-loop utilization; includes the 1 ms ticks);');
  console.log('"max loop gap": the longest gap between 1 ms timer ticks while it ran (compare with the noise floor).');
}

void main();
