// The two role prompts, in our own words, with the layout known from the original ForgeEnv:
// the drift prompt has a `Target category: <name>` line, versions as `name=version` lines, the
// script in a ```python block and asks for JSON `{primitive_type, params}`; the repair prompt
// shows the broken script, the error trace, the versions and the category, and asks for a
// unified diff against train.py. Rendering is deterministic (versions sorted by name, no dates).

export const DRIFT_GENERATOR_SYSTEM_PROMPT = [
  'You are the Drift Generator in ForgeEnv, an environment about keeping Hugging Face training scripts working as libraries evolve.',
  'You receive a training script that currently runs, the library versions it runs against, and a target category of breakage.',
  'Choose one breakage primitive of that category and the parameters that make it model a realistic library change (a renamed API, a removed import, a changed argument, a restructured dataset schema) so that the script no longer runs.',
  'Pick something that really occurs in the script; a breakage that changes nothing is worthless.',
  'Answer with a single JSON object and nothing else: {"primitive_type": "<PrimitiveName>", "params": {...}}.',
].join('\n');

export const REPAIR_AGENT_SYSTEM_PROMPT = [
  'You are the Repair Agent in ForgeEnv. A Hugging Face training script stopped working after its libraries changed.',
  'You receive the broken script, the error it produced, the installed library versions and the category of the change.',
  'Repair the script with the smallest change that makes it train again under these versions, keeping what it does: same model, data, training loop and outputs.',
  'Do not hide the failure: no blanket try/except, no printing success messages or losses by hand, no early exits, no removing the training.',
  'Answer with a unified diff against train.py (--- a/train.py, +++ b/train.py, @@ hunks) in a ```diff block.',
].join('\n');

/** What the drift prompt lists about each available primitive. */
export interface PromptPrimitive {
  name: string;
  description?: string;
  /** Parameter names, or name → description/type. */
  params?: readonly string[] | Readonly<Record<string, unknown>>;
}

/** A fence longer than any backtick run inside `content`, so a script containing ``` cannot close it early. */
function fence(content: string, lang: string): string {
  let longest = 0;
  for (const m of content.matchAll(/`{3,}/g)) longest = Math.max(longest, m[0].length);
  const ticks = '`'.repeat(Math.max(3, longest + 1));
  return `${ticks}${lang}\n${content}${content.endsWith('\n') || content === '' ? '' : '\n'}${ticks}`;
}

function versionLines(versions: Readonly<Record<string, string>>): string {
  const names = Object.keys(versions).sort();
  return names.length ? names.map((n) => `${n}=${versions[n]}`).join('\n') : '(none given)';
}

function paramText(params: PromptPrimitive['params']): string {
  if (!params) return '';
  if (Array.isArray(params)) return params.join(', ');
  return Object.entries(params as Record<string, unknown>)
    .map(([k, v]) => (typeof v === 'string' && v ? `${k} (${v})` : k))
    .join(', ');
}

export function renderDriftGeneratorPrompt(input: {
  script: string;
  target_category: string;
  library_versions: Readonly<Record<string, string>>;
  primitives?: readonly PromptPrimitive[];
}): string {
  const parts = [
    `Target category: ${input.target_category}`,
    '',
    'Library versions:',
    versionLines(input.library_versions),
    '',
    'Training script (train.py):',
    fence(input.script, 'python'),
  ];
  if (input.primitives?.length) {
    parts.push('', 'Available primitives:');
    for (const p of input.primitives) {
      const params = paramText(p.params);
      parts.push(`- ${p.name}${params ? ` {${params}}` : ''}${p.description ? `: ${p.description}` : ''}`);
    }
  }
  parts.push('', 'Respond with JSON only: {"primitive_type": "<PrimitiveName>", "params": {...}}');
  return parts.join('\n') + '\n';
}

export function renderRepairAgentPrompt(input: {
  broken_script: string;
  error_trace: string;
  library_versions: Readonly<Record<string, string>>;
  target_category: string;
  /** The release's migration note, when the episode shows hints (migrationHint.ts). */
  migration_hint?: string;
}): string {
  const trace = input.error_trace.trim() === '' ? '(the script produced no error output)' : input.error_trace;
  const hint = input.migration_hint?.trim()
    ? ['Migration note from the library release:', fence(input.migration_hint.trim(), 'text'), '']
    : [];
  return (
    [
      `Target category: ${input.target_category}`,
      '',
      'Library versions:',
      versionLines(input.library_versions),
      '',
      'Broken script (train.py):',
      fence(input.broken_script, 'python'),
      '',
      'Error trace:',
      fence(trace, 'text'),
      '',
      ...hint,
      'Respond with a unified diff against train.py (--- a/train.py, +++ b/train.py) in a ```diff block.',
    ].join('\n') + '\n'
  );
}

/** Fenced blocks of `text` in order, with their language tag. Handles fences of 3+ backticks. */
export function fencedBlocks(text: string): Array<{ lang: string; body: string }> {
  const out: Array<{ lang: string; body: string }> = [];
  const re = /^(`{3,})[ \t]*([\w+-]*)[^\n]*\n([\s\S]*?)^\1[ \t]*$/gm;
  for (const m of text.matchAll(re)) out.push({ lang: m[2].toLowerCase(), body: m[3] });
  return out;
}

export const looksLikeDiff = (t: string) => /^@@/m.test(t) || /^(---|\+\+\+) \S/m.test(t) || /^diff --git /m.test(t);

/**
 * The repair from a model completion: the first ```diff (or ```patch) block; else a ```python
 * block (a whole script, passed through for applyRepairDiff to detect); else an untagged block
 * holding a diff; else the raw text from its first diff header on. '' for an empty completion.
 */
export function extractDiff(completion: string): string {
  if (typeof completion !== 'string' || completion.trim() === '') return '';
  const text = completion;
  const blocks = fencedBlocks(text);
  const diff = blocks.find((b) => b.lang === 'diff' || b.lang === 'patch' || b.lang === 'udiff');
  if (diff) return diff.body;
  const py = blocks.find((b) => b.lang === 'python' || b.lang === 'py');
  if (py) return py.body;
  const plain = blocks.find((b) => looksLikeDiff(b.body));
  if (plain) return plain.body;
  const start = text.search(/^(diff --git |--- |@@)/m);
  if (start >= 0) {
    const raw = text.slice(start);
    return raw.endsWith('\n') ? raw : raw + '\n';
  }
  return text.trim() + '\n';
}
