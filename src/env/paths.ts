// Locates the files shipped beside the code (task corpus, simulated libraries), both when
// running from source (src/env/*.ts via tsx) and from the bundle (dist/*.js).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

let cached: string | undefined;

/** The `resources/` folder of the installed extension or of the checkout. */
export function resourcesDir(): string {
  if (cached) return cached;
  let dir = __dirname;
  for (let i = 0; i < 6; i++) {
    const candidate = join(dir, 'resources');
    if (existsSync(join(candidate, 'simlibs'))) return (cached = candidate);
    dir = dirname(dir);
  }
  throw new Error(`ForgeEnv resources folder not found above ${__dirname}`);
}

export const simlibsDir = (): string => join(resourcesDir(), 'simlibs');
export const tasksDir = (): string => join(resourcesDir(), 'tasks');
/** The runtime shims (runtimeShims.ts): put on PYTHONPATH for the runs of a task that records them. */
export const shimsDir = (): string => join(resourcesDir(), 'shims');
