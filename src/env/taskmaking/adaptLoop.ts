// Args that work: start from the derived args, bound the run through the parser's own options,
// then run -> diagnose -> adapt, at most `maxRounds` runs. Ends with a clean run, or a refusal that
// says why (a rule's reason, an unrecognised error, a change that did not help).
import { deriveScriptArgs } from '../tasks/scriptArgs';
import type { ExecutionResult } from '../schemas';
import type { HubNeeds } from '../hub/needs';
import { EMPTY_HUB_NEEDS, type HubRunState } from './hubSupply';
import { parseHelpDefaults, parseHelpFlags, parseHelpOptions, type ParserOptions } from './parserOptions';
import type { Adaptation } from './provenance';
import type { TaskRuntime } from '../run/runtimeShims';
import { diagnose, lastErrorLine, type Rule, RULES } from './rules';
import type { CandidateRun, RunFn } from './runner';
import { boundRun } from './shortRun';

export interface AdaptResult {
  args: string[];
  env: Record<string, string>;
  /** Hub items added because a run's error named them (beyond what the script and args name). */
  hubExtra: HubNeeds;
  /** Runtime shims the rules added (CPU adaptations of GPU-only code); undefined: none. */
  runtime?: TaskRuntime;
  /** Absolute output folders the rules mapped into the run folder (the task's `mounts`); empty: none. */
  mounts: string[];
  adaptations: Adaptation[];
  /** Runs made (the help run not counted). */
  rounds: number;
  /** The last run (clean when there is no refusal). */
  last?: ExecutionResult;
  /** The parser's options as its --help listed them (undefined: not read, or the help run failed). */
  parser?: ParserHelp;
  refusal?: { rule: string; reason: string };
}

/** What a parser's --help says: its options, its flags (no value), its defaults. */
export interface ParserHelp {
  options: ParserOptions;
  flags: ReadonlySet<string>;
  defaults: ReadonlyMap<string, string>;
}

export interface AdaptOptions {
  script: string;
  files: Record<string, string>;
  /** Args to start from instead of the derived ones (a user's answer). */
  startArgs?: string[];
  run: RunFn;
  maxRounds?: number;
  rules?: readonly Rule[];
  onProgress?: (message: string) => void;
  signal?: AbortSignal;
  /** What the hub did for the last run (real mode with hub items); rules read it. */
  hubState?: () => HubRunState | undefined;
  /**
   * Where an earlier snapshot's adaptation ended (a snapshot fallback after a library API error): start from
   * its args, environment, shims, mounts and hub items instead of the derived args. What made the script run
   * on a CPU, offline, with the hub's items does not depend on the release; what a release refuses of it (an
   * option its parser lacks) is undone by the rules like any other error. Saves repeating every round.
   */
  carried?: Pick<AdaptResult, 'args' | 'env' | 'hubExtra' | 'runtime' | 'mounts' | 'parser'>;
}

/**
 * What the rules read of a run: the end of stdout, then stderr. The traceback that ended the run is the end of
 * stderr; a script that logs to stdout (a TrainingArguments dump) must not push it out of the diagnosed tail.
 */
export const outputOf = (e: Pick<ExecutionResult, 'stdout' | 'stderr'>): string =>
  `${e.stdout.split('\n').slice(-20).join('\n')}\n${e.stderr}`;

