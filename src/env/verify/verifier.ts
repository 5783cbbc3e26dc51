// Runs resources/verifier/forgeenv_verify.py on a finished run's folder and reads its verdict. The
// verifier is a separate sandboxed process started after every process of the run has ended: the
// run folder is bound read-only, the verifier's own folder holds only its code and spec, and the
// verdict is the last marked line of the verifier's own stdout, which the repair never wrote to.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { chmod, lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { INPUT_DIR } from '../run/executor';
import { resourcesDir } from '../paths';
import type { ExecutionResult } from '../schemas';
import { VerifyHeadSchema, type VerifySpec } from './spec';

export const VERDICT_MARKER = 'FORGEENV_VERDICT ';
export const VERIFIER_SCRIPT_NAME = 'forgeenv_verify.py';

const Loss = z.number().finite();
const VerdictSchema = z.discriminatedUnion('ok', [
  z
    .object({
      ok: z.literal(true),
      artifact: z.string(),
      loaded_with: z.string(),
      trained_loss: Loss,
      untrained_loss: Loss,
      moved: z.number().min(0).max(1).optional(),
      kind: z.enum(['hf_model', 'state_dict']).optional(),
      head: z.enum([...VerifyHeadSchema.options, 'state_dict']).optional(),
      base_model: z.string().optional(),
      dataset: z.array(z.string()).nullable().optional(),
      data: z.string().optional(),
    })
    .passthrough(),
  z.object({ ok: z.literal(false), reason: z.string().min(1) }).passthrough(),
]);
export type VerifierOutcome =
  | {
      ok: true;
      artifact: string;
      loaded_with: string;
      trained_loss: number;
      untrained_loss: number;
      /** Share of the starting weights that training changed (absent for state dicts, whose untrained model is another random init). */
      moved?: number;
      /** The losses are on the verifier's fixed probe sentences, images or audio, not the task's held-out data. */
      probe?: boolean;
      /** What the verifier resolved (from the task, the original or the saved model): a repair is checked against the same. */
      resolved?: Pick<VerifySpec, 'artifact' | 'kind' | 'head' | 'base_model' | 'dataset'>;
    }
  | { ok: false; reason: string };

let source: string | undefined;
const verifierSource = () => (source ??= readFileSync(join(resourcesDir(), 'verifier', VERIFIER_SCRIPT_NAME), 'utf8'));

/**
 * The run (script, files, input) that verifies `runDir`; the caller adds mode, interpreter and
 * limits. The finished run is copied into the verifier's own run folder (`input/`, links kept as
 * links) rather than bound, so every verifier run has one shape and a warm zygote can take it.
 * The verdict line carries `nonce`, fresh per run: text the artifact could make a library print (a
 * model type, a warning) cannot pass for it.
 */
export function verifierRun(runDir: string, original: string, spec: Partial<VerifySpec> & { mounts?: string[] }) {
  const nonce = randomBytes(16).toString('hex');
  return {
    nonce,
    script: verifierSource(),
    scriptName: VERIFIER_SCRIPT_NAME,
    args: ['spec.json'],
    files: { 'spec.json': JSON.stringify({ run_dir: INPUT_DIR, original, verify: spec, nonce }) },
    inputDir: runDir,
    validate: false as const,
  };
}

/**
 * Makes a finished run's kept folder readable by the verifier, which runs under a uid of its own
 * (as root each run gets one, and run folders are 0700): folders 0755, files gain read bits. Links
 * are never followed; the walk is bounded. The folder is ours (mkdtemp) and its processes are gone.
 */
export async function openForReading(dir: string, budget = { entries: 20_000 }): Promise<void> {
  const st = await lstat(dir).catch(() => undefined);
  if (!st || budget.entries-- <= 0) return;
  if (st.isDirectory()) {
    await chmod(dir, 0o755).catch(() => undefined);
    for (const name of await readdir(dir).catch(() => [] as string[])) await openForReading(join(dir, name), budget);
  } else if (st.isFile()) {
    await chmod(dir, (st.mode & 0o777) | 0o444).catch(() => undefined);
  }
}

/** The verdict of a verifier run; a crash, timeout or missing verdict is a refusal that says so. */
export function readVerdict(
  exec: Pick<ExecutionResult, 'exit_code' | 'stdout' | 'stderr' | 'timed_out' | 'killed'>,
  nonce: string,
): VerifierOutcome {
  if (exec.timed_out) return { ok: false, reason: 'the verifier timed out' };
  if (exec.killed) return { ok: false, reason: 'the verifier was cancelled' };
  const prefix = `${VERDICT_MARKER}${nonce} `;
  const line = exec.stdout
    .split('\n')
    .reverse()
    .find((l) => l.startsWith(prefix));
  if (!line) {
    const last = exec.stderr.trim().split('\n').slice(-1)[0] ?? '';
    return {
      ok: false,
      reason: `the verifier ended without a verdict (exit code ${exec.exit_code ?? 'none'}${last ? `: ${last.slice(0, 300)}` : ''})`,
    };
  }
  let json: unknown;
  try {
    json = JSON.parse(line.slice(prefix.length));
  } catch {
    return { ok: false, reason: 'the verifier printed an unreadable verdict' };
  }
  const parsed = VerdictSchema.safeParse(json);
  if (!parsed.success) return { ok: false, reason: 'the verifier printed an invalid verdict' };
  const v = parsed.data;
  return v.ok
    ? {
        ok: true,
        artifact: v.artifact,
        loaded_with: v.loaded_with,
        trained_loss: v.trained_loss,
        untrained_loss: v.untrained_loss,
        ...(v.moved === undefined ? {} : { moved: v.moved }),
        ...(/^probe (sentences|images|audio)/.test(v.data ?? '') ? { probe: true } : {}),
        resolved: {
          artifact: v.artifact,
          ...(v.kind ? { kind: v.kind } : {}),
          ...(v.head && v.head !== 'state_dict' ? { head: v.head } : {}),
          ...(v.base_model ? { base_model: v.base_model } : {}),
          ...(v.dataset && v.dataset.length ? { dataset: v.dataset } : {}),
        },
      }
    : { ok: false, reason: v.reason };
}
