// make-task: a user's training script becomes a verified task of a task folder, without hand-tuning.
//   1. repo-local imports -> task files (relative imports laid out as a package);
//   2. the snapshot (inferred from the recorded API data and the script's date, or forced);
//   3. args that work: derived args, a bounded run, then run -> diagnose -> adapt (rules.ts);
//   4. verification in the mode asked (verification.ts): original 3/3, two breakages verified;
//   5. natural drift (--upgrade-to): the same script at a later snapshot, where it fails for real;
//   6. the task written atomically (tasks.json merged), or a refusal with its reason and nothing written.
// vscode-free: the CLI calls it, and the editor's "Make Task from This Script…" can.
import { basename, resolve } from 'node:path';
import { readFolderFile } from '../tasks/folderFile';
import { MAX_TASK_FILE_BYTES } from '../limits';
import { parsePython, describeProblem } from '../python/parse';
import { RunFilesSchema, TaskSchema, formatZodError, type ExecutionMode, type LibraryVersions } from '../schemas';
import { allSnapshots, getSnapshot, isKnownSnapshot, snapshotIds } from '../snapshots/registry';
import { isSnapshotVenvReady } from '../snapshots/venv';
import { RealModeError } from '../run/realMode';
import { taskCandidate, type TaskMetadata } from '../tasks/tasks';
import { adaptUntilRuns, outputOf, type AdaptResult } from './adaptLoop';
import { apiErrorFixedAt, apiErrorRecursAt } from './apiRecurrence';
import { composeEnvironment, describeChoice } from './derivedEnvironment';
import { DerivedEnvironmentSchema, type DerivedEnvironment } from '../snapshots/derived';
import { constantRewardReason } from './trainingSignal';
import { collectLocalImports } from './localImports';
import { naturalDriftAt, naturalDriftEntry } from './naturalDrift';
import type { Adaptation, MakeTaskVerdict, NaturalDrift } from './provenance';
import { makeRunner, type CandidateRun } from './runner';
import { scriptOrigin } from './scriptDate';
import { inferSnapshot, missingFromEverySnapshot, type SnapshotFit } from './snapshotInference';
import { verifyTask } from './verification';
import { evidenceUpFront, NO_SAVED_MODEL, SAVED_OTHER_HEAD, verifySpecFor } from './verifySpecRules';
import { withShim } from '../run/runtimeShims';
import { VerifySpecSchema } from '../verify/spec';
import { readEntries, uniqueTaskId, writeTask } from './writeTask';
import type { HubNeeds } from '../hub/needs';
import type { ModelArchitectures } from '../hub/modelTable';
import { candidateHubNeeds, providedNeeds, type HubRunState } from './hubSupply';
import type { PhaseTime } from '../phaseTimes';
import { keptRunMatchesTask, type KeptRun } from './referenceReuse';
import { rm } from 'node:fs/promises';

/**
 * The seam to src/env/hub: what models and datasets a candidate run needs. Called before every run
 * (the help run, each adaptation round), so the needs follow the args as they are adapted. Default:
 * `candidateHubNeeds` (deriveHubNeeds on the script, args and files, plus ids a run's error named).
 * The runner provides them through the hub (ensureHubItems), and the entry records what was
 * provided (`hub`). `false`: the base hub only (what make-task did before the hub existed).
 */
export type HubNeedsProvider = (input: { script: string; args: string[]; files: Record<string, string>; extra: HubNeeds }) => HubNeeds;

export interface MakeTaskOptions {
  scriptPath: string;
  taskDir: string;
  /** Default: from the file name, unique in the folder. */
  taskId?: string;
  /** 'auto' (default) or a snapshot id. */
  snapshot?: string;
  mode?: ExecutionMode;
  /** Natural drift: also run at this later snapshot; the task is the script failing there. */
  upgradeTo?: string;
  /** Per run (default 180 s). */
  timeoutMs?: number;
  maxRounds?: number;
  /** Breakages tried at most during verification (default 4). */
  maxBreakages?: number;
  /** The user's interpreter instead of the snapshot's managed venv (real mode). */
  interpreter?: string;
  /** Skip verification (the verdict is then absent); default false. */
  noVerify?: boolean;
  /** Save even when verification fails (the verdict says so); default true. A refusal never saves. */
  saveUnverified?: boolean;
  /** The script's text when it differs from the file (an editor's unsaved buffer); the path still locates its siblings and date. */
  source?: string;
  /** Args to start from instead of the derived ones (the user's answer); the rules still adapt them. */
  args?: string[];
  /** Extra files the runs need (configs, data chosen by the user), besides the repo-local modules. */
  files?: Record<string, string>;
  /** Write the task (default true). False: nothing is written; `entry` and `script` are what to save (the editor saves once the user confirms). */
  write?: boolean;
  hubNeeds?: HubNeedsProvider | false;
  /** `forgeenv.real.modelArchitectures`: id -> model_type for ids the hub's table does not know. */
  modelArchitectures?: ModelArchitectures;
  /** Infer among the snapshots whose managed venv is already built (no install on a shared machine). */
  builtSnapshotsOnly?: boolean;
  /**
   * Runs through the warm runtime (docs/sandbox.md): after a run, zygotes of the same shape import the
   * libraries in the background, so the next round, broken run or oracle run skips the imports. Same
   * outcome as cold runs. Default false; the caller clears the pool (executor.ts `warmPool`) when it exits.
   */
  warm?: boolean;
  /** Breakage episodes verified side by side (verification.ts `lanes`; default one per core, two at most). */
  verifyLanes?: number;
}

