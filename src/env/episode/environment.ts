// The embedded ForgeEnv environment: a two-phase state machine (drift_gen -> repair -> done).
// Bad input never throws out of `step`: it yields an observation carrying `info.error`, and the
// episode state is left exactly as it was.
import { randomInt, randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { createRepairDiff } from '../diff/diff';
import { applyRepairDiffAsync } from '../diff/diffAsync';
import {
  EnvironmentConfigSchema,
  EpisodeRecipeSchema,
  EpisodeStateSchema,
  unrunEvaluation,
  type EnvironmentBackend,
  type EpisodeRecipe,
  type EnvironmentConfig,
  type EnvironmentConfigInput,
  type EpisodeState,
  type RepairEvaluation,
  type StepOptions,
} from './episodeTypes';
import { scriptDigest } from './episodeRecipe';
import { timed, type PhaseTime } from '../phaseTimes';
import { executeScript, prewarmRuntime, type RunOptions } from '../run/executor';
import { specProvenance } from '../drift/generator';
import { getPrimitive, applySpec } from '../primitives/registry';
import { PrimitiveRefusal } from '../primitives/types';
import { prepareRealRun, RealModeError, snapshotIdForVersions, type RealRunSetup, type RunHubNeeds } from '../run/realMode';
import { missingDataFiles } from '../hub/dataFiles';
import { diskDatasetLinks } from '../hub/diskDatasets';
import { deriveHubNeeds, looksLikeModelId } from '../hub/needs';
import { isBaseHubModel } from '../hub/modelTable';
import { mulberry32 } from '../random';
import { judgeRunsAndTrains, NATURAL_DRIFT_CATEGORY, NATURAL_DRIFT_PRIMITIVE, naturalDriftProblem } from './naturalDriftEpisode';
import type { RunLimiter } from '../run/runLimiter';
import { heldOutReward, isSuccess, visibleReward } from '../scoring/reward';
import { judgeEvidence, NO_EVIDENCE, verificationRecord, type Evidence } from '../verify/judge';
import { referenceOutcome } from '../verify/reference';
import { VerifySpecSchema, type VerifySpec } from '../verify/spec';
import { openForReading, readVerdict, verifierRun, type VerifierOutcome } from '../verify/verifier';
import {
  ExecutionResultSchema,
  ForgeActionSchema,
  ResetOptionsSchema,
  emptyObservation,
  formatZodError,
  type BreakageAction,
  type ExecutionResult,
  type LibraryVersions,
  type Observation,
  type ResetOptions,
  type Task,
} from '../schemas';
import type { TaskRuntime } from '../run/runtimeShims';
import { loadCorpus, TaskSampler } from '../tasks/tasks';
import { Teacher, type TeacherStore } from './teacher';
import { snapshotIdOf, snapshotVersions } from '../snapshots/versions';

export const ENV_VERSION = '0.1.0';

/** How a run departs from the task's own: another script's run (the verifier's), a kept folder, no live output. */
interface RunExtras {
  run?: Partial<Pick<RunOptions, 'scriptName' | 'args' | 'files' | 'inputDir' | 'mounts'>>;
  keepRunDir?: boolean;
  quiet?: boolean;
  /** What the run is in the episode, for StepOptions `onPhase` (default `broken run`). */
  role?: 'broken run' | 'repair run' | 'verifier run' | 'original run';
}

/** A caller's finished clean run of a task's original: its task, script and kept run folder. */
export interface OriginalRun {
  taskId: string;
  script: string;
  runDir: string;
}

/** Raised by the programmatic API (reset, evaluateRepair, restore) on misuse; `step` never throws. */
export class EnvironmentError extends Error {
  override readonly name = 'EnvironmentError';
}

export class ForgeEnvironment implements EnvironmentBackend {
  readonly kind = 'embedded' as const;
  readonly config: EnvironmentConfig;
  readonly tasks: TaskSampler;
  /** Problems met while loading task folders (bad metadata, clashing ids), for the UI to show. */
  readonly taskProblems: string[];
  private episode: EpisodeState | undefined;
  /** Scored repairs of the current episode, by diff text, so Submit scores exactly what was run. */
  private readonly evaluations = new Map<string, RepairEvaluation>();
  /** This environment's own runs (cancel handles and completion), so dispose ends only those. */
  private readonly live = new Set<AbortController>();
  private readonly hubNeedsCache = new Map<string, RunHubNeeds>();
  private readonly inflight = new Set<Promise<unknown>>();
  private disposed = false;
  /** Shared by the sessions of a server: bounds concurrent runs (none: unbounded, as in the editor). */
  private readonly runLimiter: RunLimiter | undefined;
  /** The Teacher's history across episodes; without one each episode's Teacher starts afresh (same seed, same target). */
  private readonly teacherStore: TeacherStore | undefined;

  /** Why runs are not sandboxed (set by the first run that fell back; shown in observations' info). */
  private lastSandboxWarning: string | undefined;

  /** Real mode: progress of preparing the snapshot venv and local hub, when a step passes no `onProgress`. */
  private readonly onProgress: ((message: string) => void) | undefined;

  /** A finished run of the original made by the caller (see the constructor's `originalRun`). */
  private readonly originalRun: OriginalRun | undefined;

  constructor(
    config: EnvironmentConfigInput = {},
    deps: {
      tasks?: TaskSampler;
      teacherStore?: TeacherStore;
      onProgress?: (message: string) => void;
      runLimiter?: RunLimiter;
      /**
       * A finished clean run of a task's original, made by the caller exactly as this environment would run
       * it (same script, args, files, env, shims, mounts, snapshot and hub items; make-task's last adapt
       * round): the verifier judges its folder as the reference instead of running the original once more.
       * The folder stays the caller's (read, never removed here).
       */
      originalRun?: OriginalRun;
    } = {},
  ) {
    this.onProgress = deps.onProgress;
    this.originalRun = deps.originalRun;
    this.runLimiter = deps.runLimiter;
    this.teacherStore = deps.teacherStore;
    const parsed = EnvironmentConfigSchema.safeParse(config);
    if (!parsed.success) throw new EnvironmentError(`Invalid environment config: ${formatZodError(parsed.error)}`);
    this.config = parsed.data;
    if (deps.tasks) {
      this.tasks = deps.tasks;
      this.taskProblems = [];
    } else {
      const { tasks, problems } = loadCorpus({ extraDirs: this.config.taskDirs });
      this.tasks = new TaskSampler(tasks);
      this.taskProblems = problems;
    }
  }

  get state(): EpisodeState | undefined {
    return this.episode ? structuredClone(this.episode) : undefined;
  }

  /** Why runs are not sandboxed, once a run has fallen back (show it once). */
  get sandboxWarning(): string | undefined {
    return this.lastSandboxWarning;
  }

  get task(): Task | undefined {
    return this.episode ? this.tasks.getById(this.episode.task_id) : undefined;
  }

  async reset(options: ResetOptions = {}): Promise<Observation> {
    const parsed = ResetOptionsSchema.safeParse(options);
    if (!parsed.success) throw new EnvironmentError(`Invalid reset options: ${formatZodError(parsed.error)}`);
    const o = parsed.data;
    const seed = o.seed ?? randomInt(0, 2 ** 31 - 1);
    const rng = mulberry32(seed);
    let task: Task | undefined;
    if (o.taskId !== undefined && o.task_id !== undefined && o.taskId !== o.task_id) {
      throw new EnvironmentError(`Invalid reset options: task_id "${o.task_id}" and taskId "${o.taskId}" disagree.`);
    }
    const taskId = o.task_id ?? o.taskId;
    if (taskId !== undefined) {
      task = this.tasks.getById(taskId);
      if (!task) throw new EnvironmentError(`Unknown task "${taskId}". Known: ${this.tasks.all.map((t) => t.task_id).join(', ')}`);
    } else {
      if (this.tasks.all.length === 0) throw new EnvironmentError('The task corpus is empty.');
      task = this.tasks.sample(rng, o.difficulty ?? o.options?.difficulty);
    }
    const libraryVersions = o.library_versions ?? task.library_versions ?? snapshotVersions();
    if (this.config.mode === 'real') {
      try {
        snapshotIdForVersions(libraryVersions); // real mode needs a known snapshot: say so now, not at the first run
      } catch (e) {
        throw new EnvironmentError((e as Error).message);
      }
    }
    const target = o.target_category ?? new Teacher(seed, this.teacherStore).targetCategory(task.script_content, libraryVersions);
    this.evaluations.clear();
    this.episode = {
      episode_id: o.episode_id ?? randomUUID(),
      seed,
      phase: 'drift_gen',
      episode_step: 0,
      task_id: task.task_id,
      target_category: target,
      library_versions: libraryVersions,
      original_script: task.script_content,
      broken_script: null,
      breakage_spec: null,
      inverse_spec: null,
      broken_execution: null,
      final: null,
      started_at: new Date().toISOString(),
    };
    return this.observe();
  }

  async step(action: unknown, options: StepOptions = {}): Promise<Observation> {
    try {
      return await this.stepUnguarded(action, options);
    } catch (e) {
      // Real mode could not get its interpreter ready (venv, libraries, local hub): the state is unchanged.
      if (e instanceof RealModeError) return this.errorObservation(e.message, 'real_mode_unavailable');
      throw e;
    }
  }

  private async stepUnguarded(action: unknown, options: StepOptions): Promise<Observation> {
    const ep = this.episode;
    if (!ep) return this.errorObservation('No episode: call reset() before step().', 'no_episode');
    const parsed = ForgeActionSchema.safeParse(action);
    if (!parsed.success) {
      return this.errorObservation(
        `Invalid action (expected exactly one of {breakage: {primitive_type, params}} or {repair: {unified_diff}}): ${formatZodError(parsed.error)}`,
        'invalid_action',
      );
    }
    const a = parsed.data;
    if ('breakage' in a) {
      if (ep.phase !== 'drift_gen')
        return this.errorObservation(
          `A breakage action is only valid in phase drift_gen; the episode is in phase ${ep.phase}.`,
          'wrong_phase',
        );
      const broken = this.applyBreakage(ep, a.breakage);
      if (!broken.ok) return this.errorObservation(broken.message, broken.kind);
      // The broken script runs as it is (it may use anything the original used): only repairs are judged.
      const { exec } = await this.run(broken.script, options, false);
      // Commit only after every fallible part succeeded, so a failure leaves the state untouched.
      this.episode = broken.commit(exec);
      return this.observe({ breakage_edits: broken.edits });
    }
    if (ep.phase !== 'repair')
      return this.errorObservation(`A repair action is only valid in phase repair; the episode is in phase ${ep.phase}.`, 'wrong_phase');
    const evaluation = await this.evaluateRepair(a.repair.unified_diff, options);
    this.episode = { ...ep, phase: 'done', episode_step: 2, final: evaluation };
    return this.observe();
  }

  /** The breakage applied to the episode's original script, and the repair-phase state it leads to once run. */
  private applyBreakage(
    ep: EpisodeState,
    breakage: BreakageAction,
  ):
    | { ok: true; script: string; edits: number; commit: (exec: ExecutionResult) => EpisodeState }
    | { ok: false; message: string; kind: string } {
    // A natural-drift task: the breakage is the real one (NaturalDrift), nothing applied; the broken
    // script is the original, which fails at the task's snapshot. No inverse: no oracle unless recorded.
    const task = this.requireTask(ep);
    const driftProblem = naturalDriftProblem(task, breakage, ep.library_versions);
    if (driftProblem) return { ok: false, message: driftProblem, kind: 'primitive_refused' };
    if (task.natural_drift) {
      const script = ep.original_script;
      return {
        ok: true,
        script,
        edits: 0,
        commit: (exec) => ({
          ...ep,
          phase: 'repair',
          episode_step: 1,
          broken_script: script,
          breakage_spec: { primitive_type: NATURAL_DRIFT_PRIMITIVE, category: NATURAL_DRIFT_CATEGORY, params: {}, provenance: 'real' },
          inverse_spec: null,
          broken_execution: exec,
        }),
      };
    }
    const primitive = getPrimitive(breakage.primitive_type);
    if (primitive && primitive.kind !== 'breakage')
      return { ok: false, message: `${primitive.name} is a repair (inverse) primitive, not a breakage primitive.`, kind: 'invalid_action' };
    let result;
    try {
      result = applySpec(ep.original_script, breakage);
    } catch (e) {
      return {
        ok: false,
        message: e instanceof PrimitiveRefusal ? e.message : `Primitive failed: ${String(e)}`,
        kind: 'primitive_refused',
      };
    }
    const { script, inverse } = result;
    return {
      ok: true,
      script,
      edits: result.edits.length,
      commit: (exec) => ({
        ...ep,
        phase: 'repair',
        episode_step: 1,
        broken_script: script,
        // Whether the break models a real drift of this snapshot (and which catalog entry), or is synthetic.
        breakage_spec: {
          primitive_type: breakage.primitive_type,
          category: primitive?.category,
          params: breakage.params,
          ...specProvenance(ep.original_script, breakage, ep.library_versions),
        },
        inverse_spec: inverse,
        broken_execution: exec,
      }),
    };
  }

  /**
   * Re-creates a saved episode from its recipe (episodeRecipe.ts), deterministically: the same
   * reset, the breakage applied again to this environment's own copy of the task. Refused (with
   * the state left as it was) when the task is unknown, the primitive refuses, or the scripts differ
   * from the digests. The broken script always runs again (`options` apply): a recipe's
   * `broken_execution` comes from the client and is never trusted (episodeTypes.ts).
   */
  async recreate(recipe: EpisodeRecipe, options: StepOptions = {}): Promise<Observation> {
    const parsed = EpisodeRecipeSchema.safeParse(recipe);
    if (!parsed.success) throw new EnvironmentError(`Invalid episode to restore: ${formatZodError(parsed.error)}`);
    const r = parsed.data;
    const before = { episode: this.episode, evaluations: new Map(this.evaluations) };
    const rollback = () => {
      this.episode = before.episode;
      this.evaluations.clear();
      for (const [k, v] of before.evaluations) this.evaluations.set(k, v);
    };
    try {
      await this.reset({
        task_id: r.task_id,
        seed: r.seed,
        episode_id: r.episode_id,
        library_versions: r.library_versions,
        target_category: r.target_category,
      });
      const ep = this.episode;
      if (!ep) throw new EnvironmentError('reset() did not start an episode');
      if (r.started_at) ep.started_at = r.started_at;
      if (r.original_sha256 && scriptDigest(ep.original_script) !== r.original_sha256) {
        throw new EnvironmentError(`Task "${r.task_id}" here is not the script the episode started on (another version of the task).`);
      }
      if (!r.breakage) return this.observe({ restored: true });
      const broken = this.applyBreakage(ep, r.breakage);
      if (!broken.ok) throw new EnvironmentError(`The episode's breakage cannot be applied again: ${broken.message}`);
      if (r.broken_sha256 && scriptDigest(broken.script) !== r.broken_sha256) {
        throw new EnvironmentError(
          `The ${r.breakage.primitive_type} breakage of task "${r.task_id}" gives another broken script here than the episode's (another version of the task or the primitive).`,
        );
      }
      const { exec } = await this.run(broken.script, options, false);
      this.episode = broken.commit(exec);
      return this.observe({ breakage_edits: broken.edits, restored: true });
    } catch (e) {
      rollback();
      throw e;
    }
  }

  /** Scores a repair without ending the episode (the human's "Run & Score"). */
  async evaluateRepair(unifiedDiff: string, options: StepOptions = {}): Promise<RepairEvaluation> {
    const ep = this.episode;
    if (!ep || ep.phase !== 'repair' || ep.broken_script === null) {
      throw new EnvironmentError(`evaluateRepair needs an episode in phase repair (now: ${ep?.phase ?? 'no episode'}).`);
    }
    const cached = this.evaluations.get(unifiedDiff);
    if (cached) return structuredClone(cached);
    const task = this.requireTask(ep);
    // Off the event loop when large: the server and the extension host keep answering meanwhile.
    const brokenScript = ep.broken_script;
    const applied = await timed(options.onPhase, 'repair: diff apply', () =>
      applyRepairDiffAsync(brokenScript, unifiedDiff, {
        maxBytes: this.config.maxDiffBytes,
        signal: options.signal,
      }),
    );
    let evaluation: RepairEvaluation;
    if (!applied.ok) {
      evaluation = unrunEvaluation({
        unifiedDiff,
        brokenScript: ep.broken_script,
        error: applied.error,
        trace: `The repair diff did not apply: ${applied.error}`,
        finding: `diff did not apply: ${applied.error}`,
      });
    } else {
      const validate = this.config.validateRepairs ? { baseline: ep.broken_script } : false;
      const { exec, runDir } = await this.run(applied.script, options, validate, { keepRunDir: true, role: 'repair run' });
      let evidence: Evidence;
      try {
        evidence = await this.verify(exec, runDir, task, ep, options);
      } finally {
        if (runDir) await rm(runDir, { recursive: true, force: true }).catch(() => undefined);
      }
      const t = performance.now();
      const visible = visibleReward({ original: ep.original_script, repaired: applied.script, exec, evidence });
      const held = heldOutReward({ original: ep.original_script, repaired: applied.script, exec, evidence });
      options.onPhase?.({ phase: 'repair: reward', ms: Math.round((performance.now() - t) * 10) / 10 });
      const { findings, ...heldOut } = held;
      evaluation = {
        unified_diff: unifiedDiff,
        apply: { ok: true, mode: applied.mode, warnings: applied.warnings },
        repaired_script: applied.script,
        reward: visible.reward,
        reward_breakdown: { ...visible.breakdown },
        held_out_breakdown: heldOut,
        success: isSuccess(heldOut),
        error_trace: exec.exit_code === 0 ? '' : errorTraceOf(exec),
        findings: [...new Set([...visible.findings, ...findings])],
        verification: verificationRecord(evidence),
        execution: exec,
      };
    }
    // Only cache what belongs to the episode that is still current, and never a cancelled run.
    const cancelled = options.signal?.aborted || evaluation.execution?.killed;
    if (this.episode?.episode_id === ep.episode_id && !cancelled) this.evaluations.set(unifiedDiff, evaluation);
    return structuredClone(evaluation);
  }

  /** The oracle repair: the diff that the inverse primitive makes from the broken script. */
  oracleDiff(): string {
    const ep = this.episode;
    const drift = ep ? this.tasks.getById(ep.task_id)?.natural_drift : undefined;
    if (ep && ep.broken_script !== null && drift) {
      // A natural-drift task has no inverse: its oracle is the reference repair recorded once it was solved.
      if (drift.reference_repair) return drift.reference_repair;
      throw new EnvironmentError(
        `Natural-drift task "${ep.task_id}" has no oracle: no repair has solved it yet (natural_drift.reference_repair).`,
      );
    }
    if (!ep || ep.broken_script === null || !ep.inverse_spec)
      throw new EnvironmentError('oracleDiff needs an episode past the drift phase.');
    const restored = applySpec(ep.broken_script, ep.inverse_spec).script;
    if (restored !== ep.original_script)
      throw new EnvironmentError(`The inverse of ${ep.breakage_spec?.primitive_type} did not restore the original exactly.`);
    return createRepairDiff(ep.broken_script, restored);
  }

  /**
   * Takes a whole saved state back as is (the embedded editor resuming its own episode after a
   * reload), broken script and first run included, without running anything. Trusted because it is
   * the same user's own workspace state on their own machine: whoever can edit it can edit the
   * dataset it feeds just as well, and re-running the broken script on every reload would cost a
   * run (minutes in real mode). Anything that arrives from a client goes through `recreate`, which
   * recomputes instead.
   */
  restore(state: EpisodeState): void {
    const parsed = EpisodeStateSchema.safeParse(state);
    if (!parsed.success) throw new EnvironmentError(`Saved episode is invalid: ${formatZodError(parsed.error)}`);
    if (!this.tasks.getById(parsed.data.task_id))
      throw new EnvironmentError(`Saved episode refers to unknown task "${parsed.data.task_id}".`);
    this.episode = parsed.data;
    this.evaluations.clear();
    if (parsed.data.final) this.evaluations.set(parsed.data.final.unified_diff, parsed.data.final);
  }

  /**
   * Cancels this environment's own runs (never another environment's: a server holds one per
   * session) and waits for them to end. Runs asked for afterwards are cancelled before they start.
   */
  async dispose(): Promise<void> {
    this.disposed = true;
    for (const c of this.live) c.abort();
    await Promise.allSettled([...this.inflight]);
  }

  /** Number of this environment's runs in flight (waiting for a slot or executing). */
  get liveRunCount(): number {
    return this.inflight.size;
  }

  /**
   * The hub items a task's runs need in real mode: the task's explicit `hub` (strict), else derived
   * from its unbroken original and args (the broken and repaired scripts and the verifier use the
   * same names), plus the verifier's declared base model. Cached per task and script.
   */
  private hubNeedsOf(task: Task, original: string | undefined): RunHubNeeds {
    const script = original ?? task.script_content;
    const key = `${task.task_id}\0${scriptDigest(script)}`;
    let hit = this.hubNeedsCache.get(key);
    if (!hit) {
      const needs = task.hub ?? deriveHubNeeds(script, task.args ?? [], task.files ?? {});
      const base = task.verify?.base_model;
      const models =
        base && looksLikeModelId(base) && !needs.models.some((m) => m.id === base)
          ? [...needs.models, { id: base, from: 'verify.base_model' }]
          : needs.models;
      hit = {
        needs: {
          models: models.filter((m) => !isBaseHubModel(m.id)),
          datasets: needs.datasets,
          ...(needs.metrics ? { metrics: needs.metrics } : {}),
          ...(needs.files ? { files: needs.files } : {}),
        },
        files: task.files,
        modelArchitectures: this.config.modelArchitectures,
        strict: task.hub !== undefined,
      };
      if (this.hubNeedsCache.size > 256) this.hubNeedsCache.clear();
      this.hubNeedsCache.set(key, hit);
    }
    return hit;
  }

  /**
   * Runs a script of the current episode with its task's arguments and files; `validate` as in
   * RunOptions. `extra` replaces the task's run (the verifier's script, files and binds) or keeps
   * the run folder for the verifier; `runDir` is then the caller's to remove.
   */
  private run(
    script: string,
    options: StepOptions,
    validate: false | { baseline: string },
    extra: RunExtras = {},
  ): Promise<{ exec: ExecutionResult; runDir: string }> {
    const p = this.runOwned(script, options, validate, extra);
    this.inflight.add(p);
    const forget = () => this.inflight.delete(p);
    p.then(forget, forget);
    return p;
  }

  /** What decides a run's warm pool (executor.ts `runShape`): shared by runs and `prewarm`, so their keys agree. */
  private runShapeOptions(
    libraryVersions: LibraryVersions,
    real: RealRunSetup | undefined,
    taskEnv?: Record<string, string>,
    runtime?: TaskRuntime,
  ) {
    return {
      mode: this.config.mode,
      // The task's runtime shims (runtimeShims.ts): every run of it, the verifier's included.
      ...(runtime ? { shims: runtime.shims } : {}),
      interpreter: real?.interpreter ?? this.config.interpreter,
      // The task's own variables (tasks.json `env`), under real mode's, which must win (offline, CPU).
      extraEnv: taskEnv || real ? { ...(taskEnv ?? {}), ...(real?.env ?? {}) } : undefined,
      ...(real ? { bytecodeCache: real.bytecodeCache, privateCopies: real.privateCopies } : {}),
      sandbox: this.config.sandbox,
      warm: this.config.warm,
      libraryVersions,
      parentDir: this.config.parentDir,
    };
  }

  /**
   * Starts warm zygotes for runs of a snapshot (`forgeenv serve --warm`): real mode prepares the
   * snapshot's venv first. Without a snapshot, or with the open episode's, the zygotes take the
   * shape of the open episode's runs (the task's hub, variables and shims: real mode's runs of a
   * task that needs hub items have an HF_HOME of their own, so a snapshot's zygotes never fit them).
   * Resolves with the pool's key and label, or why not.
   */
  async prewarm(snapshot?: string, onProgress?: (m: string) => void): Promise<{ key: string; label: string } | { error: string }> {
    let versions: LibraryVersions;
    try {
      versions = snapshot === undefined ? (this.episode?.library_versions ?? snapshotVersions()) : snapshotVersions(snapshot);
    } catch (e) {
      return { error: (e as Error).message };
    }
    const ep = this.episode;
    const forEpisode = ep !== undefined && (snapshot === undefined || snapshotIdOf(ep.library_versions) === snapshot);
    try {
      const shape = forEpisode
        ? await this.episodeRunOptions(ep, onProgress)
        : this.runShapeOptions(
            versions,
            this.config.mode === 'real'
              ? await prepareRealRun({ libraryVersions: versions, interpreter: this.config.interpreter, onProgress })
              : undefined,
          );
      return await prewarmRuntime({ ...shape, warm: true, onProgress });
    } catch (e) {
      return { error: (e as Error).message };
    }
  }

  /** The options every run of episode `ep` shares (runOwned adds the script's own): its pool key's inputs. */
  private async episodeRunOptions(ep: EpisodeState | undefined, onProgress?: (m: string) => void, signal?: AbortSignal) {
    const task = ep ? this.tasks.getById(ep.task_id) : undefined;
    const versions = ep?.library_versions ?? snapshotVersions();
    // Real mode: the snapshot's venv (or the user's interpreter) and the offline local hub; a
    // RealModeError from here reaches the caller (step turns it into an error observation).
    const hub = task && this.config.mode === 'real' ? this.hubNeedsOf(task, ep?.original_script) : undefined;
    const real =
      this.config.mode === 'real'
        ? await prepareRealRun({ libraryVersions: versions, interpreter: this.config.interpreter, hub, onProgress, signal })
        : undefined;
    return { ...this.runShapeOptions(versions, real, task?.env, task?.runtime), mounts: task?.mounts, real, hub };
  }

  private async runOwned(
    script: string,
    options: StepOptions,
    validate: false | { baseline: string },
    extra: RunExtras,
  ): Promise<{ exec: ExecutionResult; runDir: string }> {
    const ep = this.episode;
    const task = ep ? this.tasks.getById(ep.task_id) : undefined;
    const controller = new AbortController();
    const onAbort = () => controller.abort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    if (options.signal?.aborted || this.disposed) controller.abort();
    this.live.add(controller);
    let release: (() => void) | undefined;
    const role = extra.role ?? 'broken run';
    const onPhase = options.onPhase && ((p: PhaseTime) => options.onPhase?.({ ...p, phase: `${role}: ${p.phase}` }));
    try {
      // Wait for a run slot (a RunQueueFullError leaves the episode untouched); aborted while
      // waiting, the run below is reported as cancelled without starting.
      const limiter = this.runLimiter;
      release = limiter ? await timed(onPhase, 'run slot', () => limiter.acquire(controller.signal)) : undefined;
      const { real, hub, ...shape } = await timed(onPhase, 'run options', () =>
        this.episodeRunOptions(ep, options.onProgress ?? this.onProgress, controller.signal),
      );
      // Local data files the task reads but does not ship (`--train_file train.jsonl`): synthesized.
      const dataFiles = real && task && hub ? missingDataFiles(hub.needs.datasets, task.files ?? {}) : {};
      const r = await executeScript({
        script,
        ...shape,
        onProgress: options.onProgress ?? this.onProgress,
        timeoutMs: this.config.timeoutMs,
        outputCapBytes: this.config.outputCapBytes,
        signal: controller.signal,
        onOutput: extra.quiet ? undefined : options.onOutput,
        validate,
        args: task?.args,
        files: Object.keys(dataFiles).length ? { ...dataFiles, ...task?.files } : task?.files,
        ...(real && hub ? { links: diskDatasetLinks(hub.needs.datasets, real.hubDir) } : {}),
        ...extra.run,
        keepRunDir: extra.keepRunDir ?? false,
        onPhase,
      });
      if (r.sandbox_warning) this.lastSandboxWarning = r.sandbox_warning;
      // Keep exactly the ExecutionResult fields, so the state survives a JSON round trip unchanged.
      return { exec: ExecutionResultSchema.parse(r), runDir: extra.keepRunDir ? r.run_dir : '' };
    } finally {
      release?.();
      this.live.delete(controller);
      options.signal?.removeEventListener('abort', onAbort);
    }
  }

  /**
   * The evidence of a finished run: its artifact verified against the untrained model and against
   * the unbroken original's (computed once per task, mode and snapshot, then shared). A run that did
   * not exit 0 has no evidence to check.
   */
  private async verify(exec: ExecutionResult, runDir: string, task: Task, ep: EpisodeState, options: StepOptions): Promise<Evidence> {
    if (exec.exit_code !== 0 || exec.killed || !runDir)
      return NO_EVIDENCE('the script did not run to the end, so no artifact was verified');
    const spec = VerifySpecSchema.parse(task.verify ?? {});
    const verifyDir = (dir: string, pinned: Partial<VerifySpec> = {}) => this.verifyRunDir(dir, task, ep, spec, options, pinned);
    // The original fails here: no band to compare with, "runs and trains" decides (naturalDriftEpisode.ts).
    if (task.natural_drift) return judgeRunsAndTrains(await verifyDir(runDir), spec);
    const reference = await this.referenceOf(task, ep, spec, options);
    if (options.signal?.aborted) return NO_EVIDENCE('cancelled before the artifact was verified');
    // The repair is checked on what the original's check resolved: the same artifact path, model, head and data.
    return judgeEvidence(await verifyDir(runDir, reference.ok ? reference.resolved : {}), reference, spec, { mode: this.config.mode });
  }

  /**
   * The current episode's reference: the unbroken original's own verification, the band a repair is judged
   * against (computed once per task, check, mode and snapshot; verify/reference.ts). make-task asks for it
   * before any episode run, so a check the task must declare (`verify.base_model`) is known at once.
   */
  async referenceVerification(options: StepOptions = {}): Promise<VerifierOutcome> {
    const ep = this.episode;
    if (!ep) throw new EnvironmentError('referenceVerification needs an episode: call reset() first.');
    const task = this.requireTask(ep);
    return this.referenceOf(task, ep, VerifySpecSchema.parse(task.verify ?? {}), options);
  }

  /** The verifier's outcome on a finished run folder of the episode's task (`pinned`: what the reference resolved). */
  private async verifyRunDir(
    dir: string,
    task: Task,
    ep: EpisodeState,
    spec: VerifySpec,
    options: StepOptions,
    pinned: Partial<VerifySpec> = {},
  ): Promise<VerifierOutcome> {
    await timed(options.onPhase, 'verifier run: open folder', () => openForReading(dir));
    const { nonce, script, scriptName, args, files, inputDir } = verifierRun(dir, ep.original_script, {
      ...spec,
      ...pinned,
      ...(task.mounts?.length ? { mounts: task.mounts } : {}),
    });
    const { exec: v } = await this.run(script, options, false, {
      run: { scriptName, args, files, inputDir, mounts: [] },
      quiet: true,
      role: 'verifier run',
    });
    return readVerdict(v, nonce);
  }

  private referenceOf(task: Task, ep: EpisodeState, spec: VerifySpec, options: StepOptions): Promise<VerifierOutcome> {
    const verifyDir = (dir: string) => this.verifyRunDir(dir, task, ep, spec, options);
    return referenceOutcome(
      {
        task_id: task.task_id,
        original: ep.original_script,
        verify: spec,
        mode: this.config.mode,
        interpreter: this.config.interpreter,
        library_versions: ep.library_versions,
        args: task.args,
        files: task.files,
      },
      async () => {
        const given = this.originalRun;
        if (given && given.taskId === task.task_id && given.script === ep.original_script) return verifyDir(given.runDir);
        const { exec: o, runDir: dir } = await this.run(ep.original_script, options, false, {
          keepRunDir: true,
          quiet: true,
          role: 'original run',
        });
        try {
          if (o.killed || o.timed_out)
            return { ok: false, reason: `the unbroken original's run was ${o.timed_out ? 'timed out' : 'cancelled'}` };
          if (o.exit_code !== 0 || !dir)
            return {
              ok: false,
              reason: `the unbroken original did not run cleanly here (${o.exit_code === null ? 'no exit code' : `exit code ${o.exit_code}`})`,
            };
          return await verifyDir(dir);
        } finally {
          if (dir) await rm(dir, { recursive: true, force: true }).catch(() => undefined);
        }
      },
      options.signal,
    );
  }

  private requireTask(ep: EpisodeState): Task {
    const task = this.tasks.getById(ep.task_id);
    if (!task) throw new EnvironmentError(`Task "${ep.task_id}" is no longer in the corpus.`);
    return task;
  }

  private observe(extraInfo: Record<string, unknown> = {}): Observation {
    const ep = this.episode;
    if (!ep) throw new EnvironmentError('no episode');
    const task = this.requireTask(ep);
    const info: Record<string, unknown> = {
      episode_id: ep.episode_id,
      seed: ep.seed,
      mode: this.config.mode,
      interpreter: this.config.interpreter ?? (this.config.mode === 'real' ? 'snapshot venv' : 'python3'),
      env_version: ENV_VERSION,
      ...extraInfo,
    };
    if (ep.breakage_spec) info.breakage_primitive = ep.breakage_spec;
    if (ep.broken_execution) info.broken_execution = summarizeExecution(ep.broken_execution);
    // How the latest run was isolated (provenance), and why it was weaker than asked, if it was.
    const isolation = ep.final?.execution?.isolation ?? ep.broken_execution?.isolation;
    if (isolation) info.isolation = isolation;
    // Warm (a zygote started ahead) or cold: the same outcome either way, recorded for provenance.
    const runtime = ep.final?.execution?.runtime ?? ep.broken_execution?.runtime;
    if (runtime) info.runtime = runtime;
    if (this.lastSandboxWarning) info.sandbox_warning = this.lastSandboxWarning;
    let script = ep.original_script;
    let errorTrace: string | null = null;
    let reward: number | null = null;
    let rewardBreakdown: Record<string, number> = {};
    let heldOut: Record<string, number> = {};
    if (ep.phase === 'repair' && ep.broken_script !== null) {
      script = ep.broken_script;
      errorTrace = ep.broken_execution ? errorTraceOf(ep.broken_execution) || null : null;
      info.broke = ep.broken_execution ? ep.broken_execution.exit_code !== 0 : null;
    }
    if (ep.phase === 'done' && ep.final) {
      const f = ep.final;
      script = f.repaired_script;
      errorTrace = f.error_trace || null;
      reward = f.reward;
      rewardBreakdown = f.reward_breakdown;
      heldOut = f.held_out_breakdown;
      info.repair_apply = f.apply;
      info.findings = f.findings;
      info.success = f.success;
      if (f.verification) info.verification = f.verification;
      if (f.execution) info.repair_execution = summarizeExecution(f.execution);
    }
    return {
      current_phase: ep.phase,
      task_id: ep.task_id,
      task_description: task.description,
      target_category: ep.target_category,
      script_content: script,
      error_trace: errorTrace,
      library_versions: { ...ep.library_versions },
      reward,
      reward_breakdown: { ...rewardBreakdown },
      held_out_breakdown: { ...heldOut },
      episode_step: ep.episode_step,
      info,
      done: ep.phase === 'done',
      metadata: { difficulty: task.difficulty, category: task.category, task_source: task.source, started_at: ep.started_at },
    };
  }

  private errorObservation(message: string, kind: string): Observation {
    if (this.episode) {
      const obs = this.observe();
      return { ...obs, info: { ...obs.info, error: message, error_kind: kind } };
    }
    return emptyObservation({ error: message, error_kind: kind });
  }
}

/** What a repair agent sees as the error: stderr, or a clear note when the run ended abnormally. */
export function errorTraceOf(exec: ExecutionResult): string {
  const notes: string[] = [];
  if (exec.violations.length) notes.push(`Script not run: forbidden constructs:\n${exec.violations.map((v) => `  ${v}`).join('\n')}`);
  if (exec.timed_out) notes.push(`Script killed: timed out after ${Math.round(exec.wall_time_ms)} ms.`);
  if (exec.output_truncated) notes.push('Script killed: output exceeded the cap.');
  const stderr = exec.stderr.trimEnd();
  if (exec.exit_code === 0 && notes.length === 0) return '';
  return [stderr, ...notes].filter(Boolean).join('\n');
}

export function summarizeExecution(exec: ExecutionResult): Record<string, unknown> {
  return {
    exit_code: exec.exit_code,
    wall_time_ms: Math.round(exec.wall_time_ms),
    checkpoint_exists: exec.checkpoint_exists,
    timed_out: exec.timed_out,
    output_truncated: exec.output_truncated,
    violations: exec.violations,
    ...(exec.isolation ? { isolation: exec.isolation } : {}),
  };
}
