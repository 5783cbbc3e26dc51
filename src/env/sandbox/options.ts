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

/**
 * Names a caller may never set or pass to a script (manifests' `env`, `extraEnv`, `passEnv`):
 * - the dynamic loader's (`LD_*`; `DYLD_*` on macOS) and glibc's (`GLIBC_TUNABLES`, `GCONV_PATH`,
 *   `LOCPATH`, `NLSPATH`, `MALLOC_*`, `HOSTALIASES`, `RES_OPTIONS`): they run code or change libc in
 *   every process that starts with them, and in the fallback that is the rlimit wrapper too;
 * - the interpreter's (`PYTHON*`): they decide what Python imports and runs before the script (the
 *   executor sets its own: PYTHONPATH of the stand-ins, the bytecode cache);
 * - shells' start-up hooks (`BASH_ENV`, `ENV`, `BASH_FUNC_*`, `SHELLOPTS`, `BASHOPTS`, `PS4`, `IFS`,
 *   `PROMPT_COMMAND`): a script's `subprocess` with a shell would run them;
 * - `PATH`: it comes from the clean environment's allowlist; set by a manifest it would decide which
 *   program a script's `subprocess.run(["python", …])` starts (e.g. one the run wrote).
 * (The executor's own variables, `HOME`, `TMPDIR`, `FORGEENV_*`, are not refused: the executor's
 * values always win over a caller's.)
 * Within the sandbox these could only hurt the script itself, but the same names reach the fallback's
 * processes and any tool a run starts, so they are refused at every boundary with the reason.
 */
export const DANGEROUS_ENV =
  /^(LD_|DYLD_|PYTHON|MALLOC_|BASH_FUNC_)|^(GLIBC_TUNABLES|GCONV_PATH|LOCPATH|NLSPATH|HOSTALIASES|RES_OPTIONS|BASH_ENV|ENV|SHELLOPTS|BASHOPTS|PS4|IFS|PROMPT_COMMAND|PATH)$/i;

export const EnvNameSchema = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name (letters, digits, _)')
  .refine((n) => !DANGEROUS_ENV.test(n), {
    error: (i) =>
      `${String(i.input)} may not be set for a script: LD_*, PYTHON*, shell start-up and loader variables and PATH are refused (docs/sandbox.md)`,
  });

/** Extra environment variables for a script (validated names; see DANGEROUS_ENV). */
export const ScriptEnvSchema = z
  .record(
    z.string(),
    z.string().refine((v) => !v.includes('\0'), 'no NUL character'),
  )
  .superRefine((env, ctx) => {
    // Checked here rather than as the record's key schema, whose failure zod reports only as "Invalid key in record".
    for (const name of Object.keys(env)) {
      const r = EnvNameSchema.safeParse(name);
      if (!r.success) ctx.addIssue({ code: 'custom', path: [name], message: r.error.issues[0]?.message ?? 'an invalid name' });
    }
  });

/** The defaults, in one place for the schema, package.json (checked by a test) and the docs. */
export const DEFAULT_LIMITS = {
  /** RLIMIT_CPU per process. Above the longest allowed timeout, so the wall-clock timeout decides first. */
  cpuSeconds: 3600,
  /**
   * RLIMIT_AS, at most: `import torch` alone maps ~3.1 GB of virtual memory (measured, torch 2.4
   * CPU), and a 2 GiB limit makes it fail. 16 GiB stops runaway allocations. A run gets less when
   * the machine is shared: memory.ts divides the machine's memory among concurrent runs.
   */
  addressSpaceMiB: 16_384,
  /** RLIMIT_FSIZE: no file above 1 GiB (a checkpoint of the tasks' small models is far below). */
  fileSizeMiB: 1024,
  /** RLIMIT_NPROC: processes and threads; a fork bomb stops here. */
  processes: 512,
  /**
   * The run folder's quota (all files together; quota.ts). The tasks' checkpoints are a few MB, a
   * distilbert-sized one ~260 MB; a run once wrote 2.8 GiB in 7.5 s.
   */
  diskMiB: 2048,
} as const;

/** 0 = no limit. */
export const SandboxLimitsSchema = z.object({
  cpuSeconds: z.number().int().min(0).max(86_400).default(DEFAULT_LIMITS.cpuSeconds),
  addressSpaceMiB: z.number().int().min(0).max(4_194_304).default(DEFAULT_LIMITS.addressSpaceMiB),
  fileSizeMiB: z.number().int().min(0).max(4_194_304).default(DEFAULT_LIMITS.fileSizeMiB),
  processes: z.number().int().min(0).max(1_000_000).default(DEFAULT_LIMITS.processes),
  diskMiB: z.number().int().min(0).max(4_194_304).default(DEFAULT_LIMITS.diskMiB),
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
