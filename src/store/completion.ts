// Completions are stored raw: the unified diff exactly as the environment scored it. Records
// written before that rule may hold the diff inside a ```diff fence (the oracle's answer as a
// model would give it); readers unwrap such a fence so every consumer sees the raw diff, and
// only the export's `--completion fenced` option adds a fence.

// The whole string is one fenced block: an opening fence of 3+ backticks (optionally tagged diff,
// patch or udiff), the body, and the same fence closing at the very end.
const WHOLE_FENCE = /^(`{3,})[ \t]*(?:diff|patch|udiff)?[ \t]*\r?\n([\s\S]*?)^\1[ \t]*(?:\r?\n)?(?![\s\S])/m;

/** The raw diff of a stored completion: a completion that is one fenced block is unwrapped; anything else is returned as is. */
export function rawCompletion(completion: string): string {
  if (!completion.startsWith('```')) return completion;
  const m = WHOLE_FENCE.exec(completion);
  if (!m || m.index !== 0) return completion;
  return m[2];
}

/** Whether a stored completion is an old fenced one (normalized on read, never rewritten on disk). */
export function isFencedCompletion(completion: string): boolean {
  return rawCompletion(completion) !== completion;
}
