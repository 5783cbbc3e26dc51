// Column types of the summary index: growable typed arrays, strings kept as one text with
// offsets, and duplicate finding over precomputed integer hashes (no string-keyed maps).

/** A growable typed-array column: no per-element objects, and saved or loaded as raw bytes. */
export class NumColumn {
  private a: Float64Array | Int32Array;
  length: number;
  constructor(
    readonly kind: 'f64' | 'i32',
    init?: Float64Array | Int32Array,
  ) {
    this.a = init ?? (kind === 'f64' ? new Float64Array(1024) : new Int32Array(1024));
    this.length = init ? init.length : 0;
  }
  push(v: number): void {
    if (this.length === this.a.length) {
      const bigger = this.kind === 'f64' ? new Float64Array(this.a.length * 2) : new Int32Array(this.a.length * 2);
      bigger.set(this.a);
      this.a = bigger;
    }
    this.a[this.length++] = v;
  }
  get(i: number): number {
    return this.a[i];
  }
  set(i: number, v: number): void {
    this.a[i] = v;
  }
  /** The filled part (a view: valid until the next push). */
  get values(): Float64Array | Int32Array {
    return this.a.subarray(0, this.length);
  }
}

/**
 * A string column: loaded strings stay in one text with start offsets (sliced on demand: the
 * summary looks at few of them), appended ones in an array.
 */
export class StrColumn {
  private baseCount = 0;
  private readonly extra: string[] = [];
  constructor(
    private readonly base = '',
    private readonly starts: Int32Array = new Int32Array(1),
    /** `base` as loaded (saved again without re-encoding). */
    private readonly baseBytes?: Buffer,
  ) {
    this.baseCount = starts.length - 1;
  }
  get length(): number {
    return this.baseCount + this.extra.length;
  }
  get(i: number): string {
    return i < this.baseCount ? this.base.slice(this.starts[i], this.starts[i + 1]) : this.extra[i - this.baseCount];
  }
  /** Whether positions i and j hold the same string (no substring is made for loaded ones). */
  equals(i: number, j: number): boolean {
    if (i >= this.baseCount || j >= this.baseCount) return this.get(i) === this.get(j);
    const a = this.starts[i];
    const b = this.starts[j];
    const len = this.starts[i + 1] - a;
    if (this.starts[j + 1] - b !== len) return false;
    for (let k = 0; k < len; k++) if (this.base.charCodeAt(a + k) !== this.base.charCodeAt(b + k)) return false;
    return true;
  }
  push(s: string): void {
    this.extra.push(s);
  }
  encode(): { bytes: Buffer; starts: Int32Array } {
    const tail = this.extra.join('');
    const starts = new Int32Array(this.length + 1);
    starts.set(this.starts.subarray(0, this.baseCount + 1));
    let at = this.starts[this.baseCount];
    for (let k = 0; k < this.extra.length; k++) starts[this.baseCount + k + 1] = at += this.extra[k].length;
    const head = this.baseBytes ?? Buffer.from(this.base, 'utf8');
    return { bytes: tail ? Buffer.concat([head, Buffer.from(tail, 'utf8')]) : head, starts };
  }
}

/**
 * A 28-bit FNV-1a hash (a small integer, so V8 keys maps by it without hashing a string). Stored
 * per id and hash when a line is read, so aggregating 100k records hashes no strings at all.
 */
export function key28(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return (h >>> 0) & 0x0fffffff;
}

/**
 * Duplicate groups among strings with precomputed key28s, over a subset of a column's positions:
 * one pass over an open-addressing table of typed arrays, keyed by the integer key; positions
 * under the same key are compared character by character (a different string under the same key,
 * a rare collision, probes on and starts a group of its own). No maps, no sort, no substrings.
 */
export function duplicateGroups(
  keyOf: ArrayLike<number>,
  strings: StrColumn,
  positions: ArrayLike<number>,
): { groups: number; extra: number } {
  const n = positions.length;
  let cap = 16;
  while (cap < n * 2) cap *= 2;
  const mask = cap - 1;
  const slots = new Int32Array(cap).fill(-1); // a group's first index into `positions`
  const size = new Int32Array(n);
  let groups = 0;
  let extra = 0;
  for (let j = 0; j < n; j++) {
    const pos = positions[j];
    const key = keyOf[pos];
    // key28s are FNV-1a hashes: their low bits are already mixed.
    for (let h = key & mask; ; h = (h + 1) & mask) {
      const f = slots[h];
      if (f === -1) {
        slots[h] = j;
        size[j] = 1;
        break;
      }
      const first = positions[f];
      if (keyOf[first] === key && strings.equals(pos, first)) {
        if (++size[f] === 2) groups++;
        extra++;
        break;
      }
    }
  }
  return { groups, extra };
}

/** The index files' layout: a u32 length, a JSON header naming each section's size, then the sections. */
export function packSections(header: object, sections: readonly Buffer[]): Buffer {
  const head = Buffer.from(JSON.stringify({ ...header, sizes: sections.map((b) => b.length) }), 'utf8');
  const len = Buffer.alloc(4);
  len.writeUInt32LE(head.length);
  return Buffer.concat([len, head, ...sections]);
}

/** The header of a packSections buffer, and its sections one by one, in order. */
export function unpackSections<H>(buf: Buffer): { header: H; next: () => Buffer } {
  const hlen = buf.readUInt32LE(0);
  const header = JSON.parse(buf.subarray(4, 4 + hlen).toString('utf8')) as H & { sizes: number[] };
  let pos = 4 + hlen;
  let k = 0;
  const next = () => {
    const b = buf.subarray(pos, pos + header.sizes[k]);
    pos += header.sizes[k++];
    return b;
  };
  return { header, next };
}
