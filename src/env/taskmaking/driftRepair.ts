// A known repair of a natural drift (issue 20 item 3: "solved once a repair makes it run there").
// From the real error a run printed, the drift it names is identified in the drift catalog
// (resources/drifts/catalog.json) and the catalog's own old -> new forms give the script edit:
//   - "cannot import name 'X' from 'M'": the catalog's new form imports X from elsewhere (moved), binds
//     it to an expression (`import evaluate; load = evaluate.load`), or imports one renamed name;
//   - "C() got an unexpected keyword argument 'k'": the catalog's new form renames k (the keyword its
//     new form adds) or drops it (removed_kwarg), in the script's calls to C.
// Two repairs need no catalog entry because the error states them: an enum value a release dropped
// ("x is not a valid Y, please select one of [...]": the first valid value replaces the literal), and
// a removed name the script only calls for its side effect (telemetry): the import and the calls go.
// Nothing here is keyed on a script; a step that finds no edit returns undefined ("no known repair").
import { loadDriftCatalog, type DriftCatalog, type DriftEntry } from '../fidelity/catalog';
import { parsePython } from '../python/parse';
import { indexScript, type CallSite, type ImportInfo, type ScriptIndex } from '../python/scriptIndex';

export interface DriftRepairStep {
  /** The edited script. */
  script: string;
  /** The catalog entry the edit comes from; undefined when the error itself states the repair. */
  drift_id?: string;
  /** One line: what changed. */
  change: string;
}

interface Edit {
  from: number;
  to: number;
  insert: string;
}

const PY_WORDS = new Set(
  'False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield print len str int dict list set tuple isinstance hasattr getattr'.split(
    ' ',
  ),
);

/** The first known repair of `error` in `script`, or undefined. */
export function driftRepairStep(script: string, error: string, catalog: DriftCatalog = loadDriftCatalog()): DriftRepairStep | undefined {
  const parsed = parsePython(script);
  if (parsed.problem) return undefined;
  const index = indexScript(parsed);
  return (
    importRepair(index, error, catalog) ??
    keywordRepair(index, error, catalog) ??
    overrideRepair(index, error, catalog) ??
    enumRepair(index, error) ??
    sideEffectRemoval(index, error)
  );
}

function applyEdits(source: string, edits: Edit[]): string {
  let out = source;
  for (const e of [...edits].sort((a, b) => b.from - a.from)) out = out.slice(0, e.from) + e.insert + out.slice(e.to);
  return out;
}

const indexOf = (code: string): ScriptIndex | undefined => {
  const p = parsePython(code);
  return p.problem ? undefined : indexScript(p);
};
const topModule = (m: string) => m.split('.')[0];
const importedText = (n: { name: string; alias?: string }) => (n.alias ? `${n.name} as ${n.alias}` : n.name);
const indentAt = (source: string, offset: number) => /^[ \t]*/.exec(source.slice(source.lastIndexOf('\n', offset - 1) + 1))![0];

/** The script's `from M import ... X ...` statements for the module the error names (or one of its library). */
function importsOf(index: ScriptIndex, name: string, module: string): ImportInfo[] {
  const fromIt = index.imports.filter((i) => i.kind === 'from' && i.module && i.names.some((n) => n.name === name));
  const exact = fromIt.filter((i) => i.module === module);
  return exact.length ? exact : fromIt.filter((i) => topModule(i.module!) === topModule(module));
}

