// rlimits as a prefix of the run's argv, never a shell string.
// - Linux: util-linux `prlimit --cpu=… --as=… --fsize=… --nproc=… -- python …`, which sets the
//   limits on itself and execs Python in place (same pid, no extra interpreter start).
// - Elsewhere (macOS): a few lines of Python that set the limits with `resource` and `execv` the
//   real command, so the script still runs as its own fresh `__main__`. Limits the platform refuses
//   (RLIMIT_AS on macOS) are skipped.
// Soft and hard limits are equal: the script cannot raise them.
import type { SandboxLimits } from './options';

const MIB = 1024 * 1024;

export interface LimitValues {
  cpu: number;
  as: number;
  fsize: number;
  nproc: number;
}

/** Limits in kernel units (seconds, bytes, count); 0 = none. */
export function limitValues(l: SandboxLimits): LimitValues {
  return { cpu: l.cpuSeconds, as: l.addressSpaceMiB * MIB, fsize: l.fileSizeMiB * MIB, nproc: l.processes };
}

export function prlimitPrefix(prlimit: string, l: SandboxLimits): string[] {
  const v = limitValues(l);
  const flags = (Object.entries(v) as [keyof LimitValues, number][]).filter(([, n]) => n > 0).map(([k, n]) => `--${k}=${n}`);
  return flags.length ? [prlimit, ...flags, '--'] : [];
}

const PY_WRAPPER = [
  'import os, resource, sys',
  'for name, v in zip(("RLIMIT_CPU", "RLIMIT_AS", "RLIMIT_FSIZE", "RLIMIT_NPROC"), sys.argv[1:5]):',
  '    r, v = getattr(resource, name, None), int(v)',
  '    if r is not None and v > 0:',
  '        try:',
  '            resource.setrlimit(r, (v, v))',
  '        except (ValueError, OSError):',
  '            pass',
  'os.execv(sys.argv[5], sys.argv[5:])',
].join('\n');

/** `python -I -S -c <wrapper> cpu as fsize nproc <command…>`; the command's first item must be a path. */
export function pythonLimitPrefix(python: string, l: SandboxLimits): string[] {
  const v = limitValues(l);
  if (Object.values(v).every((n) => n === 0)) return [];
  return [python, '-I', '-S', '-c', PY_WRAPPER, String(v.cpu), String(v.as), String(v.fsize), String(v.nproc)];
}
