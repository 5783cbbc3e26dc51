// The OpenEnv wire protocol as ForgeEnv serves it: multi-step episodes hold together only over
// the WebSocket `/ws` session (`{type: reset|step|state|close, data}` -> `{type: observation|state|error, data}`).
// `evaluate` is our extension (score a repair without ending the episode); a server without it answers `error`.
import { z } from 'zod';
import { EpisodeStateSchema, RepairEvaluationSchema } from './episodeTypes';
import { ObservationSchema } from './schemas';

export const ClientMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('reset'), data: z.record(z.string(), z.unknown()).default({}) }),
  z.object({ type: z.literal('step'), data: z.unknown() }),
  z.object({ type: z.literal('evaluate'), data: z.object({ unified_diff: z.string() }) }),
  z.object({ type: z.literal('state'), data: z.unknown().optional() }),
  z.object({ type: z.literal('close'), data: z.unknown().optional() }),
]);
export type ClientMessage = z.infer<typeof ClientMessageSchema>;

export const ServerMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('observation'), data: ObservationSchema }),
  z.object({ type: z.literal('evaluation'), data: RepairEvaluationSchema }),
  z.object({ type: z.literal('state'), data: EpisodeStateSchema.nullable() }),
  z.object({ type: z.literal('error'), data: z.object({ message: z.string() }).passthrough() }),
]);
export type ServerMessage = z.infer<typeof ServerMessageSchema>;
