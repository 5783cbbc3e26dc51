// What the review walk shows for one demonstration: the broken script (recovered from the
// repair prompt the annotator saw), the repaired script (broken + the scored diff), its scores,
// its latest review and label, and whether it duplicates another record. No vscode import.
import { applyRepairDiff } from '../../../env/diff/diff';
import { MAX_MAX_DIFF_BYTES } from '../../../env/limits';
import type { DatasetSnapshot } from '../../../store/datasetStore';
import { labelTargetKey, type DemonstrationRecord, type LabelRecord, type ReviewRecord } from '../../../store/records';

export interface ReviewItem {
  record: DemonstrationRecord;
  /** 0-based position in the walk. */
  index: number;
  broken: string | undefined;
  repaired: { ok: true; script: string; warnings: string[] } | { ok: false; error: string };
  review: ReviewRecord | undefined;
  label: LabelRecord | undefined;
  /** One human sentence per duplicate relation; empty when the record is unique. */
  duplicates: string[];
}

const FENCE_RE = /^(`{3,})[ \t]*([\w+-]*)[^\n]*\n([\s\S]*?)^\1[ \t]*$/gm;

/**
 * The broken script inside a repair prompt: the ```python block after "Broken script", else the
 * first ```python block. The renderer adds a final newline to a script without one, so the body
 * always ends with "\n"; `applyRepairDiffTolerant` handles the other case.
 */
export function brokenScriptFromPrompt(repairPrompt: string): string | undefined {
  const blocks: Array<{ at: number; lang: string; body: string }> = [];
  for (const m of repairPrompt.matchAll(FENCE_RE)) blocks.push({ at: m.index ?? 0, lang: (m[2] ?? '').toLowerCase(), body: m[3] ?? '' });
  const python = blocks.filter((b) => b.lang === 'python' || b.lang === 'py');
  const heading = repairPrompt.search(/^Broken script\b/m);
  const afterHeading = heading >= 0 ? python.find((b) => b.at > heading) : undefined;
  return (afterHeading ?? python[0])?.body;
}

/**
 * applyRepairDiff on the recovered script, also trying it without the final newline the prompt
 * fence may have added (first, when the diff says a side has no final newline). A strict
 * (exact-context) application wins over a lenient one.
 */
export function applyRepairDiffTolerant(broken: string, diff: string): ReviewItem['repaired'] {
  const noEol = /^\\ No newline at end of file/m.test(diff);
  const variants = !broken.endsWith('\n') ? [broken] : noEol ? [broken.slice(0, -1), broken] : [broken, broken.slice(0, -1)];
  // A recorded diff was accepted under the maxDiffBytes setting of its day: allow the setting's upper bound.
  const results = variants.map((v) => applyRepairDiff(v, diff, { maxBytes: MAX_MAX_DIFF_BYTES }));
  const best = results.find((r) => r.ok && r.mode !== 'lenient') ?? results.find((r) => r.ok) ?? results[0];
  return best.ok ? { ok: true, script: best.script, warnings: best.warnings } : { ok: false, error: best.error };
}

/** Duplicate notes per record id, from the store's duplicate flags. */
export function duplicateNotes(snapshot: Pick<DatasetSnapshot, 'duplicates'>): Map<string, string[]> {
  const notes = new Map<string, string[]>();
  const add = (id: string, text: string) => notes.set(id, [...(notes.get(id) ?? []), text]);
  for (const g of snapshot.duplicates.recordHashes) {
    g.record_ids.forEach((id, i) => {
      const others = g.record_ids.filter((o) => o !== id);
      add(
        id,
        i === 0
          ? `identical repair (same task, same diff) repeated by ${others.join(', ')}`
          : `duplicate of ${g.record_ids[0]} (same task, same diff: record hash)`,
      );
    });
  }
  for (const g of snapshot.duplicates.taskHashes) {
    for (const id of g.record_ids) {
      const others = g.record_ids.filter((o) => o !== id);
      add(id, `same task solved ${g.record_ids.length} times (task hash; also ${others.join(', ')})`);
    }
  }
  for (const id of snapshot.duplicates.recordIds) add(id, 'this record id is written on more than one line');
  return notes;
}

/** The walk: current demonstrations in file order. */
export function buildReviewItems(snapshot: DatasetSnapshot): ReviewItem[] {
  const notes = duplicateNotes(snapshot);
  return snapshot.demonstrations.current.map((record, index) => {
    const broken = brokenScriptFromPrompt(record.repair_prompt);
    const repaired: ReviewItem['repaired'] =
      broken === undefined
        ? { ok: false, error: 'the repair prompt has no ```python block with the broken script' }
        : applyRepairDiffTolerant(broken, record.repair_completion);
    return {
      record,
      index,
      broken,
      repaired,
      review: snapshot.reviews.latest.get(record.info.record_id),
      label: snapshot.labels.latest.get(labelTargetKey({ type: 'demonstration', record_id: record.info.record_id })),
      duplicates: notes.get(record.info.record_id) ?? [],
    };
  });
}

