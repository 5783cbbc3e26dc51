// The editor's episodes on a remote `forgeenv serve`, over RemoteBackend's WebSocket session. The
// server holds the episode only while the connection lives (a window reload ends it), so this
// adapter keeps its own copy of the episode state: `restore` records it, and the next request that
// needs the episode first re-creates it on the server (the `restore` message, deterministic from
// the episode's recipe). The same happens after the server dropped the session (idle timeout,
// restart). Cancelling a run sends `cancel` (only this session's run ends); live output arrives as
// `output` messages. Server and transport errors become messages a person can act on.
import { EpisodeStateSchema, type EpisodeState, type RepairEvaluation, type StepOptions } from '../episode/episodeTypes';
import { recipeOf } from '../episode/episodeRecipe';
import type { EpisodeSession } from '../episode/episodeSession';
import { RemoteBackend, RemoteEnvironmentError } from './remoteBackend';
import {
  DifficultySchema,
  ExecutionModeSchema,
  TaskCategorySchema,
  TaskSchema,
  formatZodError,
  type ExecutionMode,
  type Observation,
  type ResetOptions,
  type Task,
} from '../schemas';
import type { TaskSampler } from '../tasks/tasks';
import { infoText } from '../schemas';

export interface RemoteSessionOptions {
  /** The editor's own corpus: a task it knows is described from it, one only the server has from the server's answers. */
  tasks?: TaskSampler;
  /** Longest wait for one answer; runs may queue behind others on a shared server. */
  timeoutMs?: number;
  /** After a cancel, how long to wait for the server's answer before closing the connection. */
  cancelGraceMs?: number;
  /** The server's token (`forgeenv serve --token`), if it has one. */
  token?: string;
}

export class RemoteEpisodeSession implements EpisodeSession {
  readonly kind = 'remote' as const;
  private readonly backend: RemoteBackend;
  private copy: EpisodeState | undefined;
  private currentTask: Task | undefined;
  private execution: { mode: ExecutionMode; interpreter: string } | undefined;
  /** The server's session does not hold `copy` (it was restored from disk): re-create it before the next request. */
  private detached = false;
  /** How many times this session re-created its episode on the server (for logs and tests). */
  serverRestores = 0;

  constructor(
    readonly url: string,
    private readonly options: RemoteSessionOptions = {},
  ) {
    this.backend = new RemoteBackend(url, options.timeoutMs ?? 30 * 60_000, options.cancelGraceMs, options.token);
  }

  get state(): EpisodeState | undefined {
    return this.copy ? structuredClone(this.copy) : undefined;
  }

  get task(): Task | undefined {
    return this.currentTask;
  }

  get runsOn(): { mode: ExecutionMode; interpreter: string } | undefined {
    return this.execution;
  }

  reset(options: ResetOptions = {}): Promise<Observation> {
    return this.call(undefined, async () => {
      const obs = await this.backend.reset(options);
      await this.sync(obs);
      return obs;
    });
  }

  step(action: unknown, options: StepOptions = {}): Promise<Observation> {
    return this.call(options.signal, async () => {
      await this.attach(options);
      const obs = await this.backend.step(action, options);
      if (typeof obs.info.error !== 'string') await this.sync(obs);
      return obs;
    });
  }

  evaluateRepair(unifiedDiff: string, options: StepOptions = {}): Promise<RepairEvaluation> {
    return this.call(options.signal, async () => {
      await this.attach(options);
      return this.backend.evaluateRepair(unifiedDiff, options);
    });
  }

  async restore(state: EpisodeState): Promise<void> {
    const parsed = EpisodeStateSchema.safeParse(state);
    if (!parsed.success) throw new RemoteEnvironmentError(`Saved episode is invalid: ${formatZodError(parsed.error)}`);
    this.copy = structuredClone(parsed.data);
    this.currentTask = this.taskOf(parsed.data, undefined);
    this.detached = true;
  }

  dispose(): Promise<void> {
    return this.backend.dispose();
  }

  /** Makes sure the server's session holds the episode, re-creating it from the copy if not. */
  private async attach(options: StepOptions): Promise<void> {
    const ep = this.copy;
    if (!ep || ep.phase === 'done') return; // nothing the server could still do with it
    if (!this.detached && this.backend.hasEpisode) return;
    const obs = await this.backend.restore(recipeOf(ep), options);
    this.serverRestores++;
    this.detached = false;
    this.noteExecution(obs);
  }

  /** Takes the server's episode state as the copy, after an answer that changed it. */
  private async sync(obs: Observation): Promise<void> {
    const state = await this.backend.episodeState();
    if (!state) throw new RemoteEnvironmentError('The server answered but holds no episode.', 'BAD_RESPONSE');
    this.noteExecution(obs);
    this.copy = state;
    this.currentTask = this.taskOf(state, obs);
    this.detached = false;
  }

