// Natural-drift tasks built from the corpus (issue 20 item 3): each script that make-task can run at
// its era's snapshot is run unchanged at every later snapshot whose venv is built; each later snapshot
// where it fails with a real library error is one natural-drift task (written to --task-dir). Two
// sources: ../shared/realworld/scripts (era: the built snapshot nearest the manifest's commit date
// among those having every import) and the built-in tasks of resources/tasks (era: snapshots.json's
// corpus_snapshot, else 2024-09; upgraded to every later built snapshot). Real mode only; nothing is installed (only built venvs are used). Prints the count
// and the list with each task's real error. Then each task is solved where a repair is known
// (solveNaturalDrift: the drift catalog's fix through the environment's apply+run+verify, recorded
// with markNaturalDriftSolved) and the bench prints tasks, distinct drifts, solved, unsolved and the
// seconds of each task (building + solving).
//   npm run bench:natural-drift -- [--only 05,21,distilbert] [--source corpus|builtin|both] [--jobs 1]
//                                  [--timeout 150] [--task-dir DIR] [--json FILE] [--no-solve]
//   npm run bench:natural-drift -- --solve-dir DIR[,DIR] [--only ID-PREFIXES] [--no-solve]
//       (solve the natural-drift tasks of DIRs, no building; --no-solve: only report their recorded state)
//   npm run bench:natural-drift -- --check-dir DIR   (a NaturalDrift episode on each task of DIR, real mode)
import { appendFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { makeTask } from '../src/env/taskmaking/makeTask';
import { naturalDriftAt, naturalDriftEntry } from '../src/env/taskmaking/naturalDrift';
import { inferSnapshot, monthsApart } from '../src/env/taskmaking/snapshotInference';
import { uniqueTaskId, readEntries, writeTask } from '../src/env/taskmaking/writeTask';
import { allSnapshots } from '../src/env/snapshots/registry';
import { isSnapshotVenvReady } from '../src/env/snapshots/venv';
import { tasksDir } from '../src/env/paths';
import { isLocalHubReady } from '../src/env/hub/localHub';
import { ForgeEnvironment } from '../src/env/episode/environment';
import { NATURAL_DRIFT_PRIMITIVE } from '../src/env/episode/naturalDriftEpisode';
import { CORPUS_SNAPSHOT } from '../src/env/snapshots/versions';
import { infoText } from '../src/env/schemas';
import { driftKey, solveNaturalDrift, type SolveOutcome } from '../src/env/taskmaking/solveNaturalDrift';

const { values } = parseArgs({
  options: {
    only: { type: 'string' },
    source: { type: 'string', default: 'both' },
    jobs: { type: 'string', default: '1' },
    timeout: { type: 'string', default: '150' },
    'task-dir': { type: 'string' },
    json: { type: 'string' },
    'max-rounds': { type: 'string', default: '5' },
    /** Only start a NaturalDrift episode on each natural-drift task of this folder (no building). */
    'check-dir': { type: 'string' },
    /** Build only: do not try the known repairs. */
    'no-solve': { type: 'boolean', default: false },
    /** Only solve the natural-drift tasks of these folders (comma-separated; no building). */
    'solve-dir': { type: 'string' },
  },
});
const REALWORLD = resolve(__dirname, '..', '..', 'shared', 'realworld');

interface Job {
  source: 'corpus' | 'builtin';
  path: string;
  /** The era's snapshot candidates, in order (the first where make-task runs it is the era), and the later ones to try. */
  eras: string[];
  from: string;
  to: string[];
}
interface Row {
  source: Job['source'];
  script: string;
  from: string;
  to: string;
  outcome: 'natural-drift' | 'runs-there-too' | 'not-drift' | 'era-refused';
  verified: boolean;
  error: string;
  taskId?: string;
  seconds: number;
}

// Built: the venv and the base local hub (a snapshot whose hub does not build here, 2023-06 today, is left out).
const built = allSnapshots().filter((s) => isSnapshotVenvReady(s.id) && isLocalHubReady(s.id));
const unavailable = new Set<string>();
const ERA_RETRY = new Set(['unrecognised-error', 'rounds-exhausted', 'real-mode-unavailable', 'timeout']);
const later = (id: string) => built.filter((s) => s.date > built.find((b) => b.id === id)!.date).map((s) => s.id);

function jobs(): Job[] {
  const keys = values.only?.split(',').filter(Boolean);
  const wanted = (name: string) => !keys || keys.some((k) => name.startsWith(k));
  const out: Job[] = [];
  if (values.source !== 'builtin' && existsSync(join(REALWORLD, 'manifest.json'))) {
    const manifest = JSON.parse(readFileSync(join(REALWORLD, 'manifest.json'), 'utf8')) as Array<{ file: string; commit_date: string }>;
    for (const m of manifest) {
      const path = join(REALWORLD, m.file);
      if (!wanted(basename(path))) continue;
      // The inferred era first, then the other built snapshots with a later one, nearest the script's date first.
      const inferred = inferSnapshot(readFileSync(path, 'utf8'), { scriptDate: m.commit_date, ids: built.map((s) => s.id) }).id;
      const near = built
        .filter((s) => later(s.id).length)
        .sort((a, b) => monthsApart(a.date, m.commit_date) - monthsApart(b.date, m.commit_date))
        .map((s) => s.id);
      const eras = [...new Set([inferred, ...near])].filter((id) => later(id).length);
      out.push({ source: 'corpus', path, eras, from: eras[0], to: later(eras[0]) });
    }
  }
  if (values.source !== 'corpus') {
    for (const f of readdirSync(tasksDir())
      .filter((n) => n.endsWith('.py'))
      .sort()) {
      // Built-in tasks are written for the corpus snapshot: each later built snapshot where one fails is a task.
      const eras = [CORPUS_SNAPSHOT, '2024-09'].filter((id) => built.some((s) => s.id === id) && later(id).length);
      if (wanted(f) && eras.length) out.push({ source: 'builtin', path: join(tasksDir(), f), eras, from: eras[0], to: later(eras[0]) });
    }
  }
  return out;
}

/**
 * Each natural-drift task of `dir` through the environment itself: a real-mode episode, the
 * NaturalDrift breakage, and the broken run must fail with the error the task recorded.
 */
async function checkEpisodes(dir: string): Promise<void> {
  const env = new ForgeEnvironment({ mode: 'real', taskDirs: [dir], timeoutMs: Number(values.timeout) * 1000 });
  let ok = 0;
  const tasks = env.tasks.all.filter((t) => t.natural_drift && t.source === dir);
  try {
    for (const t of tasks) {
      const t0 = performance.now();
      await env.reset({ taskId: t.task_id, seed: 1 });
      const obs = await env.step({ breakage: { primitive_type: NATURAL_DRIFT_PRIMITIVE, params: {} } });
      const recorded = t.natural_drift!.error;
      const same = obs.info.broke === true && (obs.error_trace ?? '').includes(recorded.slice(0, 80));
      if (same) ok++;
      console.log(
        `episode ${t.task_id}: ${obs.info.error ? `refused: ${infoText(obs.info.error)}` : same ? 'starts from the recorded error' : `broke=${String(obs.info.broke)}, error differs`} (${((performance.now() - t0) / 1000).toFixed(0)} s)`,
      );
    }
  } finally {
    await env.dispose();
  }
  console.log(`episodes starting from the recorded real error: ${ok}/${tasks.length}`);
}

async function main(): Promise<void> {
  if (values['check-dir']) return checkEpisodes(resolve(values['check-dir']));
  if (values['solve-dir'])
    return solveAll(
      values['solve-dir'].split(',').map((d) => resolve(d)),
      new Map(),
    );
  const taskDir = values['task-dir'] ? resolve(values['task-dir']) : mkdtempSync(join(tmpdir(), 'forgeenv-natural-drift-'));
  const log = values.json ? `${values.json}.partial.jsonl` : undefined;
  const rows: Row[] = [];
  const queue = jobs();
  console.log(`${queue.length} scripts to try; built snapshots ${built.map((s) => s.id).join(', ')}; tasks into ${taskDir}`);
  const timeoutMs = Number(values.timeout) * 1000;
  const emit = (r: Row) => {
    rows.push(r);
    if (log) appendFileSync(log, `${JSON.stringify(r)}\n`);
    console.log(
      `[${r.source}] ${r.script.slice(0, 40).padEnd(40)} ${r.from} -> ${r.to.padEnd(7)} ${r.outcome.padEnd(14)} ${r.seconds.toFixed(0).padStart(4)}s  ${r.error.slice(0, 240)}`,
    );
  };
  const worker = async () => {
    for (let j = queue.shift(); j; j = queue.shift()) {
      const name = basename(j.path);
      const tag = (m: string) => process.stderr.write(`  [${name.slice(0, 12)}] ${m}\n`);
      const scratch = mkdtempSync(join(tmpdir(), 'forgeenv-natural-drift-era-'));
      let t = performance.now();
      try {
        // The era's task: make-task alone (args, files, env adapted until it runs), not verified (each
        // verification is 3+ runs; the drift only needs "it runs there").
        // The era: the first candidate where make-task runs the script. A failure that another era
        // could cure (a library error, an environment that cannot be had) moves on; one that no
        // snapshot cures (a GPU, a missing hub item or module) stops.
        let era = undefined as Awaited<ReturnType<typeof makeTask>> | undefined;
        for (const from of j.eras.filter((id) => !unavailable.has(id)).slice(0, 3)) {
          t = performance.now();
          era = await makeTask(
            {
              scriptPath: j.path,
              taskDir: scratch,
              snapshot: from,
              mode: 'real',
              noVerify: true,
              timeoutMs,
              maxRounds: Number(values['max-rounds']),
            },
            { onProgress: tag },
          );
          j.from = from;
          j.to = later(from);
          if (era.refusal?.rule === 'real-mode-unavailable') unavailable.add(from);
          if (!era.refusal || !ERA_RETRY.has(era.refusal.rule)) break;
          emit({
            source: j.source,
            script: name,
            from,
            to: j.to.join(','),
            outcome: 'era-refused',
            verified: false,
            error: `${era.refusal.rule}: ${era.refusal.reason}`,
            seconds: (performance.now() - t) / 1000,
          });
        }
        if (!era || era.refusal) {
          if (era?.refusal && ERA_RETRY.has(era.refusal.rule)) continue; // already listed
          emit({
            source: j.source,
            script: name,
            from: j.from,
            to: j.to.join(','),
            outcome: 'era-refused',
            verified: false,
            error: era?.refusal ? `${era.refusal.rule}: ${era.refusal.reason}` : 'no built snapshot left to run it at',
            seconds: (performance.now() - t) / 1000,
          });
          continue;
        }
        const script = readFileSync(era.written!.scriptPath, 'utf8');
        const e = era.entry;
        for (const to of j.to) {
          t = performance.now();
          if (unavailable.has(to)) continue;
          // The era task's recorded hub items and runtime shims: the later snapshot gets the same inputs.
          const hub = e.hub;
          const at = await naturalDriftAt({
            script,
            args: e.args ?? [],
            files: e.files ?? {},
            env: e.env ?? {},
            runtime: e.runtime,
            hubNeeds: hub ? () => hub : undefined,
            from: j.from,
            to,
            mode: 'real',
            timeoutMs,
            onProgress: tag,
          });
          const seconds = (performance.now() - t) / 1000;
          if (!at.drift) {
            const runs = /runs at .* as well/.test(at.refusal?.reason ?? '');
            emit({
              source: j.source,
              script: name,
              from: j.from,
              to,
              outcome: runs ? 'runs-there-too' : 'not-drift',
              verified: false,
              error: at.refusal?.reason ?? '',
              seconds,
            });
            continue;
          }
          const base = `${name.replace(/\.py$/, '')}-drift-${to}`;
          const taskId = uniqueTaskId(`${base}.py`, taskDir, readEntries(taskDir));
          await writeTask(taskDir, naturalDriftEntry({ ...e, task_id: taskId, verdict: undefined }, at.drift, name, at.adapted), script);
          emit({
            source: j.source,
            script: name,
            from: j.from,
            to,
            outcome: 'natural-drift',
            verified: at.drift.verified,
            error: at.drift.error,
            taskId,
            seconds,
          });
        }
      } catch (err) {
        emit({
          source: j.source,
          script: name,
          from: j.from,
          to: j.to.join(','),
          outcome: 'era-refused',
          verified: false,
          error: `crash: ${(err as Error).message.split('\n')[0]}`,
          seconds: (performance.now() - t) / 1000,
        });
      } finally {
        rmSync(scratch, { recursive: true, force: true });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Number(values.jobs)) }, worker));
  const drifts = rows.filter((r) => r.outcome === 'natural-drift' && r.verified);
  console.log(
    `\nverified natural-drift tasks: ${drifts.length} (corpus ${drifts.filter((r) => r.source === 'corpus').length}, built-in ${drifts.filter((r) => r.source === 'builtin').length}); from ${new Set(drifts.map((r) => r.script)).size} scripts`,
  );
  for (const r of drifts) console.log(`  ${r.taskId} [${r.source}] ${r.from} -> ${r.to}: ${r.error}`);
  const counts = new Map<string, number>();
  for (const r of rows) counts.set(r.outcome, (counts.get(r.outcome) ?? 0) + 1);
  console.log(`outcomes: ${[...counts].map(([k, v]) => `${k} ${v}`).join(', ')}; tasks in ${taskDir}`);
  if (values.json) writeFileSync(values.json, JSON.stringify(rows, null, 2));
  if (!values['no-solve']) await solveAll([taskDir], new Map(drifts.map((r) => [r.taskId!, r.seconds])));
}