export interface MakeTaskHooks {
  onProgress?: (message: string) => void;
  signal?: AbortSignal;
}

export interface MakeTaskResult {
  taskId: string;
  /** The tasks.json entry (written unless refused). */
  entry: TaskMetadata;
  adaptations: Adaptation[];
  snapshot: { id: string; reason: string };
  rounds: number;
  verdict?: MakeTaskVerdict;
  naturalDrift?: NaturalDrift;
  refusal?: { rule: string; reason: string };
  written?: { scriptPath: string; metadataPath: string };
  /** The task's script as saved (or to save): the original, with relative imports laid out. Absent on a refusal. */
  script?: string;
  timings: MakeTaskTimings;
}

/** Where the time went: totals, and each phase in order (phaseTimes.ts). */
export interface MakeTaskTimings {
  total_ms: number;
  adapt_ms: number;
  verify_ms: number;
  phases: PhaseTime[];
}

/** Bad input the pipeline cannot start from (a missing file, an unknown snapshot): the CLI's usage errors. */
export class MakeTaskInputError extends Error {
  override readonly name = 'MakeTaskInputError';
}

export async function makeTask(options: MakeTaskOptions, hooks: MakeTaskHooks = {}): Promise<MakeTaskResult> {
  const t0 = performance.now();
  const state: MakeTaskState = {
    taskId: options.taskId ?? '',
    adaptations: [],
    snapshot: { id: '', reason: 'not chosen' },
    phases: [],
  };
  try {
    return await makeTaskUnguarded(options, hooks, t0, state);
  } catch (e) {
    if (e instanceof MakeTaskInputError) throw e;
    // Never a crash: what could not be had (a snapshot environment that cannot be built, its hub) or
    // went wrong ends as a refusal with the reason, and nothing has been written (saving is last).
    const rule = e instanceof RealModeError ? 'real-mode-unavailable' : 'internal-error';
    const reason = (e instanceof Error ? e.message : String(e)).split('\n').slice(0, 3).join(' ').slice(0, 1000);
    return {
      taskId: state.taskId,
      entry: { task_id: state.taskId || 'task', adaptations: state.adaptations },
      adaptations: state.adaptations,
      snapshot: state.snapshot,
      rounds: 0,
      refusal: { rule, reason },
      timings: { total_ms: Math.round(performance.now() - t0), adapt_ms: 0, verify_ms: 0, phases: state.phases },
    };
  } finally {
    await dropKept(state);
  }
}

/** Removes the kept run folder, if any. */
async function dropKept(state: MakeTaskState): Promise<void> {
  const dir = state.kept?.runDir;
  state.kept = undefined;
  if (dir) await rm(dir, { recursive: true, force: true }).catch(() => undefined);
}

interface MakeTaskState {
  taskId: string;
  adaptations: Adaptation[];
  snapshot: { id: string; reason: string };
  phases: PhaseTime[];
  /** The last clean adapt run's folder, kept for the verification's reference (referenceReuse.ts); removed at the end. */
  kept?: KeptRun;
}