/** "cannot import name 'X' from 'M'": the catalog's new form of the import. */
function importRepair(index: ScriptIndex, error: string, catalog: DriftCatalog): DriftRepairStep | undefined {
  const m = /cannot import name '(\w+)' from '([\w.]+)'/.exec(error);
  if (!m) return undefined;
  const [, name, module] = m as unknown as [string, string, string];
  const sites = importsOf(index, name, module);
  if (!sites.length) return undefined;
  for (const entry of catalog.entries) {
    if (!['moved_import', 'removed_name', 'renamed_name', 'replaced_api'].includes(entry.kind)) continue;
    const oldIdx = indexOf(entry.old);
    const newIdx = indexOf(entry.new);
    if (!oldIdx || !newIdx) continue;
    const oldImport = oldIdx.imports.find(
      (i) => i.kind === 'from' && i.module && topModule(i.module) === topModule(module) && i.names.some((n) => n.name === name),
    );
    if (!oldImport) continue;
    const replacement = newBinding(newIdx, name, oldImport);
    if (!replacement) continue;
    const edits = sites.map((imp): Edit => {
      const n = imp.names.find((x) => x.name === name)!;
      const bound = n.alias ?? name;
      const rest = imp.names.filter((x) => x !== n);
      const indent = indentAt(index.source, imp.from);
      const lines = [...(rest.length ? [`from ${imp.module} import ${rest.map(importedText).join(', ')}`] : []), ...replacement(bound)];
      return { from: imp.from, to: imp.to, insert: lines.join(`\n${indent}`) };
    });
    return {
      script: applyEdits(index.source, edits),
      drift_id: entry.id,
      change: `${name} (gone from ${module}): ${replacement(name).join('; ')} (${entry.id})`,
    };
  }
  return undefined;
}

/** How the catalog's new form binds the old name: lines that bind `bound` to it, or undefined. */
function newBinding(newIdx: ScriptIndex, name: string, oldImport: ImportInfo): ((bound: string) => string[]) | undefined {
  const src = newIdx.source;
  const line = (bound: string, n: { name: string }) => (bound === n.name ? n.name : `${n.name} as ${bound}`);
  // Moved: the new form imports the same name from another module.
  const moved = newIdx.imports.find((i) => i.kind === 'from' && i.module && i.names.some((n) => n.name === name));
  if (moved) return (bound) => [`from ${moved.module} import ${line(bound, { name })}`];
  // Renamed: one name imported for one name.
  const fromImports = newIdx.imports.filter((i) => i.kind === 'from' && i.module);
  if (oldImport.names.length === 1 && fromImports.length === 1 && fromImports[0].names.length === 1) {
    const to = fromImports[0];
    return (bound) => [`from ${to.module} import ${line(bound, to.names[0])}`];
  }
  // Bound to an expression: `import evaluate` then `load = evaluate.load`.
  const assignment = /^([A-Za-z_]\w*)\s*=\s*([A-Za-z_][\w.]*)\s*$/m.exec(src);
  const plain = newIdx.imports.filter((i) => i.kind === 'import');
  if (
    assignment &&
    plain.length &&
    plain.some((i) => i.names.some((n) => assignment[2].startsWith(`${n.alias ?? n.name}.`) || assignment[2] === (n.alias ?? n.name)))
  ) {
    const imports = plain.map((i) => src.slice(i.from, i.to));
    return (bound) => [...imports, `${bound} = ${assignment[2]}`];
  }
  return undefined;
}

/** "C() got an unexpected keyword argument 'k'": the catalog's new keyword, or none (removed). */
function keywordRepair(index: ScriptIndex, error: string, catalog: DriftCatalog): DriftRepairStep | undefined {
  const m = /(?:(\w+)\.)?(\w+)\(\) got an unexpected keyword argument '(\w+)'/.exec(error);
  if (!m) return undefined;
  const callee = m[2] === '__init__' && m[1] ? m[1] : m[2];
  const keyword = m[3];
  const entries = catalog.entries
    .filter((e) => ['renamed_kwarg', 'replaced_kwarg', 'removed_kwarg'].includes(e.kind) && new RegExp(`\\(${keyword}=\\)`).test(e.api))
    // The entry on the class the error names first, then the others on the same keyword (a family's rename).
    .sort((a, b) => Number(b.api.includes(`${callee}(`)) - Number(a.api.includes(`${callee}(`)));
  const calls = callsWithKeyword(index, keyword, callee);
  if (!calls.length) return undefined;
  for (const entry of entries) {
    const renamed = entry.kind === 'removed_kwarg' ? null : newKeyword(entry, keyword);
    if (renamed === undefined) continue;
    const edits = calls.flatMap((c): Edit[] => {
      const arg = c.args.find((a) => a.kind === 'keyword' && a.name === keyword)!;
      const clash = renamed !== null && c.args.some((a) => a.kind === 'keyword' && a.name === renamed);
      if (renamed !== null && !clash) return [{ from: arg.nameFrom!, to: arg.nameTo!, insert: renamed }];
      return [removal(index.source, c, arg)];
    });
    return {
      script: applyEdits(index.source, edits),
      drift_id: entry.id,
      change: `${callee}(${keyword}=) ${renamed ? `renamed ${renamed}=` : 'removed'} (${entry.id})`,
    };
  }
  return undefined;
}

