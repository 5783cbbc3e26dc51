// The OpenEnv wire protocol, as openenv-core (0.3.x, `openenv.core.env_server.http_server`) speaks it.
// Multi-step episodes hold together only over the WebSocket `/ws` session:
//   client: {type: "reset", data: {seed?, episode_id?, ...}} | {type: "step", data: <action>}
//           | {type: "state"} | {type: "close"}
//   server: {type: "observation", data: {observation, reward, done}} | {type: "state", data: {episode_id, step_count, ...}}
//           | {type: "error", data: {message, code, errors?}}
// Inside `observation` are the ForgeEnv fields (current_phase, script_content, error_trace, ...);
// `reward` and `done` sit beside it, as openenv's serialize_observation puts them.
// Our extensions, inside the same {type, data} envelope (a plain OpenEnv server answers them with an
// UNKNOWN_TYPE error): `evaluate` -> `evaluation` scores a repair without ending the episode;
// `restore` -> `observation` re-creates a saved episode from its recipe; `cancel` (no answer) ends
// the run in progress; a request asking for `stream_output` gets `output` messages before its answer.
import { z } from 'zod';
import {
  EpisodeRecipeSchema,
  EpisodeStateSchema,
  RepairEvaluationSchema,
  type EpisodeRecipe,
  type EpisodeState,
} from '../episode/episodeTypes';
import type { RawData } from 'ws';
import {
  BreakageActionSchema,
  BreakdownSchema,
  DifficultySchema,
  RepairActionSchema,
  LibraryVersionsSchema,
  ObservationSchema,
  PhaseSchema,
  type ForgeAction,
  type Observation,
  type ResetOptions,
} from '../schemas';

/** openenv-core's WSErrorCode. */
export const WS_ERROR_CODES = [
  'INVALID_JSON',
  'UNKNOWN_TYPE',
  'VALIDATION_ERROR',
  'EXECUTION_ERROR',
  'CAPACITY_REACHED',
  'FACTORY_ERROR',
  'SESSION_ERROR',
] as const;
export type WsErrorCode = (typeof WS_ERROR_CODES)[number];

/** One validation problem, shaped like a pydantic error (what openenv puts in `errors` / HTTP 422 `detail`). */
export interface WireValidationIssue {
  type: string;
  loc: Array<string | number>;
  msg: string;
}

export interface WireError {
  message: string;
  code: WsErrorCode;
  errors?: WireValidationIssue[];
  [k: string]: unknown;
}

/** `data` of an observation message and the body of HTTP /reset and /step. */
export interface WireStepResult {
  observation: Record<string, unknown>;
  reward: number | null;
  done: boolean;
  /** The observation's metadata again, beside it, when not empty (as openenv >= 0.4 sends it). */
  metadata?: Record<string, unknown>;
}

export interface WireState {
  episode_id: string | null;
  step_count: number;
  [k: string]: unknown;
}

/** A piece of a run's output, sent before the answer to a request that asked for `stream_output`. */
export interface WireOutput {
  stream: 'stdout' | 'stderr';
  text: string;
}

export type ServerMessage =
  | { type: 'observation'; data: WireStepResult }
  | { type: 'evaluation'; data: z.infer<typeof RepairEvaluationSchema> }
  | { type: 'state'; data: WireState }
  | { type: 'output'; data: WireOutput }
  | { type: 'error'; data: WireError };

/** What a client may send. A step asks for live output with `metadata.stream_output: true` (OpenEnv's action metadata). */
export type ClientMessage =
  | { type: 'reset'; data: Record<string, unknown> }
  | { type: 'step'; data: Record<string, unknown> }
  | { type: 'evaluate'; data: { unified_diff: string; stream_output?: boolean } }
  | { type: 'restore'; data: EpisodeRecipe & { stream_output?: boolean } }
  | { type: 'cancel'; data?: Record<string, never> }
  | { type: 'state' }
  | { type: 'close' };

export function zodIssues(error: z.ZodError, prefix: Array<string | number> = []): WireValidationIssue[] {
  return error.issues.map((i) => ({
    type: i.code,
    loc: [...prefix, ...i.path.map((p) => (typeof p === 'symbol' ? String(p) : p))],
    msg: i.message,
  }));
}

function issuesText(issues: WireValidationIssue[]): string {
  return issues.map((i) => `${i.loc.length ? i.loc.join('.') : '(root)'}: ${i.msg}`).join('; ');
}

// --- the action -------------------------------------------------------------------------------

/** The action on the wire: a ForgeAction plus OpenEnv's optional `metadata` (kept out of the env). */
export const WireActionSchema = z.union([
  z.object({ breakage: BreakageActionSchema, metadata: z.record(z.string(), z.unknown()).optional() }).strict(),
  z.object({ repair: RepairActionSchema, metadata: z.record(z.string(), z.unknown()).optional() }).strict(),
]);