async function makeTaskUnguarded(
  options: MakeTaskOptions,
  hooks: MakeTaskHooks,
  t0: number,
  state: MakeTaskState,
): Promise<MakeTaskResult> {
  const progress = (m: string) => hooks.onProgress?.(m);
  const mode = options.mode ?? 'real';
  const scriptPath = resolve(options.scriptPath);
  const taskDir = resolve(options.taskDir);
  for (const id of [options.snapshot, options.upgradeTo]) {
    // A derived environment (`2025-03+datasets@2.20.0`) is taken as it is.
    if (id !== undefined && id !== 'auto' && !isKnownSnapshot(id))
      throw new MakeTaskInputError(`unknown snapshot "${id}"; known: ${snapshotIds().join(', ')} (or a valid derived environment id)`);
  }
  let original: string;
  if (options.source !== undefined) original = options.source;
  else {
    const read = readFolderFile(resolve(scriptPath, '..'), basename(scriptPath), MAX_TASK_FILE_BYTES);
    if (!read.ok) throw new MakeTaskInputError(read.problem);
    original = read.text;
  }
  const entries = readEntries(taskDir);
  const taskId = options.taskId ?? uniqueTaskId(basename(scriptPath), taskDir, entries);
  if (!TaskSchema.shape.task_id.safeParse(taskId).success)
    throw new MakeTaskInputError(`"${taskId}" is not a valid task id (letters, digits, _ . - only)`);

  const adaptations: Adaptation[] = state.adaptations;
  state.taskId = taskId;
  const timings: MakeTaskTimings = { total_ms: 0, adapt_ms: 0, verify_ms: 0, phases: state.phases };
  const onPhase = (p: PhaseTime) => void state.phases.push(p);
  const done = (r: Omit<MakeTaskResult, 'timings' | 'taskId' | 'adaptations'>): MakeTaskResult => {
    timings.total_ms = Math.round(performance.now() - t0);
    return { taskId, adaptations, ...r, timings };
  };
  const refused = (
    rule: string,
    reason: string,
    partial: Partial<MakeTaskResult> & { snapshot: { id: string; reason: string } },
  ): MakeTaskResult => done({ entry: { task_id: taskId, adaptations }, rounds: 0, ...partial, refusal: { rule, reason } });

  const problem = parsePython(original).problem;
  if (problem)
    return refused('syntax-error', `the script does not parse (${describeProblem(problem)})`, {
      snapshot: { id: '', reason: 'not chosen' },
    });

  // 1. Repo-local imports.
  const origin = await scriptOrigin(scriptPath);
  const local = collectLocalImports(scriptPath, original, origin.repoRoot);
  const script = local.script;
  for (const r of local.rewrites)
    adaptations.push({
      round: 0,
      rule: 'relative-import-layout',
      kind: 'layout',
      error: 'a relative import cannot run in a top-level script',
      change: r,
    });
  if (Object.keys(local.files).length) {
    adaptations.push({
      round: 0,
      rule: 'repo-local-imports',
      kind: 'files',
      error: 'the script imports modules beside it',
      change: `files: ${Object.keys(local.files).join(', ')}`,
    });
  }
  const taskFiles = { ...(options.files ?? {}), ...local.files };
  const filesOk = RunFilesSchema.safeParse(taskFiles);
  if (!filesOk.success)
    return refused('repo-local-imports', `the local modules cannot be task files: ${formatZodError(filesOk.error)}`, {
      snapshot: { id: '', reason: 'not chosen' },
    });

  // 2. The snapshot.
  const forced = options.snapshot === 'auto' ? undefined : options.snapshot;
  const ti = performance.now();
  const first = inferSnapshot(script, {
    scriptDate: origin.date,
    forced,
    ...(options.builtSnapshotsOnly && allSnapshots().some((s) => isSnapshotVenvReady(s.id))
      ? {
          ids: allSnapshots()
            .filter((s) => isSnapshotVenvReady(s.id))
            .map((s) => s.id),
        }
      : {}),
  });
  onPhase({ phase: 'snapshot inference', ms: Math.round(performance.now() - ti) });
  let choice: { id: string; reason: string } = first;
  const snapshot = { id: choice.id, reason: choice.reason };
  state.snapshot = snapshot;
  progress(`snapshot ${choice.id}: ${choice.reason}`);
  if (local.missing.length) {
    return refused(
      'repo-local-module-missing',
      `the script imports ${local.missing.join(', ')}, a module of its repository that is not beside it${origin.repoRoot ? '' : ' (the script is not in a git repository, so nothing else was searched)'}`,
      { snapshot },
    );
  }
  const timeoutMs = options.timeoutMs ?? 180_000;
  // Models and datasets: re-derived before every run from the args as they are then (real mode).
  const provider =
    options.hubNeeds === false
      ? undefined
      : (options.hubNeeds ?? ((i: Parameters<HubNeedsProvider>[0]) => candidateHubNeeds(i.script, i.args, i.files, i.extra)));
  let hubState: HubRunState | undefined;
  // Real mode keeps each run's folder until the next run: the last clean one can be the verification's reference.
  const keep = mode === 'real';
  const runnerAt = (id: string) => {
    const run = makeRunner({
      mode,
      snapshot: id,
      timeoutMs,
      interpreter: options.interpreter,
      signal: hooks.signal,
      onProgress: progress,
      onPhase,
      modelArchitectures: options.modelArchitectures,
      ...(provider
        ? {
            hubNeeds: (c) => provider({ script: c.script, args: c.args, files: c.files, extra: c.hub ?? { models: [], datasets: [] } }),
            onHub: (s) => void (hubState = s),
          }
        : {}),
      keepRunDir: keep,
      ...(options.warm ? { warm: true } : {}),
    });
    return async (c: CandidateRun) => {
      const r = await run(c);
      await dropKept(state);
      const clean = r.exit_code === 0 && !r.timed_out && !r.killed && c.args[0] !== '--help';
      if (r.run_dir && keep && clean) state.kept = { snapshot: id, run: c, runDir: r.run_dir, hub: hubState };
      else if (r.run_dir && keep) await rm(r.run_dir, { recursive: true, force: true }).catch(() => undefined);
      return r;
    };
  };

  // 3. Args that work; an error of a library API at the inferred snapshot (the script predates it)
  // moves to the next snapshot where every import exists, at most MAX_SNAPSHOT_FALLBACKS times (unless --snapshot forced one):
  // with several eras built, an API a script uses can be two or three eras away from the newest.
  const ta = performance.now();
  const tried = [choice.id];
  const earlier: string[] = [];
  // The same adaptation at whichever snapshot is chosen.
  const adaptAt = (id: string, carried?: AdaptResult) =>
    adaptUntilRuns({
      script,
      files: taskFiles,
      startArgs: options.args,
      ...(carried ? { carried } : {}),
      run: runnerAt(id),
      maxRounds: options.maxRounds,
      onProgress: progress,
      signal: hooks.signal,
      hubState: () => hubState,
    });
  let adapted = await adaptAt(choice.id);
  for (
    let next = forced ? undefined : fallbackSnapshot(adapted, first.fits, tried, options.builtSnapshotsOnly);
    next && tried.length <= MAX_SNAPSHOT_FALLBACKS;
    next = fallbackSnapshot(adapted, first.fits, tried, options.builtSnapshotsOnly, earlier)
  ) {
    if (adapted.last) earlier.push(`${adapted.last.stdout}\n${adapted.last.stderr}`);
    const error = adapted.refusal!.reason.slice(0, 1000);
    // Carried to the next snapshot (adaptLoop `carried`), so still in effect: recorded.
    adaptations.push(...adapted.adaptations);
    adaptations.push({
      round: adapted.rounds,
      rule: 'snapshot-fallback',
      kind: 'snapshot',
      error,
      change: `snapshot ${choice.id} -> ${next} (a library API error at ${choice.id}; every import exists at ${next})`,
    });
    progress(`adapted (snapshot-fallback): ${choice.id} -> ${next}`);
    choice = { id: next, reason: `${first.reason}; ${first.id} failed on a library API (${error.slice(0, 200)}), so ${next}` };
    snapshot.id = choice.id;
    snapshot.reason = choice.reason;
    tried.push(next);
    hubState = undefined;
    adapted = await adaptAt(choice.id, adapted);
  }
  // Libraries of two eras (no snapshot has every API the script uses): a derived environment, a snapshot with
  // per-library overrides chosen from the recorded API (derivedEnvironment.ts), checked by the resolver, then run.
  let environment: DerivedEnvironment | undefined;
  let derivedRefusal: string | undefined;
  for (let attempt = 0; !forced && adapted.refusal && adapted.last && !hooks.signal?.aborted && attempt < MAX_DERIVED_ATTEMPTS; attempt++) {
    const failing = `${adapted.last.stdout}\n${adapted.last.stderr}`;
    const apiError =
      ['unrecognised-error', 'module-not-installed'].includes(adapted.refusal.rule) && API_ERROR.test(adapted.refusal.reason);
    const complete = first.fits.filter((f) => f.missing.length === 0).length;
    const acrossEras =
      attempt > 0 || complete === 0
        ? apiError
        : acrossSnapshots(
            adapted.refusal,
            choice.id,
            [...adaptations, ...adapted.adaptations],
            recurringAt(adapted.last, first.fits, tried),
            undefined,
            complete === 1,
          ).rule === 'api-in-no-snapshot';
    if (!acrossEras) break;
    earlier.push(failing);
    const composed = await composeEnvironment({ script, failures: earlier, scriptDate: origin.date });
    if (!composed.ok) {
      derivedRefusal = composed.reason;
      break;
    }
    const c = composed.choice;
    if (tried.includes(c.id)) break;
    adaptations.push(...adapted.adaptations);
    adaptations.push({
      round: adapted.rounds,
      rule: 'derived-environment',
      kind: 'snapshot',
      error: adapted.refusal.reason.slice(0, 1000),
      change: describeChoice(c).slice(0, 1000),
    });
    progress(`adapted (derived-environment): ${describeChoice(c)}`);
    choice = {
      id: c.id,
      reason: `${first.reason}; no snapshot has every API the script uses, so the derived environment ${describeChoice(c)}`,
    };
    snapshot.id = choice.id;
    snapshot.reason = choice.reason;
    tried.push(c.id);
    hubState = undefined;
    environment = DerivedEnvironmentSchema.parse({ id: c.id, base: c.base, overrides: c.overrides });
    adapted = await adaptAt(choice.id, adapted);
  }
  const versions: LibraryVersions = { ...getSnapshot(choice.id).versions };
  timings.adapt_ms = Math.round(performance.now() - ta);
  adaptations.push(...adapted.adaptations);
  // What the hub provided for the last run is what the task declares (`hub`, strict in episodes).
  const hub = hubState ? providedNeeds(hubState) : undefined;
  const entry: TaskMetadata = {
    ...(hub && (hub.models.length || hub.datasets.length || hub.metrics?.length || hub.files?.length) ? { hub } : {}),
    task_id: taskId,
    description: `${basename(scriptPath)} (made by make-task on snapshot ${choice.id}).`,
    library_versions: versions,
    tags: ['make-task', `snapshot:${choice.id}`],
    args: adapted.args,
    ...(Object.keys(taskFiles).length ? { files: taskFiles } : {}),
    ...(Object.keys(adapted.env).length ? { env: adapted.env } : {}),
    ...(adapted.runtime ? { runtime: adapted.runtime } : {}),
    ...(adapted.mounts.length ? { mounts: adapted.mounts } : {}),
    ...(environment ? { environment } : {}),
    adaptations,
  };
  if (adapted.refusal)
    return done({
      entry,
      snapshot,
      rounds: adapted.rounds,
      refusal: withDerivedRefusal(
        derivedRefusal,
        acrossSnapshots(
          withSnapshotGap(adapted.refusal, first.fits),
          choice.id,
          adaptations,
          recurringAt(adapted.last, first.fits, tried),
          acceptedWhereImportsLack(adapted.last, first.fits),
          first.fits.filter((f) => f.missing.length === 0).length === 1,
        ),
      ),
    });
  // A clean run that cannot train (a reward constant on every completion): refused before the verification runs.
  const untrainable = adapted.last && constantRewardReason(outputOf(adapted.last));
  if (untrainable) return done({ entry, snapshot, rounds: adapted.rounds, refusal: { rule: 'constant-reward', reason: untrainable } });

  // 4. Verification.
  let verdict: MakeTaskVerdict | undefined;
  if (!options.noVerify) {
    const tv = performance.now();
    const upFront = evidenceUpFront(script, entry.verify);
    if (upFront) {
      entry.verify = VerifySpecSchema.parse(upFront.spec);
      if (upFront.shim) entry.runtime = withShim(entry.runtime, upFront.shim);
      adaptations.push({ round: adapted.rounds, ...upFront.adaptation });
      progress(`adapted (${upFront.adaptation.rule}): ${upFront.adaptation.change} (the script saves no model)`);
    }
    let referenceFailure: string | undefined;
    const verifyOnce = () =>
      verifyTask({
        onReferenceFailed: (reason) => void (referenceFailure = reason),
        ...(state.kept && keptRunMatchesTask(state.kept, entry, choice.id)
          ? { originalRun: { taskId, script, runDir: state.kept.runDir } }
          : {}),
        task: TaskSchema.parse(taskCandidate(taskId, script, entry, taskDir)),
        mode,
        snapshot: choice.id,
        versions,
        timeoutMs,
        interpreter: options.interpreter,
        maxBreakages: options.maxBreakages,
        ...(options.verifyLanes ? { lanes: options.verifyLanes } : {}),
        signal: hooks.signal,
        onProgress: progress,
        onPhase,
        ...(options.warm ? { warm: true } : {}),
      });
    referenceFailure = undefined;
    verdict = await verifyOnce();
    // The verifier may say which `verify` field the task must declare, or that the script saves no
    // model (then the environment keeps the trained one): answer from the task's own args, then check
    // again (twice at most: evidence first, then a field the evidence's check may still ask for).
    for (let round = 0; round < 2 && !verdict.verified && !hooks.signal?.aborted; round++) {
      const finding = [referenceFailure ?? '', ...verdict.breakages.map((b) => b.note ?? '')].find(
        (n) => /set verify\./.test(n) || NO_SAVED_MODEL.test(n) || SAVED_OTHER_HEAD.test(n),
      );
      const fix = finding ? verifySpecFor(finding, script, adapted.args, entry.verify) : undefined;
      if (!fix) break;
      entry.verify = VerifySpecSchema.parse(fix.spec);
      if (fix.shim) entry.runtime = withShim(entry.runtime, fix.shim);
      adaptations.push({ round: adapted.rounds, ...fix.adaptation });
      progress(`adapted (${fix.adaptation.rule}): ${fix.adaptation.change}; verifying again`);
      referenceFailure = undefined;
      verdict = await verifyOnce();
    }
    timings.verify_ms = Math.round(performance.now() - tv);
    entry.verdict = verdict;
    if (!verdict.verified)
      progress(
        `not verified: original ${verdict.original_runs.verified}/${verdict.original_runs.of}, breakages verified ${verdict.breakages.filter((b) => b.broke && b.names_api && b.oracle_verified).length}`,
      );
  }

  // 5. Natural drift.
  let naturalDrift: NaturalDrift | undefined;
  if (options.upgradeTo) {
    const hubNeeds = provider
      ? (c: CandidateRun) => provider({ script: c.script, args: c.args, files: c.files, extra: c.hub ?? { models: [], datasets: [] } })
      : undefined;
    const at = await naturalDriftAt({
      script,
      args: adapted.args,
      files: taskFiles,
      env: adapted.env,
      runtime: adapted.runtime,
      mounts: adapted.mounts,
      hubNeeds,
      hubExtra: adapted.hubExtra,
      from: choice.id,
      to: options.upgradeTo,
      mode,
      timeoutMs,
      interpreter: options.interpreter,
      signal: hooks.signal,
      onProgress: progress,
    });
    if (at.refusal) return done({ entry, snapshot, rounds: adapted.rounds, verdict, refusal: at.refusal });
    if (!at.drift)
      return done({
        entry,
        snapshot,
        rounds: adapted.rounds,
        verdict,
        refusal: { rule: 'natural-drift', reason: 'no natural drift found' },
      });
    naturalDrift = at.drift;
    Object.assign(entry, naturalDriftEntry(entry, naturalDrift, basename(scriptPath), at.adapted));
  }

  // 6. Save.
  if (hooks.signal?.aborted)
    return done({
      entry,
      snapshot,
      rounds: adapted.rounds,
      verdict,
      naturalDrift,
      refusal: { rule: 'cancelled', reason: 'cancelled before saving' },
    });
  if (verdict && !verdict.verified && options.saveUnverified === false) {
    return done({
      entry,
      snapshot,
      rounds: adapted.rounds,
      verdict,
      naturalDrift,
      refusal: { rule: 'not-verified', reason: 'verification failed (see the verdict); nothing saved' },
    });
  }
  if (options.write === false) return done({ entry, snapshot, rounds: adapted.rounds, verdict, naturalDrift, script });
  const written = await writeTask(taskDir, entry, script);
  progress(`saved ${written.scriptPath}`);
  return done({ entry, snapshot, rounds: adapted.rounds, verdict, naturalDrift, written, script });
}

