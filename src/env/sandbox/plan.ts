// How one run is isolated and started: the isolation chosen from the settings and what the machine
// can do, the command line (bwrap around rlimits around Python, rlimits around Python, or Python
// alone), and the preparation a sandboxed run needs (run folder handed to `nobody` as root, a
// bytecode cache folder that is safe to share).
import { lstatSync, mkdirSync, realpathSync } from 'node:fs';
import { chown, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { cacheRoot } from '../snapshots/venv';
import { bwrapArgs, SANDBOX_UID, type SandboxTools } from './bwrap';
import { findExecutable, probeSandbox } from './detect';
import { etcCopy, etcEntries } from './etcView';
import { prlimitPrefix, pythonLimitPrefix } from './limits';
import type { SandboxOptions } from './options';

export type IsolationPlan =
  | { isolation: 'bubblewrap'; tools: SandboxTools }
  | { isolation: 'process-group' | 'none'; warning?: string }
  | { refused: string };
export type RunnablePlan = Exclude<IsolationPlan, { refused: string }>;

export async function chooseIsolation(s: SandboxOptions): Promise<IsolationPlan> {
  if (process.platform === 'win32') {
    if (s.mode === 'bubblewrap') return { refused: 'forgeenv.sandbox.mode is "bubblewrap", which needs Linux' };
    return { isolation: 'none', ...(s.mode === 'auto' ? { warning: fallbackWarning('Windows has no sandbox ForgeEnv can use') } : {}) };
  }
  if (s.mode === 'off') return { isolation: 'process-group' };
  const probe = await probeSandbox();
  if (probe.ok) return { isolation: 'bubblewrap', tools: probe.tools };
  if (s.mode === 'bubblewrap') return { refused: `forgeenv.sandbox.mode is "bubblewrap" but ${probe.reason}` };
  return { isolation: 'process-group', warning: fallbackWarning(probe.reason) };
}

function fallbackWarning(reason: string): string {
  return `Runs are not sandboxed: ${reason}. Scripts still get a clean environment, resource limits and a process-group kill, but they can read and write your files and use the network. Install bubblewrap (Linux), or set forgeenv.sandbox.mode to "off" to accept this and hide the warning.`;
}

/** True when the sandboxed script runs as another uid (root drops to `nobody`), so the run folder must be handed over. */
export const runsAsNobody = (plan: RunnablePlan): boolean => plan.isolation === 'bubblewrap' && plan.tools.asRoot && plan.tools.setpriv !== undefined;

/** Makes `dir` and everything in it owned by the sandbox's uid. */
export async function handOver(dir: string): Promise<void> {
  await chown(dir, SANDBOX_UID, SANDBOX_UID);
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) await handOver(p);
    else await chown(p, SANDBOX_UID, SANDBOX_UID);
  }
}

/**
 * The bytecode cache folder, made if missing, or undefined when it is not safe to share: not a plain
 * folder of ours, or writable by others (in a shared temp folder another user could have made it
 * first and planted compiled modules). Runs then write no bytecode at all.
 */
export function trustedCacheDir(dir: string | undefined): string | undefined {
  if (!dir) return undefined;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o755 });
    const st = lstatSync(dir);
    if (!st.isDirectory()) return undefined;
    if (process.platform !== 'win32' && (st.uid !== process.getuid?.() || (st.mode & 0o022) !== 0)) return undefined;
    return dir;
  } catch {
    return undefined;
  }
}

/** Resolved paths of those that exist. */
export const existingPaths = (paths: string[]): string[] =>
  paths.flatMap((p) => {
    try {
      return [realpathSync(p)];
    } catch {
      return [];
    }
  });

let prlimitPath: string | null | undefined;
const hostPrlimit = (): string | undefined => {
  if (prlimitPath === undefined) prlimitPath = process.platform === 'win32' ? null : (findExecutable('prlimit') ?? null);
  return prlimitPath ?? undefined;
};

export interface CommandInput {
  plan: RunnablePlan;
  sandbox: SandboxOptions;
  /** Python's argv: the interpreter executable first. */
  python: string[];
  /** The run folder (resolved). */
  runDir: string;
  readOnly: string[];
  copies: { copy: string; at: string }[];
}

export function runCommand(c: CommandInput): { file: string; args: string[] } {
  const { plan, sandbox, python } = c;
  const limited = (prlimit: string | undefined) => [...(prlimit ? prlimitPrefix(prlimit, sandbox.limits) : pythonLimitPrefix(python[0]!, sandbox.limits)), ...python];
  if (plan.isolation === 'bubblewrap') {
    // Without the network, /etc is one prepared copy (one mount instead of one per file).
    const etcDir = sandbox.allowNetwork ? undefined : etcCopy(etcEntries(false), join(cacheRoot(), 'sandbox-etc'));
    const args = bwrapArgs({ tools: plan.tools, runDir: c.runDir, readOnly: c.readOnly, copies: c.copies, etcDir, allowNetwork: sandbox.allowNetwork, command: limited(plan.tools.prlimit) });
    return { file: plan.tools.bwrap, args };
  }
  const argv = plan.isolation === 'none' ? python : limited(hostPrlimit());
  return { file: argv[0]!, args: argv.slice(1) };
}