export function parseWireAction(
  data: unknown,
): { ok: true; action: ForgeAction; metadata: Record<string, unknown> } | { ok: false; issues: WireValidationIssue[] } {
  const r = WireActionSchema.safeParse(data);
  if (!r.success) return { ok: false, issues: zodIssues(r.error) };
  const { metadata, ...action } = r.data;
  return { ok: true, action: action, metadata: metadata ?? {} };
}

// --- reset ------------------------------------------------------------------------------------

/**
 * Reset parameters: the keys ForgeEnv knows are type-checked, any other key (an OpenEnv client's
 * own extras) is dropped, as openenv-core drops keyword arguments its environment does not take.
 */
const WireResetSchema = z
  .object({
    seed: z.number().int().nonnegative().nullable().optional(),
    episode_id: z.string().min(1).max(255).nullable().optional(),
    task_id: z.string().min(1).nullable().optional(),
    taskId: z.string().min(1).nullable().optional(),
    difficulty: DifficultySchema.nullable().optional(),
    library_versions: LibraryVersionsSchema.nullable().optional(),
    target_category: z.string().min(1).nullable().optional(),
    options: z.object({ difficulty: DifficultySchema.optional() }).passthrough().nullable().optional(),
  })
  .strip();

export function parseWireReset(data: unknown): { ok: true; options: ResetOptions } | { ok: false; issues: WireValidationIssue[] } {
  const r = WireResetSchema.safeParse(data ?? {});
  if (!r.success) return { ok: false, issues: zodIssues(r.error) };
  const o: ResetOptions = {};
  const d = r.data;
  if (d.seed != null) o.seed = d.seed;
  if (d.episode_id != null) o.episode_id = d.episode_id;
  const taskId = d.task_id ?? d.taskId;
  if (taskId != null) o.task_id = taskId;
  if (d.difficulty != null) o.difficulty = d.difficulty;
  if (d.library_versions != null) o.library_versions = d.library_versions;
  if (d.target_category != null) o.target_category = d.target_category;
  if (d.options?.difficulty != null) o.options = { difficulty: d.options.difficulty };
  return { ok: true, options: o };
}

/** What RemoteBackend sends for a reset: snake_case throughout. */
export function resetToWire(options: ResetOptions): Record<string, unknown> {
  const { taskId, task_id, ...rest } = options;
  const id = task_id ?? taskId;
  return { ...rest, ...(id !== undefined ? { task_id: id } : {}) };
}

// --- client messages --------------------------------------------------------------------------

const ResetMsg = z.object({ type: z.literal('reset'), data: z.record(z.string(), z.unknown()).default({}) }).strict();
const StepMsg = z.object({ type: z.literal('step'), data: z.record(z.string(), z.unknown()) }).strict();
const EvaluateMsg = z
  .object({ type: z.literal('evaluate'), data: z.object({ unified_diff: z.string(), stream_output: z.boolean().optional() }).strict() })
  .strict();
const RestoreMsg = z
  .object({ type: z.literal('restore'), data: EpisodeRecipeSchema.extend({ stream_output: z.boolean().optional() }).strict() })
  .strict();
const CancelMsg = z.object({ type: z.literal('cancel'), data: z.object({}).strict().optional() }).strict();
const StateMsg = z.object({ type: z.literal('state') }).strict();
const CloseMsg = z.object({ type: z.literal('close') }).strict();
const CLIENT_SCHEMAS = {
  reset: ResetMsg,
  step: StepMsg,
  evaluate: EvaluateMsg,
  restore: RestoreMsg,
  cancel: CancelMsg,
  state: StateMsg,
  close: CloseMsg,
} as const;

/** Whether a step's action asks for its run's output as it comes (`metadata.stream_output: true`). */
export function wantsOutput(action: Record<string, unknown>): boolean {
  const m = action.metadata;
  return m !== null && typeof m === 'object' && (m as Record<string, unknown>).stream_output === true;
}

/**
 * Parses one text frame from a client, in openenv-core's order: JSON first (INVALID_JSON), then the
 * type (UNKNOWN_TYPE), then the message's shape (VALIDATION_ERROR).
 */
export function parseClientMessage(text: string): { ok: true; message: ClientMessage } | { ok: false; error: WireError } {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    return { ok: false, error: { message: `Invalid JSON: ${(e as Error).message}`, code: 'INVALID_JSON' } };
  }
  const type = raw !== null && typeof raw === 'object' && !Array.isArray(raw) ? (raw as { type?: unknown }).type : undefined;
  if (typeof type !== 'string' || !Object.hasOwn(CLIENT_SCHEMAS, type)) {
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
      return {
        ok: false,
        error: {
          message: 'Invalid message: expected a JSON object {type, data}',
          code: 'VALIDATION_ERROR',
          errors: [{ type: 'object_type', loc: [], msg: 'Input should be an object' }],
        },
      };
    }
    return {
      ok: false,
      error: { message: `Unknown message type: ${typeof type === 'string' ? type : JSON.stringify(type ?? '')}`, code: 'UNKNOWN_TYPE' },
    };
  }
  const r = CLIENT_SCHEMAS[type as keyof typeof CLIENT_SCHEMAS].safeParse(raw);
  if (!r.success) {
    const errors = zodIssues(r.error);
    return { ok: false, error: { message: `Invalid message: ${issuesText(errors)}`, code: 'VALIDATION_ERROR', errors } };
  }
  return { ok: true, message: r.data as ClientMessage };
}

