// The contract every breakage primitive (and every inverse primitive) fulfils.
// The editor and the CLI read only this contract and the registry, so a new primitive
// registered in `registry.ts` shows up everywhere without other code changes.
import type { z } from 'zod';
import type { LibraryVersions, PrimitiveSpec } from '../schemas';

/** A primitive declined to act: nothing to break, params that do not fit the script, a parse failure. */
export class PrimitiveRefusal extends Error {
  constructor(
    readonly primitiveType: string,
    readonly reason: string,
  ) {
    super(`${primitiveType}: ${reason}`);
    this.name = 'PrimitiveRefusal';
  }
}

/** One concrete way a primitive could act on a script: params plus where and why. */
export interface PrimitiveCandidate<P = Record<string, unknown>> {
  params: P;
  /** Human label for pickers, e.g. `rename AutoModelForCausalLM → AutoModelWithLMHead`. */
  label: string;
  /** 0-based character offsets of the source range the candidate would edit first. */
  from: number;
  to: number;
  /** The real-world drift this candidate models, when it comes from the drift table. */
  drift?: string;
  /** False when the simulated libraries still accept the drifted form (a deprecation warning only). */
  breaks?: boolean;
  /** `real` when the candidate reproduces a real release's change; `synthetic` for made-up drifts. */
  provenance: 'real' | 'synthetic';
  /** The drift table entry it comes from (`src/env/drift/driftTable.ts`). */
  drift_entry?: string;
  /** The matching entry of `resources/drifts/catalog.json`, when there is one. */
  drift_id?: string;
}

export interface PrimitiveResult {
  /** The edited script; only the affected ranges differ from the input. */
  script: string;
  /** A spec that, applied to `script`, gives back the input exactly (the oracle repair). */
  inverse: PrimitiveSpec;
  /** The edited ranges in the input script (0-based character offsets). */
  edits: Array<{ from: number; to: number; insert: string }>;
}

export interface Primitive<P extends Record<string, unknown> = Record<string, unknown>> {
  /** Class name as in the original, e.g. `RenameApiCall`. */
  readonly name: string;
  /** Spec category, e.g. `api_drift`. */
  readonly category: string;
  /** `breakage` primitives are offered to drift generators; `inverse` ones only repair. */
  readonly kind: 'breakage' | 'inverse';
  /** One line for pickers: what it does. */
  readonly description: string;
  /** The real Hugging Face drift(s) it models, one line. */
  readonly models: string;
  readonly paramsSchema: z.ZodType<P>;
  /**
   * Every place the primitive could act on `script`, with sensible params. Empty when it cannot
   * act (or the script does not parse). Deterministic order. `versions` lets the drift table
   * prefer drifts that really break under a snapshot.
   */
  candidates(script: string, versions?: LibraryVersions): PrimitiveCandidate<P>[];
  /** Applies with validated params; throws PrimitiveRefusal when there is nothing to do. */
  apply(script: string, params: P): PrimitiveResult;
}
