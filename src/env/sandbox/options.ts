// What a run's sandbox may do: the isolation mode, network, extra environment variables and the
// rlimits. Parsed with zod at the executor's boundary; the editor fills it from `forgeenv.sandbox.*`.
import { z } from 'zod';

export const SANDBOX_MODES = ['auto', 'bubblewrap', 'off'] as const;
/**
 * `auto`: bubblewrap where it works (Linux with user namespaces or root), else the fallback with a
 * one-time warning. `bubblewrap`: never run without it (the run is refused). `off`: the fallback
 * (process group, rlimits, clean environment) on purpose, without a warning.
 */
export const SandboxModeSchema = z.enum(SANDBOX_MODES);
export type SandboxMode = z.infer<typeof SandboxModeSchema>;

export const EnvNameSchema = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name (letters, digits, _)');

/** The defaults, in one place for the schema, package.json (checked by a test) and the docs. */
export const DEFAULT_LIMITS = {
  /** RLIMIT_CPU per process. Above the longest allowed timeout, so the wall-clock timeout decides first. */
  cpuSeconds: 3600,
  /**
   * RLIMIT_AS. Generous on purpose: `import torch` alone maps ~3.1 GB of virtual memory (measured,
   * torch 2.4 CPU), and a 2 GiB limit makes it fail. 16 GiB stops runaway allocations.
   */
  addressSpaceMiB: 16_384,
  /** RLIMIT_FSIZE: no file above 1 GiB (a checkpoint of the tasks' small models is far below). */
  fileSizeMiB: 1024,
  /** RLIMIT_NPROC: processes and threads; a fork bomb stops here. */
  processes: 512,
} as const;

/** 0 = no limit. */
export const SandboxLimitsSchema = z.object({
  cpuSeconds: z.number().int().min(0).max(86_400).default(DEFAULT_LIMITS.cpuSeconds),
  addressSpaceMiB: z.number().int().min(0).max(4_194_304).default(DEFAULT_LIMITS.addressSpaceMiB),
  fileSizeMiB: z.number().int().min(0).max(4_194_304).default(DEFAULT_LIMITS.fileSizeMiB),
  processes: z.number().int().min(0).max(1_000_000).default(DEFAULT_LIMITS.processes),
});
export type SandboxLimits = z.infer<typeof SandboxLimitsSchema>;

export const SandboxOptionsSchema = z.object({
  mode: SandboxModeSchema.default('auto'),
  /** Default false: the run has its own network namespace with only a loopback device. */
  allowNetwork: z.boolean().default(false),
  /** Names of extra environment variables passed from ForgeEnv's own environment to scripts. */
  passEnv: z.array(EnvNameSchema).max(200).default([]),
  limits: SandboxLimitsSchema.prefault({}),
});
export type SandboxOptions = z.infer<typeof SandboxOptionsSchema>;
export type SandboxOptionsInput = z.input<typeof SandboxOptionsSchema>;
