// Common training extras in a snapshot's managed venv: packages real training scripts import beside
// the HF libraries (TensorBoard logging, scipy/scikit-learn metrics, SentencePiece/protobuf
// tokenizers, Pillow images, torchvision transforms, W&B/tensorboardX loggers, NLTK, TRL's math rewards' math-verify) that a snapshot's
// pins do not pull in. Installed once per venv, after
// it is built, with every package already there held at its installed version (a constraints file
// from `pip freeze`), so the pinned libraries never change; with uv, no release newer than the
// snapshot's date is taken. Best effort: a failure (offline machine) is recorded with its reason
// and the venv stays usable; the run then meets the real ModuleNotFoundError.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { acquireDirLock } from '../dirLock';
import { excludeNewerOf, getSnapshot } from './registry';

/**
 * Import names where they differ: sklearn, google.protobuf, PIL. Each is installed on its own, so one
 * that cannot be had before the cut-off (a torchvision for that torch) costs only itself.
 */
export const TRAINING_EXTRAS: readonly string[] = [
  'tensorboard',
  'scipy',
  'scikit-learn',
  'sentencepiece',
  'protobuf',
  'pillow',
  'torchvision',
  'wandb',
  'tensorboardX',
  'nltk',
  'math-verify',
  'soundfile',
];

const EXTRAS_MARKER = '.forgeenv-extras.json';

const ExtrasMarkerSchema = z.object({
  format: z.literal(1),
  extras: z.array(z.string()),
  ok: z.boolean(),
  reason: z.string().optional(),
  exclude_newer: z.string().optional(),
  added: z.array(z.string()).optional(),
  /** Extras that could not be installed, with why (the run then meets the real ModuleNotFoundError). */
  failed: z.array(z.object({ name: z.string(), reason: z.string() })).optional(),
  created_at: z.string(),
});
export type ExtrasMarker = z.infer<typeof ExtrasMarkerSchema>;

/** `pip freeze` lines as name -> `name==version` (lowercase, `_` as `-`); editable/URL lines are kept as they are. */
export function parseFreeze(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const name = line
      .split(/\s*(?:==|@)\s*/)[0]
      .toLowerCase()
      .replace(/_/g, '-');
    out.set(name, line);
  }
  return out;
}

export function readExtrasMarker(venvDir: string): ExtrasMarker | undefined {
  try {
    const r = ExtrasMarkerSchema.safeParse(JSON.parse(readFileSync(join(venvDir, EXTRAS_MARKER), 'utf8')));
    return r.success ? r.data : undefined;
  } catch {
    return undefined;
  }
}

const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

export interface ExtrasOptions {
  onProgress?: (msg: string) => void;
  signal?: AbortSignal;
  /** The uv binary, when there is one (else pip). */
  uv?: string;
}

/** Installs the training extras into a built venv unless its marker says it was tried; never throws. */
export async function ensureTrainingExtras(
  id: string,
  venvDir: string,
  python: string,
  opts: ExtrasOptions = {},
): Promise<ExtrasMarker | undefined> {
  if (process.env.FORGEENV_NO_TRAINING_EXTRAS === '1') return undefined;
  const done = readExtrasMarker(venvDir);
  if (done && sameList(done.extras, TRAINING_EXTRAS)) return done;
  let release: (() => void) | undefined;
  try {
    release = await acquireDirLock(join(venvDir, '.extras.lock'), {
      signal: opts.signal,
      abortError: () => new Error(`snapshot ${id}: aborted`),
      onWait: () => opts.onProgress?.(`${id}: another process is installing the training extras; waiting`),
    });
    const again = readExtrasMarker(venvDir);
    if (again && sameList(again.extras, TRAINING_EXTRAS)) return again;
    const marker = await install(id, python, opts);
    writeFileSync(join(venvDir, EXTRAS_MARKER), JSON.stringify(marker, null, 2) + '\n');
    const missing = marker.failed?.length ? `; not installable: ${marker.failed.map((f) => f.name).join(', ')}` : '';
    opts.onProgress?.(
      marker.ok
        ? `${id}: training extras ready (${(marker.added ?? []).length} packages added${missing})`
        : `${id}: training extras not installed: ${marker.reason}`,
    );
    return marker;
  } catch (e) {
    opts.onProgress?.(`${id}: training extras skipped: ${(e as Error).message}`);
    return undefined;
  } finally {
    release?.();
  }
}

async function install(id: string, python: string, opts: ExtrasOptions): Promise<ExtrasMarker> {
  const base = { format: 1 as const, extras: [...TRAINING_EXTRAS], created_at: new Date().toISOString() };
  const tmp = mkdtempSync(join(tmpdir(), 'forgeenv-extras-'));
  try {
    const freeze = async () =>
      parseFreeze(
        opts.uv
          ? await exec(opts.uv, ['pip', 'freeze', '--python', python], opts.signal)
          : await exec(python, ['-m', 'pip', 'freeze'], opts.signal),
      );
    const before = await freeze();
    // Everything installed stays at its version: the pins cannot move, nor their dependencies.
    const constraints = join(tmp, 'constraints.txt');
    writeFileSync(constraints, [...before.values()].filter((l) => l.includes('==')).join('\n') + '\n');
    // The snapshot's own cut-off, as its pins were computed (registry.ts).
    const excludeNewer = excludeNewerOf(getSnapshot(id));
    opts.onProgress?.(`${id}: installing training extras (${TRAINING_EXTRAS.join(', ')}), none newer than ${excludeNewer}`);
    const failed: { name: string; reason: string }[] = [];
    for (const name of TRAINING_EXTRAS) {
      try {
        if (opts.uv)
          await exec(
            opts.uv,
            ['pip', 'install', '--python', python, '--exclude-newer', excludeNewer, '-c', constraints, name],
            opts.signal,
          );
        else await exec(python, ['-m', 'pip', 'install', '--disable-pip-version-check', '-c', constraints, name], opts.signal);
      } catch (e) {
        if (opts.signal?.aborted) throw e;
        failed.push({ name, reason: lastLines((e as Error).message) });
      }
    }
    const after = await freeze();
    const moved = [...before].filter(([name, line]) => after.get(name) !== line).map(([, line]) => line);
    if (moved.length)
      return { ...base, ok: false, reason: `installing the extras changed ${moved.join(', ')}`, exclude_newer: excludeNewer };
    const added = [...after.keys()].filter((n) => !before.has(n));
    if (failed.length === TRAINING_EXTRAS.length)
      return {
        ...base,
        ok: false,
        reason: failed
          .map((f) => `${f.name}: ${f.reason}`)
          .join('; ')
          .slice(0, 600),
        exclude_newer: excludeNewer,
        failed,
      };
    return { ...base, ok: true, exclude_newer: excludeNewer, added, ...(failed.length ? { failed } : {}) };
  } catch (e) {
    return { ...base, ok: false, reason: lastLines((e as Error).message) };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

const lastLines = (msg: string): string => msg.split('\n').filter(Boolean).slice(-3).join(' ').slice(0, 600);

function exec(cmd: string, args: string[], signal?: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      cmd,
      args,
      { signal, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, NO_COLOR: '1' }, timeout: 900_000 },
      (err, stdout, stderr) => {
        if (err) return reject(new Error(`${cmd} ${args.slice(0, 2).join(' ')} failed: ${String(stderr || err.message).trim()}`));
        resolve(stdout);
      },
    );
  });
}

/** Whether the extras marker exists (tests, status). */
export const hasExtrasMarker = (venvDir: string): boolean => existsSync(join(venvDir, EXTRAS_MARKER));
