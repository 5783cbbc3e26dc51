// The machinery every primitive shares. A primitive is defined by a `plan` (the edits for given
// params, plus the spec of its inverse) and a `propose` (params worth offering for a script).
// `definePrimitive` turns that into the `Primitive` contract and adds what must hold for all:
// params validated, scripts that do not parse refused, and every result self-checked by applying
// the inverse and comparing byte for byte, so an inexact inverse is a refusal, never a result.
import type { z } from 'zod';
import { breaksUnder, driftEntriesFor, driftText, type DriftEntry } from '../drift/driftTable';
import { applyEdits, sortEdits, spanOfEdits, type TextEdit } from '../python/edits';
import { describeProblem, parsePython, type ParsedScript } from '../python/parse';
import { indexScript, type ScriptIndex } from '../python/scriptIndex';
import { formatZodError, type LibraryVersions } from '../schemas';
import { snapshotVersions } from '../snapshots/versions';
import { PrimitiveRefusal, type Primitive, type PrimitiveCandidate, type PrimitiveResult } from './types';

export interface ScriptContext {
  script: string;
  parsed: ParsedScript;
  index: ScriptIndex;
}

export interface Plan {
  edits: TextEdit[];
  inverse: { primitive_type: string; params: Record<string, unknown> };
}

export interface Proposal<P> {
  params: P;
  /** Defaults to the definition's `label(params)`. */
  label?: string;
  drift?: DriftEntry;
  /** Whether the broken form fails under the versions; set from the drift entry when omitted. */
  breaks?: boolean;
}

export interface PrimitiveDefinition<P extends Record<string, unknown>> {
  name: string;
  category: string;
  kind: 'breakage' | 'inverse';
  description: string;
  models: string;
  paramsSchema: z.ZodType<P>;
  label(params: P): string;
  /** The edits and the inverse spec; throws PrimitiveRefusal (via `refuse`) when it cannot act. */
  plan(ctx: ScriptContext, params: P): Plan;
  /** Params to offer for this script, best first; invalid ones are filtered by dry-running `plan`. */
  propose(ctx: ScriptContext, versions: LibraryVersions): Array<Proposal<P>>;
}

const DEFINITIONS = new Map<string, PrimitiveDefinition<Record<string, unknown>>>();

/** The parsed and indexed script (both cached, so a picker's many calls parse once). */
export function contextOf(script: string): ScriptContext {
  const parsed = parsePython(script);
  return { script, parsed, index: indexScript(parsed) };
}

/** Drift-table proposals for a primitive, in table order. */
export function driftProposals<P>(name: string, versions: LibraryVersions): Array<Proposal<P>> {
  return driftEntriesFor(name).map((d) => ({ params: d.params as P, drift: d, breaks: breaksUnder(d, versions) }));
}

export function definePrimitive<P extends Record<string, unknown>>(def: PrimitiveDefinition<P>): Primitive<P> {
  if (DEFINITIONS.has(def.name)) throw new Error(`primitive ${def.name} is defined twice`);
  DEFINITIONS.set(def.name, def);
  return {
    name: def.name,
    category: def.category,
    kind: def.kind,
    description: def.description,
    models: def.models,
    paramsSchema: def.paramsSchema,
    candidates: (script, versions) => candidatesOf(def, script, versions),
    apply: (script, params) => applyChecked(def, script, params),
  };
}