/**
 * "C.m() got an unexpected keyword argument 'k'" where the script defines m (an override of a library
 * hook the release now calls with k): the catalog's new form of m's def gives k and its default, which
 * the script's def gains.
 */
function overrideRepair(index: ScriptIndex, error: string, catalog: DriftCatalog): DriftRepairStep | undefined {
  const m = /(\w+)\.(\w+)\(\) got an unexpected keyword argument '(\w+)'/.exec(error);
  if (!m || m[2] === '__init__') return undefined;
  const [, , method, keyword] = m as unknown as [string, string, string, string];
  const paramText = (f: { from: number }) => {
    const open = index.source.indexOf('(', f.from);
    return index.source.slice(open, closingParen(index.source, open) + 1);
  };
  // A def that already takes k, or any keyword (**kwargs), is not this drift.
  const defs = index.functions.filter((f) => f.name === method && !f.params.includes(keyword) && !paramText(f).includes('**'));
  if (!defs.length) return undefined;
  for (const entry of catalog.entries.filter((e) => e.api.endsWith(`.${method}(${keyword}=)`))) {
    const def = new RegExp(`def ${method}\\(([^)]*)\\)`).exec(entry.new);
    const param = def && new RegExp(`\\b${keyword}\\s*(?::[^=,]+)?=\\s*([^,)]+)`).exec(def[1]);
    if (!param) continue;
    const edits = defs.flatMap((f): Edit[] => {
      const close = closingParen(index.source, index.source.indexOf('(', f.from));
      if (close < 0) return [];
      let before = close - 1;
      while (/\s/.test(index.source[before])) before--;
      return [
        {
          from: before + 1,
          to: before + 1,
          insert: `${index.source[before] === ',' || index.source[before] === '(' ? ' ' : ', '}${keyword}=${param[1].trim()}`,
        },
      ];
    });
    if (!edits.length) return undefined;
    return { script: applyEdits(index.source, edits), drift_id: entry.id, change: `def ${method}(...) accepts ${keyword}= (${entry.id})` };
  }
  return undefined;
}

/** The offset of the `)` closing the `(` at `open`, or -1. */
function closingParen(source: string, open: number): number {
  if (open < 0) return -1;
  let depth = 0;
  for (let i = open; i < source.length; i++) {
    if (source[i] === '(') depth++;
    else if (source[i] === ')' && --depth === 0) return i;
  }
  return -1;
}

/** The calls of `callee` passing `keyword`; when none is by that name (an alias, a subclass), the one call passing it. */
function callsWithKeyword(index: ScriptIndex, keyword: string, callee: string): CallSite[] {
  const passing = index.calls.filter((c) => c.args.some((a) => a.kind === 'keyword' && a.name === keyword));
  const named = passing.filter((c) => c.callee?.split('.').pop() === callee);
  return named.length ? named : passing.length === 1 ? passing : [];
}

/** The keyword argument and its comma, removed from the call. */
function removal(source: string, call: CallSite, arg: CallSite['args'][number]): Edit {
  if (arg.commaAfter !== undefined) {
    let to = arg.commaAfter + 1;
    while (to < call.closeParen && /[ \t]/.test(source[to])) to++;
    return { from: arg.from, to, insert: '' };
  }
  const i = call.args.indexOf(arg);
  const prev = call.args[i - 1];
  return { from: prev?.commaAfter ?? arg.from, to: arg.to, insert: '' };
}