/** Derived environments tried at most: a second one when the first's run meets another API error. */
export const MAX_DERIVED_ATTEMPTS = 2;

/** An `api-in-no-snapshot` refusal says why no derived environment could be composed (the resolver's conflict, …). */
function withDerivedRefusal(why: string | undefined, refusal: { rule: string; reason: string }): { rule: string; reason: string } {
  return why && refusal.rule === 'api-in-no-snapshot'
    ? { ...refusal, reason: `${refusal.reason}; no derived environment: ${why}` }
    : refusal;
}

/** Snapshot fallbacks after an API error, at most (each costs a help run and a run or two). */
export const MAX_SNAPSHOT_FALLBACKS = 4;

// An error of a library's API (a name, attribute or keyword the installed release lacks or refuses).
// `AttributeError: TPU` alone: an Enum member a later release removed (accelerate's `DistributedType.TPU`, now XLA;
// Python adds ". Did you mean: 'TP'?" once a near name exists).
const API_ERROR =
  /\b(?:AttributeError: [^\n]*has no attribute|AttributeError: [A-Za-z_]\w*(?:$|\. Did you mean: '\w+'\?$| \(the offline hub)|ImportError: cannot import name|TypeError: [^\n]*(?:unexpected keyword argument|got multiple values|missing \d+ required positional|takes (?:from \d+ to )?\d+ positional arguments? but \d+ (?:were|was) given)|ModuleNotFoundError: No module named '(?:transformers|trl|peft|datasets|accelerate|evaluate)\.)/;

/** The next snapshot to try after an API error: the newest untried one older than those tried, else the oldest newer one. */
export function fallbackSnapshot(
  adapted: { refusal?: { rule: string; reason: string }; last?: { stdout: string; stderr: string } },
  fits: readonly SnapshotFit[],
  tried: readonly string[],
  builtOnly?: boolean,
  /** The outputs of the earlier snapshots' failing runs: a snapshot where any of them would recur is passed over too. */
  earlier: readonly string[] = [],
): string | undefined {
  if (!adapted.refusal || !['unrecognised-error', 'module-not-installed'].includes(adapted.refusal.rule)) return undefined;
  if (!API_ERROR.test(adapted.refusal.reason) && !(adapted.last && raisedInLibraryCode(`${adapted.last.stdout}\n${adapted.last.stderr}`)))
    return undefined;
  const open = fits.filter(
    (f) =>
      f.missing.length === 0 &&
      !tried.includes(f.id) &&
      (!builtOnly || f.ready) &&
      // A snapshot whose recorded API shows the same error would be a wasted run (apiRecurrence.ts).
      ![...earlier, ...(adapted.last ? [`${adapted.last.stdout}\n${adapted.last.stderr}`] : [])].some((out) => apiErrorRecursAt(out, f.id)),
  );
  const oldestTried = tried.map((id) => fits.find((f) => f.id === id)?.date ?? '').sort()[0] ?? '';
  const older = open.filter((f) => f.date < oldestTried).sort((a, b) => b.date.localeCompare(a.date));
  return older[0]?.id ?? open.sort((a, b) => a.date.localeCompare(b.date))[0]?.id;
}

/**
 * A library API error at the last snapshot tried after API errors at the others (the fallback found none where the
 * script runs): the script calls APIs no single snapshot has (a newer one's `config.dtype` beside an older one's
 * `DistributedType.TPU`), refused as `api-in-no-snapshot` with each snapshot's error.
 */
export function acrossSnapshots(
  refusal: { rule: string; reason: string },
  last: string,
  adaptations: ReadonlyArray<{ rule: string; error: string; change: string }>,
  /** Untried snapshots where the script's imports exist and the recorded API shows the last error would recur. */
  predicted: readonly string[] = [],
  /** Snapshots whose recorded API accepts the failing call but lacks some of the script's imports (`acceptedWhereImportsLack`). */
  accepted?: { ids: string[]; lacks: string[] },
  /** `last` is the only snapshot where every import of the script exists: no fallback could be tried. */
  onlyFit = false,
): { rule: string; reason: string } {
  const fallbacks = adaptations.filter((a) => a.rule === 'snapshot-fallback');
  const alone = onlyFit && !fallbacks.length && !predicted.length;
  if ((!fallbacks.length && !predicted.length && !alone) || refusal.rule !== 'unrecognised-error' || !API_ERROR.test(refusal.reason))
    return refusal;
  const short = (r: string) => r.replace(/^no rule recognises the error: /, '').slice(0, 160);
  const each = fallbacks.map((a) => `at ${/^snapshot (\S+)/.exec(a.change)?.[1] ?? '?'}: ${short(a.error)}`);
  const recorded = predicted.length ? `; by their recorded API the same error recurs at ${predicted.join(', ')}` : '';
  return {
    rule: 'api-in-no-snapshot',
    reason: `the script uses library APIs that no snapshot where its imports exist has together: ${[...each, `at ${last}${alone ? ' (the only snapshot with all its imports)' : ''}: ${short(refusal.reason)}`].join('; ')}${recorded}${acceptedClause(accepted)}`,
  };
}

/** The other side of the conflict: where the failing call works, and which of the script's imports those snapshots lack. */
function acceptedClause(accepted: { ids: string[]; lacks: string[] } | undefined): string {
  if (!accepted?.ids.length) return '';
  return `; the recorded API of ${accepted.ids.join(', ')} accepts that call, but there the script's imports lack ${accepted.lacks.slice(0, 6).join(', ')}`;
}

/**
 * The snapshots where the last run's failing call or import is accepted by the recorded API but some import of the
 * script is missing, with the missing imports (deduplicated): why the fallback never tried them.
 */
export function acceptedWhereImportsLack(
  last: { stdout: string; stderr: string } | undefined,
  fits: readonly SnapshotFit[],
): { ids: string[]; lacks: string[] } | undefined {
  if (!last) return undefined;
  const output = `${last.stdout}\n${last.stderr}`;
  const there = fits.filter((f) => f.missing.length > 0 && apiErrorFixedAt(output, f.id));
  if (!there.length) return undefined;
  // Each missing import once; one not missing at all of them says where it is.
  const lacks = [...new Set(there.flatMap((f) => f.missing))].map((m) => {
    const at = there.filter((f) => f.missing.includes(m)).map((f) => f.id);
    return at.length === there.length ? m : `${m} (at ${at.join(', ')})`;
  });
  return { ids: there.map((f) => f.id), lacks };
}

/** The untried snapshots where every import of the script exists and the recorded API predicts the last run's error. */
function recurringAt(
  last: { stdout: string; stderr: string } | undefined,
  fits: readonly SnapshotFit[],
  tried: readonly string[],
): string[] {
  if (!last) return [];
  const output = `${last.stdout}\n${last.stderr}`;
  return fits.filter((f) => f.missing.length === 0 && !tried.includes(f.id) && apiErrorRecursAt(output, f.id)).map((f) => f.id);
}

/** A module-not-installed refusal of a library module no snapshot has: says so, with the releases the snapshots pin. */
export function withSnapshotGap(refusal: { rule: string; reason: string }, fits: readonly SnapshotFit[]): { rule: string; reason: string } {
  const mod = refusal.rule === 'module-not-installed' ? /the script imports ([\w.]+)/.exec(refusal.reason)?.[1] : undefined;
  const pins = mod ? missingFromEverySnapshot(fits, mod) : undefined;
  if (!pins || !mod) return refusal;
  return {
    ...refusal,
    reason: `${refusal.reason}; no snapshot ForgeEnv has pins a release with ${mod}: the recorded API of ${pins} lacks it, so it needs a release of ${mod.split('.')[0]} that no snapshot pins`,
  };
}

/**
 * An UnboundLocalError, ValueError or KeyError raised in a Hugging Face library's own code (its last traceback frame):
 * the library no longer handles the call as the script makes it (IDEFICS' processor given `prompts` positionally in
 * transformers 5; trl 0.8's DPOTrainer refusing a `ref_model` beside a `peft_config`, which trl 0.7 took; trl 0.23's
 * GKDTrainer reading `teacher_model_init_kwargs["dtype"]` where the script, written for trl 0.18, set `torch_dtype`;
 * a KeyError of a dataset column is a rule's before it gets here), which is
 * the script's API drift like an unexpected keyword. Only an error no rule recognises gets here, and the fallback is
 * bounded: a ValueError of the script's own making fails at every snapshot and ends as `api-in-no-snapshot`.
 */
export function raisedInLibraryCode(output: string): boolean {
  const lines = output.trimEnd().split('\n');
  const frameBefore = (at: number) =>
    lines
      .slice(0, at)
      .reverse()
      .find((l) => /^\s*File "/.test(l));
  let at = lines.length - 1;
  while (at >= 0 && !/^(?:UnboundLocalError|ValueError|KeyError): /.test(lines[at])) at--;
  if (at < 0) return false;
  let frame = frameBefore(at);
  // Re-raised by a multiprocessing pool (`squad_convert_examples_to_features(threads=…)`): the worker's own
  // traceback, printed above as a RemoteTraceback with the same error, names the frame that raised it.
  if (frame && /[/\\]multiprocessing[/\\]pool\.py"/.test(frame)) {
    const worker = lines.lastIndexOf(lines[at], at - 1);
    frame = worker >= 0 && lines.slice(0, worker).some((l) => /RemoteTraceback/.test(l)) ? frameBefore(worker) : undefined;
  }
  return (
    !!frame &&
    /[/\\](?:transformers|trl|peft|datasets|accelerate)[/\\][^"]*\.py", line \d+/.test(frame) &&
    /site-packages|dist-packages/.test(frame)
  );
}
