// One short, trusted question to a Python interpreter (its layout, its libraries), and the memo of the
// answers: keyed by the interpreter's path and its resolved file's modification time, so a rebuilt venv is
// asked again, and a failure is never remembered (a broken interpreter may be fixed).
import { spawn } from 'node:child_process';
import { realpathSync, statSync } from 'node:fs';

export type InterpreterAnswer =
  { ok: true; stdout: string; stderr: string; exitCode: number | null } | { ok: false; code: string | undefined; error: string };

const QUERY_TIMEOUT_MS = 30_000;

/** Runs `interpreter ...argv` (an argument list, never a shell string), killed after 30 s. */
export function queryInterpreter(interpreter: string, argv: readonly string[], env?: NodeJS.ProcessEnv): Promise<InterpreterAnswer> {
  return new Promise((resolve) => {
    let stdout = '';
    let stderr = '';
    let child;
    try {
      child = spawn(interpreter, [...argv], { stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true, ...(env ? { env } : {}) });
    } catch (e) {
      resolve({ ok: false, code: (e as NodeJS.ErrnoException).code, error: (e as Error).message });
      return;
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), QUERY_TIMEOUT_MS);
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString('utf8')));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString('utf8')));
    child.on('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve({ ok: false, code: e.code, error: e.message });
    });
    child.on('close', (exitCode) => {
      clearTimeout(timer);
      resolve({ ok: true, stdout, stderr, exitCode });
    });
  });
}

/** The last line of an answer's stdout: where a query prints its JSON. */
export const lastLine = (stdout: string): string => stdout.trim().split('\n').pop() ?? '';

export interface InterpreterMemo<T> {
  get(interpreter: string): Promise<T>;
  clear(): void;
}

/**
 * Memoises `ask` per interpreter file. `context` adds what else the answer depends on (PATH, for a bare
 * name); answers with `ok: false` are dropped once they settle.
 */
export function interpreterMemo<T extends { ok: boolean }>(
  ask: (interpreter: string) => Promise<T>,
  context = (): string => '',
): InterpreterMemo<T> {
  const memo = new Map<string, Promise<T>>();
  return {
    get(interpreter) {
      let stamp = '';
      try {
        stamp = String(statSync(realpathSync(interpreter)).mtimeMs);
      } catch {
        // a bare name on PATH: keyed by name (and context) only
      }
      const key = `${interpreter}\0${stamp}\0${context()}`;
      let p = memo.get(key);
      if (!p) {
        p = ask(interpreter);
        memo.set(key, p);
        void p.then((r) => {
          if (!r.ok) memo.delete(key);
        });
      }
      return p;
    },
    clear: () => memo.clear(),
  };
}