export function validationError(issues: WireValidationIssue[], what = 'action'): WireError {
  return { message: `Invalid ${what}: ${issuesText(issues)}`, code: 'VALIDATION_ERROR', errors: issues };
}

// --- server side: observation and state on the wire -------------------------------------------

/**
 * openenv's serialize_observation: reward and done beside the observation, not inside it; the
 * metadata stays inside (typed clients read it there) and, when not empty, is repeated beside it
 * as later openenv releases do (0.3 clients ignore the extra key).
 */
export function toWireResult(obs: Observation): WireStepResult {
  const { reward, done, ...rest } = obs;
  return { observation: rest, reward, done, ...(Object.keys(obs.metadata).length ? { metadata: obs.metadata } : {}) };
}

/** OpenEnv's State (episode_id, step_count) with the whole ForgeEnv episode state beside them. */
export function toWireState(state: EpisodeState | undefined): WireState {
  if (!state) return { episode_id: null, step_count: 0 };
  return { ...state, step_count: state.episode_step };
}

// --- client side: what a server sends ---------------------------------------------------------

/**
 * The observation as a client reads it. Lenient where an OpenEnv server may leave fields out
 * (openenv drops `metadata` from the observation; a minimal environment may omit `info`).
 */
export const WireObservationSchema = z.object({
  current_phase: PhaseSchema,
  task_id: z.string(),
  task_description: z.string().default(''),
  target_category: z.string().default(''),
  script_content: z.string(),
  error_trace: z.string().nullable().default(null),
  library_versions: LibraryVersionsSchema.default({}),
  reward_breakdown: BreakdownSchema.default({}),
  held_out_breakdown: BreakdownSchema.default({}),
  episode_step: z.number().int().nonnegative().default(0),
  info: z.record(z.string(), z.unknown()).default({}),
  metadata: z.record(z.string(), z.unknown()).default({}),
});

const WireErrorDataSchema = z.object({ message: z.string(), code: z.string().default('UNKNOWN') }).passthrough();

export const ServerMessageSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('observation'),
    data: z.object({
      observation: z.record(z.string(), z.unknown()),
      reward: z.number().nullable().default(null),
      done: z.boolean().default(false),
      metadata: z.record(z.string(), z.unknown()).optional(),
    }),
  }),
  z.object({ type: z.literal('evaluation'), data: RepairEvaluationSchema }),
  z.object({
    type: z.literal('state'),
    data: z
      .object({ episode_id: z.string().nullable().default(null), step_count: z.number().int().nonnegative().default(0) })
      .passthrough(),
  }),
  z.object({ type: z.literal('output'), data: z.object({ stream: z.enum(['stdout', 'stderr']), text: z.string() }) }),
  z.object({ type: z.literal('error'), data: WireErrorDataSchema }),
]);
export type ParsedServerMessage = z.infer<typeof ServerMessageSchema>;

/** Joins `{observation, reward, done}` back into one ForgeEnv observation, validated. */
export function fromWireResult(data: {
  observation: Record<string, unknown>;
  reward: number | null;
  done: boolean;
  metadata?: Record<string, unknown>;
}): { ok: true; observation: Observation } | { ok: false; error: string } {
  // Servers that keep metadata only beside the observation (none known today) still fill it in.
  const inner =
    data.observation.metadata === undefined && data.metadata ? { ...data.observation, metadata: data.metadata } : data.observation;
  const r = WireObservationSchema.safeParse(inner);
  if (!r.success) return { ok: false, error: issuesText(zodIssues(r.error, ['observation'])) };
  const obs = ObservationSchema.safeParse({ ...r.data, reward: data.reward, done: data.done });
  if (!obs.success) return { ok: false, error: issuesText(zodIssues(obs.error)) };
  return { ok: true, observation: obs.data };
}

/** The full ForgeEnv episode state when the server sends one (ours does; a plain OpenEnv server need not). */
export function episodeStateOf(state: WireState): EpisodeState | null {
  const r = EpisodeStateSchema.safeParse(state);
  return r.success ? r.data : null;
}

/**
 * The token of `forgeenv serve --token` (both sides: the server checks it, RemoteBackend sends it).
 * Long enough not to be guessed; printable ASCII without spaces, so it fits a header and a query.
 */
export const ServeTokenSchema = z
  .string()
  .min(16, 'the token must have at least 16 characters (e.g. `openssl rand -hex 32`)')
  .max(4096)
  .regex(/^[\x21-\x7e]+$/, 'the token must be printable ASCII without spaces');

/** A WebSocket frame's payload as text, whatever shape `ws` delivered it in. */
export function rawText(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data).toString('utf8');
}