/**
 * The keyword the catalog's new form uses instead of `keyword`: the one its call gains where the old
 * form's call has `keyword`, else the one identifier only the new form has. Undefined: not derivable.
 */
export function newKeyword(entry: Pick<DriftEntry, 'old' | 'new'>, keyword: string): string | undefined {
  const oldIdx = indexOf(entry.old);
  const newIdx = indexOf(entry.new);
  if (oldIdx && newIdx) {
    for (const call of oldIdx.calls.filter((c) => c.args.some((a) => a.kind === 'keyword' && a.name === keyword))) {
      const kw = (c: CallSite) => new Set(c.args.filter((a) => a.kind === 'keyword').map((a) => a.name!));
      const before = kw(call);
      const after = newIdx.calls.filter((c) => c.callee === call.callee).map((c) => [...kw(c)].filter((k) => !before.has(k)));
      const gained = after.find((g) => g.length === 1);
      if (gained) return gained[0];
    }
  }
  const words = (s: string) => new Set(s.match(/[A-Za-z_]\w*/g) ?? []);
  const before = words(entry.old);
  const only = [...words(entry.new)].filter((w) => !before.has(w) && !PY_WORDS.has(w) && !w.startsWith('__'));
  return only.length === 1 ? only[0] : undefined;
}

/** "x is not a valid Y, please select one of ['a', ...]": the script's literal x becomes the first valid value. */
function enumRepair(index: ScriptIndex, error: string): DriftRepairStep | undefined {
  const m = /(\S+) is not a valid (\w+), please select one of \[([^\]]*)/.exec(error); // the list may be cut short
  if (!m) return undefined;
  const bad = m[1].replace(/^['"]|['"]$/g, '');
  const first = /['"]([^'"]+)['"]/.exec(m[3])?.[1];
  if (!first) return undefined;
  const literals = index.strings.filter((s) => s.plain && s.raw === bad);
  if (!literals.length) return undefined;
  const edits = literals.map((s): Edit => ({ from: s.contentFrom, to: s.contentTo, insert: first }));
  return {
    script: applyEdits(index.source, edits),
    change: `${m[2]} value "${bad}" (no longer valid) -> "${first}", the first value the error lists`,
  };
}

/**
 * "cannot import name 'X'" where the script only calls X for its side effect (each use a bare call
 * statement, e.g. telemetry): the import of X and those calls go, the behaviour the script relies on
 * being unchanged. Any other use of X (a value, an argument) is not this case.
 */
function sideEffectRemoval(index: ScriptIndex, error: string): DriftRepairStep | undefined {
  const m = /cannot import name '(\w+)' from '([\w.]+)'/.exec(error);
  if (!m) return undefined;
  const [, name, module] = m as unknown as [string, string, string];
  const sites = importsOf(index, name, module);
  const bound = new Set(sites.map((i) => i.names.find((n) => n.name === name)!).map((n) => n.alias ?? name));
  if (!sites.length || bound.size !== 1) return undefined;
  const local = [...bound][0];
  const uses = (index.namesByText.get(local) ?? []).filter((o) => o.role === 'name');
  const calls = index.calls.filter((c) => c.callee === local);
  const statement = (c: CallSite) => c.node.parent?.name === 'ExpressionStatement';
  if (!uses.length || uses.length !== calls.length || !calls.every(statement)) return undefined;
  const edits: Edit[] = [
    ...calls.map((c) => ({ from: c.from, to: c.to, insert: 'pass' })),
    ...sites.map((imp) => {
      const rest = imp.names.filter((x) => x.name !== name);
      return {
        from: imp.from,
        to: imp.to,
        insert: rest.length ? `from ${imp.module} import ${rest.map(importedText).join(', ')}` : 'pass',
      };
    }),
  ];
  return {
    script: applyEdits(index.source, edits),
    change: `${name} (gone from ${module}) was only called for its side effect: its import and ${calls.length} call(s) removed`,
  };
}
