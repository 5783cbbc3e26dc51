// The start every `forgeenv` subcommand shares: parse its words, answer --help with the usage,
// and turn a bad word (or, for commands on one folder, a wrong count of folders) into the usage
// error with exit code 2. Messages go to the command's `out`, as they always have.
import { parseArgs, type ParseArgsConfig } from 'node:util';

type Options = NonNullable<ParseArgsConfig['options']>;

export type CommandLine<O extends Options> =
  | { ok: true; values: ReturnType<typeof parseArgs<{ options: O; allowPositionals: true }>>['values']; positionals: string[] }
  | { ok: false; exit: number };

export function parseCommandLine<O extends Options>(
  command: string,
  usage: string,
  args: string[],
  options: O,
  out: (s: string) => void,
  expect: { oneFolder?: boolean } = {},
): CommandLine<O> {
  let parsed;
  try {
    parsed = parseArgs({ args, options, allowPositionals: !!expect.oneFolder });
  } catch (e) {
    out(`forgeenv ${command}: ${(e as Error).message}\n${usage}`);
    return { ok: false, exit: 2 };
  }
  if ((parsed.values as { help?: boolean }).help) {
    out(usage);
    return { ok: false, exit: 0 };
  }
  if (expect.oneFolder && parsed.positionals.length !== 1) {
    out(`forgeenv ${command}: expected one dataset folder, got ${parsed.positionals.length}\n${usage}`);
    return { ok: false, exit: 2 };
  }
  return { ok: true, values: parsed.values as never, positionals: parsed.positionals };
}