/** Index of the first item without a review, else 0. */
export function firstUnreviewed(items: readonly ReviewItem[]): number {
  const i = items.findIndex((it) => !it.review);
  return i < 0 ? 0 : i;
}

function fmt(x: number | undefined): string {
  return x === undefined ? '–' : String(Math.round(x * 100) / 100);
}

/** One status-bar line: position, outcome, reward, verdict, duplicate flag. */
export function statusText(item: ReviewItem, total: number): string {
  const r = item.record;
  const verdict = item.review ? (item.review.verdict === 'approve' ? ' · approved' : ' · rejected') : '';
  const dup = item.duplicates.length ? ' · duplicate' : '';
  return `Review ${item.index + 1}/${total} · ${r.success ? 'success' : 'failed'} · reward ${fmt(r.visible_reward)}${verdict}${dup}`;
}

/** Markdown lines for a tooltip or hover: every score component, provenance, review, duplicates. */
export function scoreMarkdown(item: ReviewItem): string {
  const r = item.record;
  const rows = (o: Record<string, number>) =>
    Object.keys(o)
      .sort()
      .map((k) => `| ${k} | ${fmt(o[k])} |`)
      .join('\n');
  const lines = [
    `**${r.task_id}** · ${r.primitive_type} · revision ${r.info.revision}`,
    '',
    `annotator ${r.info.annotator_id}, active ${Math.round(r.info.active_ms / 1000)} s, ${r.info.runs} run(s), ${r.info.mode} mode`,
    '',
    `| visible (${fmt(r.visible_reward)}) | |`,
    '|---|---|',
    rows(r.visible_breakdown),
    '',
    `| held-out (success: ${r.success ? 'yes' : 'no'}) | |`,
    '|---|---|',
    rows(r.held_out_breakdown),
  ];
  if (item.review)
    lines.push(
      '',
      `Latest review: **${item.review.verdict}** by ${item.review.reviewer} (${item.review.at})${item.review.comment ? `: ${item.review.comment}` : ''}`,
    );
  if (item.label)
    lines.push(
      '',
      `Label: difficulty ${item.label.difficulty}, confidence ${item.label.confidence}, tags ${item.label.tags.join(', ') || '—'}`,
    );
  for (const d of item.duplicates) lines.push('', `⚠ ${d}`);
  if (!item.repaired.ok) lines.push('', `⚠ the diff does not apply to the broken script: ${item.repaired.error}`);
  return lines.join('\n');
}

/** 0-based line of `repaired` where it first differs from `broken` (0 when they are equal). */
export function firstChangedLine(broken: string, repaired: string): number {
  const a = broken.split('\n');
  const b = repaired.split('\n');
  const i = b.findIndex((line, n) => line !== a[n]);
  // A change at the very end (lines removed, or only the final newline) sits below the last line.
  return i >= 0 ? i : a.length !== b.length || broken !== repaired ? Math.max(0, b.length - 1) : 0;
}

/** `name value · name value`, in the reward's own order (script_executes before diff_size_penalty). */
function breakdownText(o: Record<string, number>): string {
  const parts = Object.entries(o).map(([k, v]) => `${k} ${fmt(v)}`);
  return parts.length ? parts.join(' · ') : '—';
}

/**
 * The score header shown in the review view itself, above the repaired script (CodeLens titles,
 * `$(icon)` codicons allowed): outcome and reward with the review state, then each breakdown.
 */
export function scoreHeader(item: ReviewItem): string[] {
  const r = item.record;
  const head = [r.success ? '$(pass-filled) success' : '$(error) failed', `reward ${r.visible_reward.toFixed(2)}`];
  if (item.review) head.push(item.review.verdict === 'approve' ? '$(check) approved' : '$(close) rejected');
  if (item.duplicates.length) head.push('$(warning) duplicate');
  if (!item.repaired.ok) head.push('$(warning) diff does not apply');
  return [head.join(' · '), `visible: ${breakdownText(r.visible_breakdown)}`, `held-out: ${breakdownText(r.held_out_breakdown)}`];
}

/** Plain-text details for the header's tooltip: provenance, review, label, duplicate notes. */
export function scoreTooltip(item: ReviewItem): string {
  const r = item.record;
  const lines = [
    `${r.task_id} · ${r.primitive_type} · revision ${r.info.revision}`,
    `annotator ${r.info.annotator_id}, active ${Math.round(r.info.active_ms / 1000)} s, ${r.info.runs} run(s), ${r.info.mode} mode`,
  ];
  if (item.review)
    lines.push(
      `${item.review.verdict === 'approve' ? 'Approved' : 'Rejected'} by ${item.review.reviewer}${item.review.comment ? `: ${item.review.comment}` : ''}`,
    );
  if (item.label)
    lines.push(
      `Label: difficulty ${item.label.difficulty}, confidence ${item.label.confidence}, tags ${item.label.tags.join(', ') || '—'}`,
    );
  for (const d of item.duplicates) lines.push(`⚠ ${d}`);
  if (!item.repaired.ok) lines.push(`⚠ the diff does not apply to the broken script: ${item.repaired.error}`);
  return lines.join('\n');
}
