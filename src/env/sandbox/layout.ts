// Where an interpreter lives, so the sandbox can show exactly its folders (read-only) and start it
// directly: one short trusted `python -I -c` per interpreter file (cached by path and mtime). A
// pyenv shim or a `python3` on PATH becomes the real executable (`sys.executable`); a venv keeps
// its own `bin/python` so that it still finds its `pyvenv.cfg`.
import { z } from 'zod';
import { interpreterMemo, lastLine, queryInterpreter } from './interpreterQuery';

const LayoutSchema = z.object({
  executable: z.string().min(1),
  roots: z.array(z.string()),
  stdlib: z.array(z.string()),
  site: z.array(z.string()),
  userBase: z.string().nullable(),
  userSite: z.string().nullable(),
});

export interface InterpreterLayout {
  /** What to exec inside the sandbox. */
  executable: string;
  /** Folders to bind read-only: prefixes, the executable's folder, sys.path entries (resolved). */
  roots: string[];
  /** The standard library folders (for the bytecode cache). */
  stdlib: string[];
  /** site-packages folders, the user's own included when it exists (for the bytecode cache). */
  site: string[];
  /** The user site base (`python -m site --user-base`) when its site-packages exists; HOME moves, so it is passed explicitly. */
  userBase: string | null;
}

export type LayoutResult = { ok: true; layout: InterpreterLayout } | { ok: false; code: string | undefined; error: string };

const CODE = [
  'import json, os, site, sys, sysconfig',
  'p = sysconfig.get_paths()',
  'exe = sys.executable or ""',
  'roots = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]',
  'if exe: roots += [os.path.dirname(exe), os.path.dirname(os.path.realpath(exe))]',
  'roots += [x for x in sys.path if x and os.path.isdir(x)]',
  'us = site.getusersitepackages() if site.ENABLE_USER_SITE is not False else None',
  'us = us if us and os.path.isdir(us) else None',
  'site_dirs = sorted({p["purelib"], p["platlib"]} | ({us} if us else set()))',
  'roots += site_dirs',
  'print(json.dumps({"executable": exe, "roots": sorted({os.path.realpath(r) for r in roots} | {os.path.abspath(r) for r in roots}),',
  '  "stdlib": sorted({p["stdlib"], p["platstdlib"]}), "site": site_dirs,',
  '  "userBase": site.getuserbase() if us else None, "userSite": us}))',
].join('\n');

const layouts = interpreterMemo(probe, () => process.env.PATH ?? '');

export const interpreterLayout = (interpreter: string): Promise<LayoutResult> => layouts.get(interpreter);

async function probe(interpreter: string): Promise<LayoutResult> {
  // Without -I the user site counts (as in an unsandboxed run); PYTHON* variables are ignored (-E).
  const a = await queryInterpreter(interpreter, ['-E', '-c', CODE]);
  if (!a.ok) return a;
  try {
    const d = LayoutSchema.parse(JSON.parse(lastLine(a.stdout)));
    return { ok: true, layout: { executable: d.executable, roots: d.roots, stdlib: d.stdlib, site: d.site, userBase: d.userBase } };
  } catch {
    return {
      ok: false,
      code: undefined,
      error: `${interpreter} is not a working Python (exit ${a.exitCode}): ${(a.stderr || a.stdout).trim().slice(0, 300)}`,
    };
  }
}
