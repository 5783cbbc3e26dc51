// What a model's completion submits as its repair. The environment's own reading (extractDiff in
// prompts.ts) passes any text through, so a chatty answer would be "applied" as a whole script;
// here an answer that holds neither a unified diff nor a fenced script is refused up front, with
// the reason, and scored as a failure without running anything.
import { extractDiff, fencedBlocks, looksLikeDiff } from '../episode/prompts';

export type RepairAnswer = { ok: true; kind: 'diff' | 'script'; submission: string } | { ok: false; reason: string };

const DIFF_LANGS = new Set(['diff', 'patch', 'udiff']);
const PYTHON_LANGS = new Set(['python', 'py', 'python3']);

export function parseRepairAnswer(completion: string): RepairAnswer {
  if (completion.trim() === '') return { ok: false, reason: 'the completion is empty' };
  const blocks = fencedBlocks(completion);
  const diffBlock = blocks.find((b) => DIFF_LANGS.has(b.lang));
  if (diffBlock && !looksLikeDiff(diffBlock.body)) {
    return { ok: false, reason: 'the ```diff block holds no unified diff (no ---/+++ headers or @@ hunks)' };
  }
  if (diffBlock || blocks.some((b) => looksLikeDiff(b.body) && !PYTHON_LANGS.has(b.lang)))
    return { ok: true, kind: 'diff', submission: extractDiff(completion) };
  if (blocks.some((b) => PYTHON_LANGS.has(b.lang))) {
    const script = extractDiff(completion);
    if (script.trim() === '') return { ok: false, reason: 'the ```python block is empty' };
    return { ok: true, kind: 'script', submission: script };
  }
  if (looksLikeDiff(completion)) return { ok: true, kind: 'diff', submission: extractDiff(completion) };
  const first = completion.trim().split('\n')[0].slice(0, 80);
  return {
    ok: false,
    reason: `no unified diff and no fenced script in the completion (${completion.length} characters, starting "${first}")`,
  };
}
