// How one run is isolated and started: the isolation chosen from the settings and what the machine
// can do, the command line (bwrap around rlimits around Python, rlimits around Python, or Python
// alone), and the preparation a sandboxed run needs (run folder handed to the run's own uid as
// root, a bytecode cache folder that is safe to share).
import { lstatSync, mkdirSync, realpathSync } from 'node:fs';
import { chown, lchown, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { cacheRoot } from '../snapshots/venv';
import { bwrapArgs, type SandboxTools } from './bwrap';
import { findExecutable, probeSandbox } from './detect';
import { etcCopy, etcEntries } from './etcView';
import { sandboxLauncher } from './launcher';
import { prlimitPrefix, pythonLimitPrefix } from './limits';
import type { SandboxOptions } from './options';

export type IsolationPlan =
  { isolation: 'bubblewrap'; tools: SandboxTools } | { isolation: 'process-group' | 'none'; warning?: string } | { refused: string };
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
  return `Runs are not sandboxed: ${reason}. Scripts still get a clean environment, resource limits and a process-group kill, but they can read and write your files and use the network. Install bubblewrap (Linux), or accept this and hide the warning: set forgeenv.sandbox.mode to "off" (the editor) or run \`forgeenv serve --sandbox off\` (a server).`;
}

/** True when the sandboxed script runs as a uid of its own (root drops to one, uids.ts), so the run folder must be handed over. */
export const runsAsOwnUid = (plan: RunnablePlan): boolean =>
  plan.isolation === 'bubblewrap' && plan.tools.asRoot && plan.tools.setpriv !== undefined;

/** Where the uid slots of concurrent runs are claimed (uids.ts). */
export const uidLockDir = (): string => join(cacheRoot(), 'sandbox-uids');

/** Makes `dir` and everything in it owned by `uid` (and the gid of the same number). */
export async function handOver(dir: string, uid: number): Promise<void> {
  await chown(dir, uid, uid);
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) await handOver(p, uid);
    // A link (a saved dataset in the run's hub) is handed over itself, never what it points to.
    else if (e.isSymbolicLink()) await lchown(p, uid, uid);
    else await chown(p, uid, uid);
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
  /** Where the script sees it (bubblewrap only; default: its own path). */
  runAt?: string;
  readOnly: string[];
  copies: { copy: string; at: string }[];
  /** As root: the run's own uid. */
  uid?: number;
  /** The fd of the seccomp filter in the spawned bwrap (none: no filter). */
  seccompFd?: number;
}

export function runCommand(c: CommandInput): { file: string; args: string[] } {
  const { plan, sandbox, python } = c;
  const limited = (prlimit: string | undefined) => [
    ...(prlimit ? prlimitPrefix(prlimit, sandbox.limits) : pythonLimitPrefix(python[0], sandbox.limits)),
    ...python,
  ];
  if (plan.isolation === 'bubblewrap') {
    // Without the network, /etc is one prepared copy (one mount instead of one per file).
    const etcDir = sandbox.allowNetwork ? undefined : etcCopy(etcEntries(false), join(cacheRoot(), 'sandbox-etc'));
    // Inside, rlimits and the launcher (launcher.ts), which gives the script its environment and reports its exit status.
    const command = [...sandboxLauncher(plan.tools, python[0], sandbox.limits), ...python];
    const args = bwrapArgs({
      tools: plan.tools,
      runDir: c.runDir,
      ...(c.runAt ? { runAt: c.runAt } : {}),
      readOnly: c.readOnly,
      copies: c.copies,
      etcDir,
      allowNetwork: sandbox.allowNetwork,
      command,
      ...(c.uid !== undefined ? { uid: c.uid } : {}),
      ...(c.seccompFd !== undefined ? { seccompFd: c.seccompFd } : {}),
    });
    return { file: plan.tools.bwrap, args };
  }
  const argv = plan.isolation === 'none' ? python : limited(hostPrlimit());
  return { file: argv[0], args: argv.slice(1) };
}
