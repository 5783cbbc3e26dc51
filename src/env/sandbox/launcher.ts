// The first process inside the sandbox: a few lines of Python (`python -I -S`, the run's own
// interpreter, ~10 ms) between bubblewrap and the script. Three jobs, each one bubblewrap alone cannot do:
//
// - **The script's environment arrives through a pipe** (fd 3, `NAME=value\0` entries), not through
//   bwrap's environment or argv. Whatever a caller adds (a manifest's `env`, real mode's variables)
//   then never reaches bwrap, setpriv or this launcher itself, which run as root or with
//   capabilities: an `LD_PRELOAD` there would run attacker code outside the sandbox. It is not
//   put in bwrap's argv either (`--setenv`), since argv is world-readable in /proc/<pid>/cmdline and
//   the user's `passEnv` may name a token. bwrap, setpriv and the launcher start with an empty environment.
// - **The script's exit status is reported exactly** (fd 4: `exit N` or `signal N`). bwrap maps a
//   child killed by signal N to exit 128+N, so `sys.exit(200)` and a SIGKILL looked alike.
// - **rlimits** are set here, on itself, before the script starts (inherited); prlimit is not needed
//   inside the sandbox. A limit that cannot be set stops the run (exit 126): never run without them.
//
// The launcher waits for the script and exits with the same code; if the script kills it, nothing is
// written to fd 4 and the executor falls back to bwrap's own status. The fds are closed in the script
// (not inheritable), so the script cannot forge the status line (and it could only claim an exit it
// could have made itself anyway).
import type { SandboxLimits } from './options';
import { limitValues } from './limits';

/** fd of the environment pipe (ForgeEnv writes, the launcher reads). */
export const ENV_FD = 3;
/** fd of the status pipe (the launcher writes, ForgeEnv reads). */
export const STATUS_FD = 4;

const LAUNCHER = [
  'import os, sys',
  'a = sys.argv',
  'try:',
  '    import resource',
  '    for name, v in zip(("RLIMIT_CPU", "RLIMIT_AS", "RLIMIT_FSIZE", "RLIMIT_NPROC"), a[1:5]):',
  '        v = int(v)',
  '        if v > 0:',
  '            resource.setrlimit(getattr(resource, name), (v, v))',
  'except (ValueError, OSError, AttributeError) as e:',
  '    sys.stderr.write("[forgeenv] the sandbox could not set the resource limits: %s\\n" % e)',
  '    os._exit(126)',
  `data = bytearray()`,
  'while True:',
  `    b = os.read(${ENV_FD}, 1 << 16)`,
  '    if not b:',
  '        break',
  '    data += b',
  `os.close(${ENV_FD})`,
  'env = {}',
  'for item in bytes(data).split(b"\\0"):',
  '    k, eq, v = item.partition(b"=")',
  '    if eq:',
  '        env[os.fsdecode(k)] = os.fsdecode(v)',
  'for fd in range(3, 16):',
  '    try:',
  '        os.set_inheritable(fd, False)',
  '    except OSError:',
  '        pass',
  'try:',
  '    pid = os.posix_spawn(a[5], a[5:], env)',
  'except OSError as e:',
  '    sys.stderr.write("[forgeenv] could not start %s: %s\\n" % (a[5], e))',
  '    os._exit(127)',
  'while True:',
  '    try:',
  '        _, st = os.waitpid(pid, 0)',
  '        break',
  '    except InterruptedError:',
  '        continue',
  'if os.WIFSIGNALED(st):',
  '    msg, code = "signal %d" % os.WTERMSIG(st), 128 + os.WTERMSIG(st)',
  'else:',
  '    code = os.waitstatus_to_exitcode(st) if hasattr(os, "waitstatus_to_exitcode") else os.WEXITSTATUS(st)',
  '    msg = "exit %d" % code',
  'try:',
  `    os.write(${STATUS_FD}, msg.encode())`,
  'except OSError:',
  '    pass',
  'os._exit(code & 255)',
].join('\n');

/** `python -I -S -c <launcher> cpu as fsize nproc <command…>`; the command's first item must be an absolute path. */
export function launcherPrefix(python: string, l: SandboxLimits): string[] {
  const v = limitValues(l);
  return [python, '-I', '-S', '-c', LAUNCHER, String(v.cpu), String(v.as), String(v.fsize), String(v.nproc)];
}

/** The environment as the launcher reads it: `NAME=value\0` entries (names are validated, values have no NUL). */
export function encodeEnv(env: NodeJS.ProcessEnv): Buffer {
  return Buffer.from(
    Object.entries(env)
      .filter((e): e is [string, string] => typeof e[1] === 'string' && !e[0].includes('=') && !e[0].includes('\0') && !e[1].includes('\0'))
      .map(([k, v]) => `${k}=${v}\0`)
      .join(''),
    'utf8',
  );
}

export type LaunchStatus = { exitCode: number; signal: null } | { exitCode: null; signal: number };

/** The launcher's status line, or undefined when it wrote none (it was killed, or never started). */
export function parseLaunchStatus(text: string): LaunchStatus | undefined {
  const m = /^(exit|signal) (\d{1,3})$/.exec(text.trim());
  if (!m) return undefined;
  const n = Number(m[2]);
  return m[1] === 'exit' ? { exitCode: n, signal: null } : { exitCode: null, signal: n };
}
