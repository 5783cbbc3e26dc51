// The first process inside the sandbox, between bubblewrap and the script: a few lines of Perl
// (`perl -e`, ~1.5 ms to start; Perl is part of every Debian/Ubuntu base system), after util-linux
// `prlimit`; where either is missing, a few lines of the run's own Python (`python -I -S`, ~10 ms
// idle and 25-30 ms on a loaded 2-core machine, which is why it is only the fallback). Its jobs, which
// bubblewrap alone cannot do:
//
// - **The script's environment arrives through a pipe** (fd 3, `NAME=value\0` entries), not through
//   bwrap's environment or argv. Whatever a caller adds (a manifest's `env`, real mode's variables)
//   then never reaches bwrap, setpriv or this launcher itself, which run as root or with
//   capabilities: an `LD_PRELOAD` there would run attacker code outside the sandbox. It is not
//   put in bwrap's argv either (`--setenv`), since argv is world-readable in /proc/<pid>/cmdline and
//   the user's `passEnv` may name a token. bwrap, setpriv and the launcher start with an empty environment.
// - **The script's exit status is reported exactly** (fd 4: `exit N` or `signal N`). bwrap maps a
//   child killed by signal N to exit 128+N, so `sys.exit(200)` and a SIGKILL looked alike.
// - (Python launcher only) **rlimits** are set here, on itself, before the script starts (inherited);
//   the Perl launcher runs under prlimit instead. A limit that cannot be set stops the run (exit 126 /
//   prlimit's error): never run without them.
//
// The launcher waits for the script and exits with the same code; if the script kills it, nothing is
// written to fd 4 and the executor falls back to bwrap's own status. The fds are closed in the script
// (not inheritable), so the script cannot forge the status line (and it could only claim an exit it
// could have made itself anyway).
import type { SandboxLimits } from './options';
import { limitValues, prlimitPrefix } from './limits';

/** fd of the environment pipe (ForgeEnv writes, the launcher reads). */
export const ENV_FD = 3;
/** fd of the status pipe (the launcher writes, ForgeEnv reads). */
export const STATUS_FD = 4;

// `forgeenv-launcher` in both: tests find the launcher's process by it.
const PERL_LAUNCHER = [
  '# forgeenv-launcher',
  `open(my $in, '<&=', ${ENV_FD}) or die "[forgeenv] no environment pipe: $!\\n";`,
  "my $d = '';",
  '1 while sysread($in, $d, 65536, length $d);',
  'close $in;',
  '%ENV = ();',
  'for (split /\\0/, $d) { my ($k, $v) = split /=/, $_, 2; $ENV{$k} = $v if defined $v }',
  `open(my $st, '>&=', ${STATUS_FD}) or die "[forgeenv] no status pipe: $!\\n";`,
  'my $pid = fork;',
  'defined $pid or die "[forgeenv] fork: $!\\n";',
  'if ($pid == 0) {',
  // The status pipe and any other fd of ours (bwrap's seccomp pipe) are not the script's.
  '  close $st;',
  "  for my $fd (5 .. 15) { close $_ if open($_, '<&=', $fd) }",
  '  exec { $ARGV[0] } @ARGV;',
  '  print STDERR "[forgeenv] could not start $ARGV[0]: $!\\n";',
  '  exit 127;',
  '}',
  '1 while waitpid($pid, 0) == -1 && $!{EINTR};',
  'my $s = $?;',
  "if ($s & 127) { syswrite $st, 'signal ' . ($s & 127); exit 128 + ($s & 127) }",
  "syswrite $st, 'exit ' . ($s >> 8);",
  'exit($s >> 8);',
].join('\n');

const LAUNCHER = [
  'import os, sys  # forgeenv-launcher',
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

/** `prlimit … -- perl -e <launcher> -- <command…>`; the command's first item must be an absolute path. */
export function perlLauncherPrefix(perl: string, prlimit: string, l: SandboxLimits): string[] {
  return [...prlimitPrefix(prlimit, l), perl, '-e', PERL_LAUNCHER, '--'];
}

/** The launcher prefix for a sandboxed run: Perl under prlimit where both exist (inside /usr), else Python. */
export function sandboxLauncher(tools: { perl?: string; prlimit?: string }, python: string, l: SandboxLimits): string[] {
  return tools.perl && tools.prlimit ? perlLauncherPrefix(tools.perl, tools.prlimit, l) : launcherPrefix(python, l);
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