  private noteExecution(obs: Observation): void {
    const mode = ExecutionModeSchema.safeParse(obs.info.mode);
    const interpreter = obs.info.interpreter;
    if (!mode.success || typeof interpreter !== 'string' || interpreter === '') {
      throw new RemoteEnvironmentError(
        'The server does not say how it runs scripts (info.mode, info.interpreter): it is not a ForgeEnv server.',
        'BAD_RESPONSE',
      );
    }
    this.execution = { mode: mode.data, interpreter };
  }

  /** The editor's own task when it has it; else what the server said about its task. */
  private taskOf(state: EpisodeState, obs: Observation | undefined): Task {
    const known = this.options.tasks?.getById(state.task_id);
    if (known) return known;
    const task = TaskSchema.safeParse({
      task_id: state.task_id,
      description: obs?.task_description ?? '',
      script_content: state.original_script,
      difficulty: DifficultySchema.catch('medium').parse(obs?.metadata.difficulty),
      category: TaskCategorySchema.catch('general').parse(obs?.metadata.category),
      // Scoring happens on the server; the editor never reads these.
      expected_loss_range: [0, 5],
      expected_accuracy_range: [0, 1],
      library_versions: state.library_versions,
      source: 'remote',
    });
    if (!task.success)
      throw new RemoteEnvironmentError(
        `The server's task "${state.task_id}" cannot be used here: ${formatZodError(task.error)}`,
        'BAD_RESPONSE',
      );
    return task.data;
  }

  private async call<T>(signal: AbortSignal | undefined, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      if (signal?.aborted && e instanceof RemoteEnvironmentError && (e.code === 'CONNECTION_CLOSED' || e.code === 'TIMEOUT')) {
        throw new RemoteEnvironmentError(
          'Cancelled: the server did not confirm in time, so the connection was closed (which ends its run).',
          'CANCELLED',
        );
      }
      throw explainRemoteError(e, this.url);
    }
  }
}

/** A cancel that ended without the server's answer (the run ended with the connection). */
export function isCancelledRemoteError(e: unknown): boolean {
  return e instanceof RemoteEnvironmentError && e.code === 'CANCELLED';
}

/** The URL as shown to people: no credentials, no query. */
function shown(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname === '/' ? '' : u.pathname}`;
  } catch {
    return url;
  }
}

/** Turns a RemoteBackend error into one that says what happened and what to do; other errors pass through. */
export function explainRemoteError(e: unknown, url: string): unknown {
  if (!(e instanceof RemoteEnvironmentError)) return e;
  const at = `the ForgeEnv server at ${shown(url)}`;
  const d = e.data;
  const said = typeof d.message === 'string' ? d.message : e.message;
  const num = (k: string) => (typeof d[k] === 'number' ? d[k] : '?');
  let message: string;
  switch (e.code) {
    case 'CAPACITY_REACHED':
      message = d.busy
        ? `${cap(at)} is busy (${num('runs_running')}/${num('max_runs')} runs running, ${num('runs_queued')}/${num('max_queued_runs')} waiting). Nothing was lost: try again in a moment.`
        : `${cap(at)} is at capacity (${num('active_sessions')}/${num('max_sessions')} sessions). Try again later, or ask whoever runs it to raise --max-sessions.`;
      break;
    case 'CONNECTION_CLOSED':
      message =
        d.close_code === 1013
          ? `${cap(at)} is at capacity (it closed the connection: ${infoText(d.reason || 'try again later')}). Try again later, or ask whoever runs it to raise --max-sessions.`
          : `The connection to ${at} closed (${infoText(d.close_code ?? 'no code')}${d.reason ? `: ${infoText(d.reason)}` : ''}). Your episode is kept: try again, and it is re-created on the server.`;
      break;
    case 'UNREACHABLE':
      message = `Cannot reach ${at} (${infoText(d.cause ?? e.message)}). Is \`forgeenv serve\` running there? Check forgeenv.remoteUrl.`;
      break;
    case 'UNAUTHORIZED':
      message = `${cap(at)} refused the connection: it needs the token its \`forgeenv serve\` was started with, and ${d.token_sent ? 'the one sent is not it' : 'none was sent'}. Set forgeenv.remoteToken (or the FORGEENV_TOKEN environment variable) to it: at least 16 printable characters without spaces.`;
      break;
    case 'FORBIDDEN':
      message = `${cap(at)} refused the connection (403 Forbidden): ${said}`;
      break;
    case 'TIMEOUT':
      message = `${cap(at)} did not answer in time (${e.message}). The connection was closed; try again.`;
      break;
    case 'UNKNOWN_TYPE':
      message = `The server at ${shown(url)} does not understand ForgeEnv's own messages (${said}): it is a plain OpenEnv server or an older \`forgeenv serve\`, and the editor needs a current \`forgeenv serve\`.`;
      break;
    case 'VALIDATION_ERROR':
      message = `${cap(at)} rejected the request as invalid: ${said}`;
      break;
    case 'EXECUTION_ERROR':
      message = `${cap(at)} refused: ${said}`;
      break;
    case 'BAD_RESPONSE':
      message = `${cap(at)} sent an answer the editor cannot use: ${e.message}`;
      break;
    default:
      message = `${cap(at)}: ${said}`;
  }
  return new RemoteEnvironmentError(message, e.code, d);
}

function cap(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
