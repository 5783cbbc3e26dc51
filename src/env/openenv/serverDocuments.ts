// What an OpenEnv server says about itself, computed once per server: /metadata, /schema,
// /openapi.json, and the answer of its MCP endpoint.
import { z } from 'zod';
import { ENV_VERSION } from '../episode/environment';
import { EpisodeStateSchema } from '../episode/episodeTypes';
import { ObservationSchema } from '../schemas';
import { WireActionSchema } from './protocol';

/** OpenEnv's EnvironmentMetadata for ForgeEnv. */
export function environmentMetadata(): Record<string, unknown> {
  return {
    name: 'forge_env',
    description:
      'ForgeEnv: a two-phase drift/repair environment for Hugging Face training scripts. In drift_gen the agent breaks a working script with a breakage primitive; in repair it submits a unified diff that makes the broken script train again, scored by execution.',
    readme_content: null,
    version: ENV_VERSION,
    author: 'ForgeEnv Studio',
    documentation_url: null,
  };
}

/**
 * A minimal OpenAPI document: openenv-core's runtime validator (`openenv validate --url`) reads
 * `info.version` and the paths (simulation mode: /reset, /step and /state present).
 */
export function openApiDocument(): Record<string, unknown> {
  const op = (method: 'get' | 'post', summary: string) => ({ [method]: { summary, responses: { '200': { description: 'OK' } } } });
  return {
    openapi: '3.1.0',
    info: { title: 'ForgeEnv (OpenEnv environment)', version: ENV_VERSION },
    paths: {
      '/health': op('get', 'Health check'),
      '/metadata': op('get', 'Environment metadata'),
      '/schema': op('get', 'JSON schemas of action, observation and state'),
      '/state': op('get', 'State of a fresh environment (episodes live in /ws sessions)'),
      '/reset': op('post', 'Reset a fresh environment and return its first observation'),
      '/step': op('post', 'Validate an action (a stateless step has no episode: use /ws)'),
      '/mcp': op('post', 'MCP JSON-RPC endpoint (ForgeEnv offers no tools)'),
    },
  };
}

/** OpenEnv's /schema: JSON schemas of the action, the observation and the state. */
export function environmentSchemas(): Record<string, unknown> {
  const state = z
    .object({ episode_id: z.string().nullable(), step_count: z.number().int().nonnegative() })
    .extend(EpisodeStateSchema.partial().omit({ episode_id: true }).shape);
  return {
    action: z.toJSONSchema(WireActionSchema, { unrepresentable: 'any' }),
    observation: z.toJSONSchema(ObservationSchema, { unrepresentable: 'any' }),
    state: z.toJSONSchema(state, { unrepresentable: 'any' }),
  };
}

/**
 * The MCP JSON-RPC endpoint every OpenEnv server has. ForgeEnv's actions are not tools, so
 * `tools/list` is empty and every other method is unknown; malformed requests get JSON-RPC errors.
 */
export function mcpAnswer(request: unknown): Record<string, unknown> {
  const r = z
    .object({ jsonrpc: z.literal('2.0'), method: z.string(), id: z.union([z.string(), z.number(), z.null()]).optional() })
    .passthrough()
    .safeParse(request);
  if (!r.success) return { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request' } };
  const id = r.data.id ?? null;
  if (r.data.method === 'tools/list') return { jsonrpc: '2.0', id, result: { tools: [] } };
  return { jsonrpc: '2.0', id, error: { code: -32601, message: `Method not found: ${r.data.method}` } };
}