/**
 * Each natural-drift task of `dirs`, solved where a repair is known (one real episode per repair run);
 * prints tasks, distinct drifts, solved and unsolved, and each task's seconds (build + solve). A task
 * built twice (the same script, era and later snapshot in two folders) counts once.
 */
async function solveAll(dirs: string[], buildSeconds: Map<string, number>): Promise<void> {
  const seen = new Set<string>();
  const results: Array<{
    dir: string;
    id: string;
    script: string;
    from: string;
    to: string;
    error: string;
    out: SolveOutcome;
    seconds: number;
  }> = [];
  for (const dir of dirs) {
    const keys = values['solve-dir'] ? values.only?.split(',').filter(Boolean) : undefined;
    for (const e of readEntries(dir).filter((x) => x.natural_drift?.verified && (!keys || keys.some((k) => x.task_id.startsWith(k))))) {
      const d = e.natural_drift!;
      const script = e.description?.split(' written for ')[0] ?? e.task_id;
      const key = `${script}|${d.from_snapshot}|${d.to_snapshot}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const t0 = performance.now();
      const tag = (m: string) => process.stderr.write(`  [${e.task_id.slice(0, 24)}] ${m}\n`);
      let out: SolveOutcome;
      if (d.solved) out = { taskId: e.task_id, solved: true, steps: [], runs: 0, reason: `already solved (${d.solved_by ?? 'recorded'})` };
      else if (values['no-solve'])
        out = { taskId: e.task_id, solved: false, steps: [], runs: 0, reason: 'not solved (not tried again: --no-solve)' };
      else {
        try {
          out = await solveNaturalDrift({
            environment: () => new ForgeEnvironment({ mode: 'real', taskDirs: [dir], timeoutMs: Number(values.timeout) * 1000 }),
            taskDir: dir,
            taskId: e.task_id,
            onProgress: tag,
          });
        } catch (err) {
          out = { taskId: e.task_id, solved: false, steps: [], runs: 0, reason: `crash: ${(err as Error).message.split('\n')[0]}` };
        }
      }
      const seconds = (buildSeconds.get(e.task_id) ?? 0) + (performance.now() - t0) / 1000;
      results.push({ dir, id: e.task_id, script, from: d.from_snapshot, to: d.to_snapshot, error: d.error, out, seconds });
      const how =
        out.solved && !out.steps.length
          ? `SOLVED earlier: ${repairSummary(d.reference_repair)}`
          : out.solved
            ? `SOLVED ${out.steps.map((s) => s.drift_id ?? s.change).join(' + ')}${out.reward !== undefined ? ` reward ${out.reward.toFixed(2)} (${out.check ?? '?'})` : ''}`
            : `unsolved: ${out.reason}`;
      console.log(`${e.task_id.padEnd(52)} ${d.from_snapshot} -> ${d.to_snapshot} ${seconds.toFixed(0).padStart(4)}s  ${how}`);
    }
  }
  const solved = results.filter((r) => r.out.solved);
  console.log(
    `\nnatural-drift tasks: ${results.length}; distinct drifts: ${new Set(results.map((r) => driftKey(r.error))).size}; solved: ${solved.length}; unsolved: ${results.length - solved.length}`,
  );
  console.log(
    `distinct drifts solved: ${new Set(solved.map((r) => driftKey(r.error))).size}; scripts: ${new Set(results.map((r) => r.script)).size}; total seconds ${results.reduce((a, r) => a + r.seconds, 0).toFixed(0)}`,
  );
  if (values.json) writeFileSync(`${values.json}.solve.json`, JSON.stringify(results, null, 2));
}

/** The changed lines of a recorded repair, shortened: what solved it. */
function repairSummary(diff: string | undefined): string {
  const lines = (diff ?? '')
    .split('\n')
    .filter((l) => /^\+[^+]/.test(l))
    .map((l) => l.slice(1).trim());
  return lines.length ? lines.join(' | ').slice(0, 160) : 'reference repair recorded';
}

void main();