export async function adaptUntilRuns(o: AdaptOptions): Promise<AdaptResult> {
  const derived = deriveScriptArgs(o.script);
  let args = [...(o.carried?.args ?? o.startArgs ?? derived.args)];
  let env: Record<string, string> = { ...o.carried?.env };
  let hubExtra: HubNeeds = o.carried?.hubExtra ?? EMPTY_HUB_NEEDS;
  let runtime: TaskRuntime | undefined = o.carried?.runtime;
  let mounts: string[] = [...(o.carried?.mounts ?? [])];
  const adaptations: Adaptation[] = [];
  const candidate = (): CandidateRun => ({
    script: o.script,
    args,
    files: o.files,
    env,
    hub: hubExtra,
    ...(runtime ? { runtime } : {}),
    ...(mounts.length ? { mounts } : {}),
  });
  // The parser's options, from its own --help (no training happens; a failure just leaves them unknown).
  let options: ParserOptions | undefined;
  let flags: ReadonlySet<string> | undefined;
  let defaults: ReadonlyMap<string, string> | undefined;
  const readOptions = async (round: number) => {
    if (derived.style !== 'argparse' && derived.style !== 'dataclass-parser') return;
    o.onProgress?.('reading the parser options (--help)');
    const help = await o.run({ ...candidate(), args: ['--help'] });
    if (help.exit_code !== 0) return;
    options = parseHelpOptions(help.stdout);
    flags = parseHelpFlags(help.stdout);
    defaults = parseHelpDefaults(help.stdout);
    const bounded = boundRun(args, options);
    args = bounded.args;
    adaptations.push(...bounded.adaptations.map((a) => ({ ...a, round })));
  };
  // A plain argparse parser is the script's own: its --help is the same at every snapshot, so a carried
  // reading saves the help run. A dataclass parser lists the library's fields (TrainingArguments): read again.
  if (o.carried?.parser && derived.style === 'argparse') {
    ({ options, flags, defaults } = o.carried.parser);
    o.onProgress?.("parser options carried from the earlier snapshot (the script's own argparse parser)");
  } else await readOptions(0);
  const tried = new Set<string>();
  const maxRounds = o.maxRounds ?? 8;
  let last: ExecutionResult | undefined;
  // What the loop has reached so far, ending after `rounds` runs (with the refusal that ended it, if any).
  const result = (rounds: number, refusal?: AdaptResult['refusal']): AdaptResult => ({
    args,
    env,
    hubExtra,
    runtime,
    mounts,
    adaptations,
    rounds,
    last,
    ...(options && flags && defaults ? { parser: { options, flags, defaults } } : {}),
    ...(refusal ? { refusal } : {}),
  });
  for (let round = 1; round <= maxRounds; round++) {
    if (o.signal?.aborted) return result(round - 1, { rule: 'cancelled', reason: 'cancelled' });
    o.onProgress?.(`run ${round}/${maxRounds}: ${args.join(' ') || '(no args)'}`);
    last = await o.run(candidate());
    if (last.exit_code === 0 && !last.timed_out) return result(round);
    const output = outputOf(last);
    if (last.timed_out) {
      return result(round, {
        rule: 'timeout',
        reason: `the run did not end within the timeout even bounded (${lastErrorLine(output) || 'no output'})`,
      });
    }
    const d = diagnose(
      output,
      { script: o.script, args, env, options, flags, defaults, hub: o.hubState?.(), hubExtra, runtime, mounts },
      o.rules ?? RULES,
    );
    if (!d) {
      // What the hub could not provide is the likely cause of an error no rule knows: say it.
      const hubRefused = o
        .hubState?.()
        ?.refusals.map((r) => `${r.kind} ${r.id}: ${r.reason}`)
        .join('; ');
      const reason = `no rule recognises the error: ${lastErrorLine(output) || `exit code ${last.exit_code}`}${hubRefused ? ` (the offline hub could not provide ${hubRefused})` : ''}`;
      return result(round, { rule: 'unrecognised-error', reason });
    }
    // A refusal names the exception it ends on (the rule's match may be one word, "bitsandbytes").
    if (d.outcome.kind === 'refuse')
      return result(round, { rule: d.outcome.rule, reason: `${d.outcome.reason} [${lastErrorLine(output) || d.error}]` });
    const key = `${d.outcome.adaptation.rule}:${d.outcome.adaptation.change}`;
    if (tried.has(key))
      return result(round, { rule: d.outcome.adaptation.rule, reason: `${d.outcome.adaptation.change} did not help: ${d.error}` });
    tried.add(key);
    // A runtime shim is recorded with the exception it answers (the rule's match may be one word, "quantization").
    const error = d.outcome.adaptation.kind === 'runtime' ? lastErrorLine(output) || d.error : d.error;
    adaptations.push({ round, error, ...d.outcome.adaptation });
    o.onProgress?.(`adapted (${d.outcome.adaptation.rule}): ${d.outcome.adaptation.change}`);
    args = d.outcome.args ?? args;
    env = d.outcome.env ?? env;
    hubExtra = d.outcome.hub ?? hubExtra;
    runtime = d.outcome.runtime ?? runtime;
    mounts = d.outcome.mounts ?? mounts;
    // GPU code at import time (a dataclass default asking torch.cuda) also failed --help: read it again with the shims.
    // So did a parser default read from the environment (`default=os.environ["SM_CHANNEL_TRAIN"]`): again with it set.
    if ((d.outcome.runtime || d.outcome.env) && !options) await readOptions(round);
  }
  return result(maxRounds, {
    rule: 'rounds-exhausted',
    reason: `still failing after ${maxRounds} runs: ${last ? lastErrorLine(outputOf(last)) : ''}`,
  });
}
