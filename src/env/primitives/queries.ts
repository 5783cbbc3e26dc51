// Questions primitives ask about an indexed script: which calls target a function, which names
// are bound at module level, and how to add or drop one whole import line exactly.
import type { TextEdit } from '../python/edits';
import { endsLine, lineEndAt, lineStartAt } from '../python/lines';
import type { CallArgument, CallSite, ImportInfo, ScriptIndex } from '../python/scriptIndex';

/**
 * Calls of `fn`: the callee is `fn` itself or ends with `.fn` (`Trainer` matches
 * `transformers.Trainer(...)`, `from_pretrained` matches `AutoTokenizer.from_pretrained(...)`).
 */
export function callsOf(index: ScriptIndex, fn: string): CallSite[] {
  const suffix = `.${fn}`;
  return index.calls.filter((c) => c.callee !== null && (c.callee === fn || c.callee.endsWith(suffix)));
}

export function keywordArg(call: CallSite, name: string): CallArgument | undefined {
  return call.args.find((a) => a.kind === 'keyword' && a.name === name);
}

/** The receiver chain of a method call (`trainer` in `trainer.evaluate()`), if it is a plain chain. */
export function receiverOf(call: CallSite): string | null {
  if (!call.callee || !call.method) return null;
  return call.callee.slice(0, call.callee.length - call.method.name.length - 1);
}

/** Last dotted segment. */
export function lastSegment(chain: string): string {
  return chain.slice(chain.lastIndexOf('.') + 1);
}

/** Line number (1-based) of an offset, for messages. */
export function lineOf(source: string, offset: number): number {
  let n = 1;
  for (let i = source.indexOf('\n'); i !== -1 && i < offset; i = source.indexOf('\n', i + 1)) n++;
  return n;
}

/**
 * A top-level `import x` (no alias) that makes `<module>` usable as a dotted prefix: the module
 * itself, a submodule of it, or a parent package (`import torch` serves `torch.optim`).
 */
export function importsModule(index: ScriptIndex, module: string): boolean {
  return index.imports.some(
    (i) =>
      i.topLevel &&
      i.kind === 'import' &&
      i.names.some((n) => !n.alias && (n.name === module || n.name.startsWith(`${module}.`) || module.startsWith(`${n.name}.`))),
  );
}

/** Whether `name` occurs in code other than as a keyword-argument name or attribute. */
export function usedAsName(index: ScriptIndex, name: string): boolean {
  return (index.namesByText.get(name) ?? []).some((o) => o.role !== 'keyword' && o.role !== 'property' && o.role !== 'module');
}

/** The top-level import statement that binds `root` (as `import root[...]` or `from x import root`). */
export function importBinding(index: ScriptIndex, root: string): ImportInfo | undefined {
  return index.imports.find(
    (i) => i.topLevel && i.names.some((n) => (n.alias ?? (i.kind === 'import' ? n.name.split('.')[0] : n.name)) === root),
  );
}

/**
 * An edit adding `line` as a new top-level line right after `anchor` (or after the last
 * top-level import, or at the top of the file after a docstring). The anchor's line must end it.
 */
export function insertLineAfter(index: ScriptIndex, line: string, anchor?: ImportInfo): TextEdit | undefined {
  const source = index.source;
  const after = anchor ?? [...index.imports].reverse().find((i) => i.topLevel);
  if (after) {
    if (!endsLine(source, after.to)) return undefined;
    const end = lineEndAt(source, after.to);
    return end < source.length ? { from: end + 1, to: end + 1, insert: `${line}\n` } : { from: end, to: end, insert: `\n${line}` };
  }
  return source.length === 0 || source.startsWith('#!') || /^\s*("""|''')/.test(source)
    ? undefined
    : { from: 0, to: 0, insert: `${line}\n` };
}

/** An edit removing the first top-level import statement whose whole line reads `line`. */
export function removeLineEdit(index: ScriptIndex, line: string): TextEdit | undefined {
  const source = index.source;
  for (const i of index.imports) {
    if (!i.topLevel) continue;
    const start = lineStartAt(source, i.from);
    const end = lineEndAt(source, i.to);
    if (start !== i.from || source.slice(start, end) !== line) continue;
    return end < source.length
      ? { from: start, to: end + 1, insert: '' }
      : start > 0
        ? { from: start - 1, to: end, insert: '' }
        : { from: start, to: end, insert: '' };
  }
  return undefined;
}
