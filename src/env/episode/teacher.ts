// The Teacher picks an episode's target category: the name of a breakage primitive that applies
// to the script. Seeded, and a curriculum: among the applicable primitives (those with a real
// drift the snapshot rejects, when there are any; else those with any breaking candidate) it asks
// for the ones it has asked for least so far, breaking ties at random, so a run of episodes cycles
// through all of them. Its history lives in a store, so a Teacher made per episode still cycles.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { z } from 'zod';
import { breaksReally } from '../drift/generator';
import { applicablePrimitives } from '../primitives/registry';
import { mulberry32, randomIndex } from '../random';
import type { LibraryVersions } from '../schemas';

/** The original's default category, used when nothing applies. */
export const DEFAULT_TARGET = 'RenameApiCall';

export const TeacherHistorySchema = z
  .object({
    /** How often each primitive was asked for. */
    counts: z.record(z.string(), z.number().int().nonnegative()).default({}),
    /** Random draws taken so far, so a restored Teacher continues the seed's sequence. */
    draws: z.number().int().nonnegative().default(0),
  })
  .strict();
export type TeacherHistory = z.infer<typeof TeacherHistorySchema>;

/** Where a Teacher keeps its history between episodes. */
export interface TeacherStore {
  load(): TeacherHistory;
  save(history: TeacherHistory): void;
}

export class MemoryTeacherStore implements TeacherStore {
  private history: TeacherHistory = { counts: {}, draws: 0 };

  load(): TeacherHistory {
    return structuredClone(this.history);
  }

  save(history: TeacherHistory): void {
    this.history = structuredClone(history);
  }
}

/**
 * History in a JSON file (written atomically). A missing file is an empty history; an unreadable
 * or invalid one is reported once through `onProblem` and treated as empty, never a crash.
 */
export class JsonFileTeacherStore implements TeacherStore {
  constructor(
    readonly path: string,
    private readonly onProblem: (message: string) => void = () => {},
  ) {}

  load(): TeacherHistory {
    if (!existsSync(this.path)) return { counts: {}, draws: 0 };
    try {
      const parsed = TeacherHistorySchema.safeParse(JSON.parse(readFileSync(this.path, 'utf8')));
      if (parsed.success) return parsed.data;
      this.onProblem(`${this.path}: not a Teacher history (${parsed.error.issues[0]?.message ?? 'invalid'}); starting afresh`);
    } catch (e) {
      this.onProblem(`${this.path}: ${e instanceof Error ? e.message : String(e)}; starting afresh`);
    }
    return { counts: {}, draws: 0 };
  }

  save(history: TeacherHistory): void {
    mkdirSync(dirname(this.path), { recursive: true });
    const tmp = `${this.path}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(history, null, 2) + '\n');
    renameSync(tmp, this.path);
  }
}

/** The store for `path`: a JSON file when given, else memory. */
export function teacherStore(path?: string): TeacherStore {
  return path ? new JsonFileTeacherStore(path) : new MemoryTeacherStore();
}

export class Teacher {
  private readonly random: () => number;
  private readonly asked = new Map<string, number>();
  private draws: number;

  constructor(
    readonly seed: number,
    private readonly store: TeacherStore = new MemoryTeacherStore(),
  ) {
    const history = store.load();
    for (const [k, v] of Object.entries(history.counts)) this.asked.set(k, v);
    this.random = mulberry32(seed ^ 0x5eed);
    this.draws = history.draws;
    for (let i = 0; i < this.draws; i++) this.random();
  }

  /** How often each primitive was asked for so far (including earlier episodes in the store). */
  get counts(): ReadonlyMap<string, number> {
    return new Map(this.asked);
  }

  targetCategory(script: string, versions?: LibraryVersions): string {
    const applicable = applicablePrimitives(script, versions);
    const real = applicable.filter((a) => a.candidates.some(breaksReally)).map((a) => a.primitive.name);
    const breaking = applicable.filter((a) => a.candidates.some((c) => c.breaks !== false)).map((a) => a.primitive.name);
    // Nothing applies: name the default category anyway; the drift generator then says why it cannot act.
    const pool = real.length
      ? real
      : breaking.length
        ? breaking
        : applicable.length
          ? applicable.map((a) => a.primitive.name)
          : [DEFAULT_TARGET];
    const least = Math.min(...pool.map((n) => this.asked.get(n) ?? 0));
    const fewest = pool.filter((n) => (this.asked.get(n) ?? 0) === least);
    const pick = fewest[randomIndex(() => this.draw(), fewest.length)];
    this.asked.set(pick, (this.asked.get(pick) ?? 0) + 1);
    this.store.save({ counts: Object.fromEntries([...this.asked].sort(([a], [b]) => a.localeCompare(b))), draws: this.draws });
    return pick;
  }

  private draw(): number {
    this.draws++;
    return this.random();
  }
}