function candidatesOf<P extends Record<string, unknown>>(
  def: PrimitiveDefinition<P>,
  script: string,
  versions?: LibraryVersions,
): PrimitiveCandidate<P>[] {
  try {
    const ctx = contextOf(script);
    if (ctx.parsed.problem) return [];
    const v = { ...snapshotVersions(), ...(versions ?? {}) };
    const ranked: Array<{ c: PrimitiveCandidate<P>; tier: number }> = [];
    const seen = new Set<string>();
    for (const p of def.propose(ctx, v)) {
      const key = stableKey(p.params);
      if (seen.has(key)) continue;
      seen.add(key);
      if (!def.paramsSchema.safeParse(p.params).success) continue;
      let plan: Plan;
      try {
        plan = def.plan(ctx, p.params);
      } catch {
        continue; // not applicable here (a refusal), so not a candidate
      }
      if (plan.edits.length === 0) continue;
      const span = spanOfEdits(plan.edits);
      const breaks = p.breaks ?? (p.drift ? breaksUnder(p.drift, v) : undefined);
      // A copy: callers may edit a candidate's params (the editor's prefill) without touching the drift table.
      const c: PrimitiveCandidate<P> = {
        params: structuredClone(p.params),
        label: p.label ?? def.label(p.params),
        from: span.from,
        to: span.to,
        provenance: p.drift?.provenance ?? 'synthetic',
      };
      if (p.drift) {
        c.drift = driftText(p.drift);
        c.drift_entry = p.drift.id;
        if (p.drift.catalogId) c.drift_id = p.drift.catalogId;
      }
      if (breaks !== undefined) c.breaks = breaks;
      // Real drifts that break under `versions` first, then other real drifts, then synthetic
      // ones (breaking before deprecation-only).
      ranked.push({ c, tier: c.provenance === 'real' ? (breaks === false ? 1 : 0) : breaks === false ? 3 : 2 });
    }
    return ranked.sort((a, b) => a.tier - b.tier).map((r) => r.c);
  } catch {
    return []; // a candidate list is advisory: a bug here must not break a picker
  }
}

function applyChecked<P extends Record<string, unknown>>(def: PrimitiveDefinition<P>, script: string, params: P): PrimitiveResult {
  try {
    const valid = def.paramsSchema.safeParse(params);
    if (!valid.success) throw new PrimitiveRefusal(def.name, `invalid params: ${formatZodError(valid.error)}`);
    const ctx = contextOf(script);
    if (ctx.parsed.problem)
      throw new PrimitiveRefusal(
        def.name,
        `the script does not parse (${describeProblem(ctx.parsed.problem)}); fix the syntax error first`,
      );
    const plan = def.plan(ctx, valid.data);
    if (plan.edits.length === 0) throw new PrimitiveRefusal(def.name, 'nothing to change in this script');
    const edits = sortEdits(plan.edits);
    const result = applyEdits(script, edits);
    if (result === script) throw new PrimitiveRefusal(def.name, 'the edit would not change the script');
    verifyInverse(def.name, script, result, plan);
    const inverseDef = DEFINITIONS.get(plan.inverse.primitive_type)!;
    return {
      script: result,
      inverse: { primitive_type: inverseDef.name, category: inverseDef.category, params: plan.inverse.params },
      edits,
    };
  } catch (e) {
    if (e instanceof PrimitiveRefusal) throw e;
    throw new PrimitiveRefusal(def.name, `internal error: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** Applies the planned inverse to `result` without its own check; it must give back `script` exactly. */
function verifyInverse(name: string, script: string, result: string, plan: Plan): void {
  const inverseDef = DEFINITIONS.get(plan.inverse.primitive_type);
  if (!inverseDef) throw new Error(`inverse primitive ${plan.inverse.primitive_type} is not defined`);
  const params = inverseDef.paramsSchema.safeParse(plan.inverse.params);
  if (!params.success) throw new Error(`inverse params for ${inverseDef.name} are invalid: ${formatZodError(params.error)}`);
  const after = contextOf(result);
  if (after.parsed.problem)
    throw new PrimitiveRefusal(name, `the edit would leave a syntax error (${describeProblem(after.parsed.problem)}), so it is refused`);
  let restored: string;
  try {
    restored = applyEdits(result, inverseDef.plan(after, params.data).edits);
  } catch (e) {
    const why = e instanceof PrimitiveRefusal ? e.reason : e instanceof Error ? e.message : String(e);
    throw new PrimitiveRefusal(name, `refused because the inverse (${inverseDef.name}) could not undo it exactly: ${why}`);
  }
  if (restored !== script) {
    throw new PrimitiveRefusal(
      name,
      `refused because the inverse (${inverseDef.name}) would not restore the script byte for byte (${firstDifference(script, restored)})`,
    );
  }
}

function firstDifference(a: string, b: string): string {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  const line = a.slice(0, i).split('\n').length;
  return `first difference on line ${line}`;
}

/** Throws the primitive's refusal with `reason`. */
export function refuse(name: string, reason: string): never {
  throw new PrimitiveRefusal(name, reason);
}

function stableKey(v: unknown): string {
  return JSON.stringify(v, (_k, value: unknown) =>
    value && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)))
      : value,
  );
}
