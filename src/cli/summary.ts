// `forgeenv summary DIR [--json]`: counts, rates and distributions of a dataset folder.
import { stat } from 'node:fs/promises';
import { renderSummaryText, summarizeDataset } from '../store/summary';
import { parseCommandLine } from './commandLine';

export const SUMMARY_USAGE = `Usage: forgeenv summary DIR [--json] [--no-index]
Reads only what was appended since the last summary (an index in the ForgeEnv cache);
--no-index reads the whole folder and leaves the index alone.`;

/** `args` are the words after `summary`. Exit codes: 0 ok, 1 folder missing/unreadable, 2 usage. */
export async function runSummaryCommand(args: string[], out: (s: string) => void): Promise<number> {
  const parsed = parseCommandLine(
    'summary',
    SUMMARY_USAGE,
    args,
    {
      json: { type: 'boolean', default: false },
      'no-index': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h' },
    } as const,
    out,
    { oneFolder: true },
  );
  if (!parsed.ok) return parsed.exit;
  const dir = parsed.positionals[0];
  const st = await stat(dir).catch(() => undefined);
  if (!st?.isDirectory()) {
    out(`forgeenv summary: dataset folder ${dir} ${st ? 'is not a folder' : 'does not exist'}`);
    return 1;
  }
  try {
    const summary = await summarizeDataset(dir, { index: !parsed.values['no-index'] });
    out(parsed.values.json ? JSON.stringify(summary, null, 2) : renderSummaryText(summary));
    return 0;
  } catch (e) {
    out(`forgeenv summary: ${(e as Error).message}`);
    return 1;
  }
}
