// Python string literals as primitives see them: a prefix, a quote, and the raw content between.

export interface StringLiteral {
  from: number;
  to: number;
  prefix: string;
  quote: string;
  /** Offsets of the content between the quotes. */
  contentFrom: number;
  contentTo: number;
  /** The content exactly as written (escapes not decoded). */
  raw: string;
  /**
   * True when the content means what it says: no escapes, no bytes/f-prefix, single line. Only
   * such literals are read or rewritten as names (a column key, a metric key).
   */
  plain: boolean;
}

export function readStringLiteral(source: string, from: number, to: number): StringLiteral | undefined {
  const text = source.slice(from, to);
  const m = /^([A-Za-z]*)('''|"""|'|")/.exec(text);
  if (!m) return undefined;
  const prefix = m[1];
  const quote = m[2];
  const contentFrom = from + m[0].length;
  const contentTo = to - quote.length;
  if (contentTo < contentFrom || !text.endsWith(quote)) return undefined;
  const raw = source.slice(contentFrom, contentTo);
  // A quote inside means the text was not one literal (`"a" + "b"`) or needs escaping.
  const plain = /^[uUrR]?$/.test(prefix) && !/[\\\n\r]/.test(raw) && !raw.includes(quote);
  return { from, to, prefix, quote, contentFrom, contentTo, raw, plain };
}

/** A literal for `value` in the given quote style; undefined when the value cannot be written plainly. */
export function stringLiteral(value: string, quote: '"' | "'" = '"'): string | undefined {
  if (/[\\\n\r]/.test(value) || value.includes(quote)) return undefined;
  return quote + value + quote;
}
