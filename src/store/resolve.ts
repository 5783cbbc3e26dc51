// How a folder of append-only lines is read back as one consistent view: later revisions
// replace earlier ones, the latest review and label win, and duplicates are flagged (not dropped).
import type { DemonstrationRecord } from './records';

/** Record ids named by some record's `supersedes`: those records are no longer current. */
export function supersededIds(records: Iterable<DemonstrationRecord>): Set<string> {
  const out = new Set<string>();
  for (const r of records) if (r.info.supersedes) out.add(r.info.supersedes);
  return out;
}

/** Current records in file order; a record id that appears on several lines counts once (its first line). */
export function currentRecords(
  records: readonly DemonstrationRecord[],
  superseded: ReadonlySet<string> = supersededIds(records),
): DemonstrationRecord[] {
  const seen = new Set<string>();
  const out: DemonstrationRecord[] = [];
  for (const r of records) {
    if (superseded.has(r.info.record_id) || seen.has(r.info.record_id)) continue;
    seen.add(r.info.record_id);
    out.push(r);
  }
  return out;
}

function timeOf(at: string): number {
  const t = Date.parse(at);
  return Number.isNaN(t) ? -Infinity : t;
}

/**
 * Keeps, per key, the entry with the latest `at`; on equal times the one added later (later in
 * the file) wins. Comparing parsed times, not strings, keeps merged folders from other time zones right.
 */
export class LatestByKey<T extends { at: string }> {
  private readonly best = new Map<string, { value: T; t: number }>();

  add(key: string, value: T): void {
    const t = timeOf(value.at);
    const cur = this.best.get(key);
    if (!cur || t >= cur.t) this.best.set(key, { value, t });
  }

  get(key: string): T | undefined {
    return this.best.get(key)?.value;
  }

  toMap(): Map<string, T> {
    return new Map([...this.best].map(([k, v]) => [k, v.value]));
  }
}

export interface DuplicateGroup {
  hash: string;
  /** Record ids in file order; the first is the original. */
  record_ids: string[];
}

export interface DuplicateFlags {
  /** Same task and byte-identical diff (among current records). */
  recordHashes: DuplicateGroup[];
  /** Same task solved more than once (among current records; revisions of one episode do not count). */
  taskHashes: DuplicateGroup[];
  /** A record id written on more than one line (e.g. a retried append). */
  recordIds: string[];
}

function groupsOf(map: Map<string, string[]>): DuplicateGroup[] {
  return [...map].filter(([, ids]) => ids.length > 1).map(([hash, record_ids]) => ({ hash, record_ids }));
}

export function findDuplicates(all: readonly DemonstrationRecord[], current: readonly DemonstrationRecord[]): DuplicateFlags {
  const byRecordHash = new Map<string, string[]>();
  const byTaskHash = new Map<string, string[]>();
  for (const r of current) {
    const push = (m: Map<string, string[]>, k: string) => {
      const list = m.get(k);
      if (list) list.push(r.info.record_id);
      else m.set(k, [r.info.record_id]);
    };
    push(byRecordHash, r.info.record_hash);
    push(byTaskHash, r.info.task_hash);
  }
  const idCounts = new Map<string, number>();
  for (const r of all) idCounts.set(r.info.record_id, (idCounts.get(r.info.record_id) ?? 0) + 1);
  return {
    recordHashes: groupsOf(byRecordHash),
    taskHashes: groupsOf(byTaskHash),
    recordIds: [...idCounts].filter(([, n]) => n > 1).map(([id]) => id),
  };
}
