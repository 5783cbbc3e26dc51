// The `forgeenv.*` settings as zod schemas (no vscode import, so unit tests check them against
// package.json). Each key is parsed on its own: one bad value falls back to its default with a
// readable problem instead of discarding every other setting.
import { userInfo } from 'node:os';
import { z } from 'zod';
import { DEFAULT_MAX_DIFF_BYTES, MAX_MAX_DIFF_BYTES, MIN_MAX_DIFF_BYTES } from '../env/limits';
import { ServeTokenSchema } from '../env/openenv/protocol';
import { EnvNameSchema, SandboxLimitsSchema, SandboxModeSchema, type SandboxOptions } from '../env/sandbox/options';
import { formatZodError } from '../env/schemas';
import { ModelArchitecturesSchema } from '../env/hub/modelTable';

const Trimmed = z.string().transform((s) => s.trim());

export const SETTING_SCHEMAS = {
  pythonPath: Trimmed.default(''),
  executionMode: z.enum(['simulated', 'real']).default('simulated'),
  runTimeoutSeconds: z.number().int().min(1).max(3600).default(60),
  outputCapKiB: z.number().int().min(1).max(262_144).default(1024),
  maxDiffBytes: z.number().int().min(MIN_MAX_DIFF_BYTES).max(MAX_MAX_DIFF_BYTES).default(DEFAULT_MAX_DIFF_BYTES),
  datasetFolder: Trimmed.default(''),
  episodesFolder: Trimmed.default(''),
  annotatorId: Trimmed.pipe(z.string().max(200)).default(''),
  taskFolders: z.array(Trimmed.pipe(z.string().min(1))).default([]),
  backend: z.enum(['embedded', 'remote']).default('embedded'),
  remoteUrl: Trimmed.refine((s) => s === '' || /^(https?|wss?):\/\/\S+$/.test(s), 'an http(s):// or ws(s):// URL').default(''),
  remoteToken: Trimmed.pipe(z.union([z.literal(''), ServeTokenSchema])).default(''),
  idleThresholdSeconds: z.number().int().min(5).max(3600).default(60),
  migrationHints: z.boolean().default(false),
  'real.modelArchitectures': ModelArchitecturesSchema.default({}),
  warmRuntime: z.boolean().default(true),
  'sandbox.mode': SandboxModeSchema.default('auto'),
  'sandbox.allowNetwork': z.boolean().default(false),
  'sandbox.passEnv': z.array(EnvNameSchema).max(200).default([]),
  'sandbox.cpuSeconds': SandboxLimitsSchema.shape.cpuSeconds,
  'sandbox.addressSpaceMiB': SandboxLimitsSchema.shape.addressSpaceMiB,
  'sandbox.fileSizeMiB': SandboxLimitsSchema.shape.fileSizeMiB,
  'sandbox.processes': SandboxLimitsSchema.shape.processes,
  'sandbox.diskMiB': SandboxLimitsSchema.shape.diskMiB,
  // Suggest Repair's model: any OpenAI-compatible chat endpoint (src/editor/suggest/).
  'model.endpoint': Trimmed.refine((s) => s === '' || /^https?:\/\/\S+$/.test(s), 'an http(s):// URL').default(''),
  'model.name': Trimmed.pipe(z.string().max(200)).default(''),
  'model.temperature': z.number().min(0).max(2).default(0.2),
  'model.maxTokens': z.number().int().min(16).max(32_768).default(1024),
  'model.requestTimeoutSeconds': z.number().int().min(1).max(3600).default(120),
} as const;

export type SettingKey = keyof typeof SETTING_SCHEMAS;
export type ForgeSettings = { [K in SettingKey]: z.output<(typeof SETTING_SCHEMAS)[K]> };
export const SETTING_KEYS = Object.keys(SETTING_SCHEMAS) as SettingKey[];

export function defaultSettings(): ForgeSettings {
  return parseSettings(() => undefined).settings;
}

/** Reads every key through `get` (undefined = not set); invalid values fall back to defaults. */
export function parseSettings(get: (key: SettingKey) => unknown): { settings: ForgeSettings; problems: string[] } {
  const problems: string[] = [];
  const settings: Record<string, unknown> = {};
  for (const key of SETTING_KEYS) {
    const schema = SETTING_SCHEMAS[key] as z.ZodType;
    const raw = get(key);
    const parsed = schema.safeParse(raw === null ? undefined : raw);
    if (parsed.success) settings[key] = parsed.data;
    else {
      problems.push(`forgeenv.${key}: ${formatZodError(parsed.error)} (using the default)`);
      settings[key] = schema.parse(undefined);
    }
  }
  return { settings: settings as ForgeSettings, problems };
}

/** The executor's sandbox options from the `forgeenv.sandbox.*` settings. */
export function sandboxOptionsOf(s: ForgeSettings): SandboxOptions {
  return {
    mode: s['sandbox.mode'],
    allowNetwork: s['sandbox.allowNetwork'],
    passEnv: s['sandbox.passEnv'],
    limits: {
      cpuSeconds: s['sandbox.cpuSeconds'],
      addressSpaceMiB: s['sandbox.addressSpaceMiB'],
      fileSizeMiB: s['sandbox.fileSizeMiB'],
      processes: s['sandbox.processes'],
      diskMiB: s['sandbox.diskMiB'],
    },
  };
}

/** forgeenv.annotatorId, else the OS user name. */
export function annotatorId(settings: ForgeSettings): string {
  if (settings.annotatorId) return settings.annotatorId;
  try {
    return userInfo().username || 'unknown';
  } catch {
    return process.env.USER ?? process.env.USERNAME ?? 'unknown';
  }
}

/**
 * The token the remote backend sends: forgeenv.remoteToken, else the FORGEENV_TOKEN environment
 * variable (the one `forgeenv serve` reads, so one export serves both on a machine), else none.
 * A variable that cannot be a token is not sent (the server's 401 then says a token is needed).
 */
export function remoteTokenOf(settings: ForgeSettings, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (settings.remoteToken) return settings.remoteToken;
  const parsed = ServeTokenSchema.safeParse(env.FORGEENV_TOKEN?.trim());
  return parsed.success ? parsed.data : undefined;
}
