// Whether a library API error a run raised at one snapshot would recur at another, read from the other
// snapshot's recorded API data (resources/snapshots/api): a keyword the class's recorded signature lacks, a
// name its module lacks, more positional arguments than a function takes. The snapshot fallback skips such a
// snapshot instead of spending a run on it, so that adding a snapshot between two that fail the same way does
// not push a working older one out of reach.
// Conservative: anything the data cannot tell (no signature, `**kwargs`, no such object) is "may not recur".
import { hasSnapshotApi, loadPackageApi, type ClassInfo, type FunctionInfo, type PackageApi } from '../snapshots/api';
import { lastErrorLine } from './rules';
import { apiPresence, INFERENCE_LIBRARIES } from './snapshotInference';

const UNEXPECTED_KEYWORD = /TypeError: ([\w.]+)\.(\w+)\(\) got an unexpected keyword argument '(\w+)'/;
const CANNOT_IMPORT = /ImportError: cannot import name '(\w+)' from '([\w.]+)'/;
const MODULE_LACKS = /AttributeError: module '([\w.]+)' has no attribute '(\w+)'/;
const OBJECT_LACKS = /AttributeError: '(\w+)' object has no attribute '(\w+)'/;
const TOO_MANY_POSITIONAL = /TypeError: (\w+)\(\) takes (?:from \d+ to )?(\d+) positional arguments? but (\d+) (?:were|was) given/;

/** The recorded classes (or functions) named `qualname` in one package's data, in every module that defines one. */
function recordedNamed(api: PackageApi, kind: 'class', qualname: string): ClassInfo[];
function recordedNamed(api: PackageApi, kind: 'function', qualname: string): FunctionInfo[];
function recordedNamed(api: PackageApi, kind: 'class' | 'function', qualname: string): Array<ClassInfo | FunctionInfo> {
  return Object.values(api.objects).filter((o) => o.kind === kind && o.qualname === qualname);
}

/**
 * The most positional arguments each recorded module-level function named `qualname` takes in one package's data
 * (Infinity with `*args`); empty when none is recorded.
 */
function positionalLimits(api: PackageApi, qualname: string): number[] {
  return recordedNamed(api, 'function', qualname).flatMap(({ signature }) =>
    !signature ? [] : [signature.some((p) => p[1] === '*') ? Infinity : signature.filter((p) => p[1] === 'p' || p[1] === 'pk').length],
  );
}

/**
 * Whether a dataclass named `qualname` (a config the script parses: trl's ModelConfig, SFTConfig) lacks `attr` in one
 * package's data: its fields are its recorded __init__ parameters; undefined when no such dataclass is recorded
 * (other classes set attributes in __init__, which the data does not list).
 */
function dataclassLacks(api: PackageApi, qualname: string, attr: string): boolean | undefined {
  let seen = false;
  for (const obj of recordedNamed(api, 'class', qualname)) {
    if (!obj.dataclass || !obj.init) continue;
    seen = true;
    const has =
      obj.init.some((p) => p[0] === attr) ||
      attr in obj.methods ||
      obj.classmethods.includes(attr) ||
      obj.properties.includes(attr) ||
      obj.attributes.includes(attr);
    if (has) return false;
  }
  return seen ? true : undefined;
}

/** The signature params of `Class.method` (or `Class.__init__`) in one package's data; undefined when not recorded. */
type Params = [name: string, kind: string][];

function methodParams(api: PackageApi, classQualname: string, method: string): Params[] | undefined {
  const out: Params[] = [];
  for (const obj of recordedNamed(api, 'class', classQualname)) {
    const sig = method === '__init__' ? obj.init : obj.methods[method];
    if (!sig) return undefined; // not recorded (or a builtin): cannot tell
    out.push(sig.map((p): [string, string] => [p[0], p[1]]));
  }
  return out.length ? out : undefined;
}

/**
 * The frame that raised `errorLine` in a traceback `output`: its last `File "…"` line before the error. A frame in
 * an installed package means the script did not make the failing call or import itself (a keyword from_pretrained
 * passes on to a model's __init__), which the recorded signatures do not describe.
 */
function raisedInScript(output: string, errorLine: string): boolean {
  const lines = output.split('\n');
  let at = lines.length - 1;
  while (at >= 0 && !lines[at].includes(errorLine)) at--;
  const frame = lines
    .slice(0, Math.max(at, 0))
    .reverse()
    .find((l) => /^\s*File "/.test(l));
  return !!frame && !/site-packages|dist-packages/.test(frame);
}

/** A library API error a run ended on, as the recorded API data can judge it. */
type ApiError =
  | { kind: 'keyword'; line: string; cls: string; method: string; keyword: string }
  | { kind: 'positional'; line: string; fn: string; given: number }
  | { kind: 'attribute'; line: string; cls: string; attr: string }
  | { kind: 'import'; line: string; module: string; name: string; from: 'import' | 'module' };

/**
 * A class's own or inherited member `attr` in snapshot `id`'s data: an `__init__` parameter (a config stores its
 * keywords as attributes), a method, a property, a class attribute or an Enum member; bases are followed through
 * every inference library's objects. Positive evidence only: instance attributes set in code are not recorded.
 */
function classHas(id: string, qualname: string, attr: string): boolean | undefined {
  const apis = hasSnapshotApi(id) ? INFERENCE_LIBRARIES.map((pkg) => loadPackageApi(id, pkg)) : [];
  const byKey = (key: string) => apis.map((a) => a.objects[key]).find((o): o is ClassInfo => o?.kind === 'class');
  const has = (obj: ClassInfo, seen: Set<string>): boolean =>
    !!obj.init?.some((p) => p[0] === attr && (p[1] === 'pk' || p[1] === 'k')) ||
    attr in obj.methods ||
    obj.classmethods.includes(attr) ||
    obj.properties.includes(attr) ||
    obj.attributes.includes(attr) ||
    obj.bases.some((b) => {
      if (seen.has(b)) return false;
      seen.add(b);
      const base = byKey(b);
      return !!base && has(base, seen);
    });
  const found = apis.flatMap((a) => recordedNamed(a, 'class', qualname));
  if (!found.length) return undefined;
  return found.every((o) => has(o, new Set())) ? true : undefined;
}

// A bare `AttributeError: TPU` (an Enum member a release removed): the class is read from the script's failing line.
const BARE_ATTRIBUTE = /AttributeError: ([A-Za-z_]\w*)(?:\. Did you mean: '\w+'\?)?$/;

/**
 * The class whose member `attr` the script read: `X` of `X.attr` on the source line of the nearest traceback frame
 * that reads it (frame paths may be scrubbed, so the line, not the path, decides).
 */
function memberOwner(output: string, attr: string): string | undefined {
  const lines = output.split('\n');
  const read = new RegExp(`\\b([A-Za-z_]\\w*)\\.${attr}\\b`);
  for (let i = lines.length - 2; i >= 0; i--) {
    if (!/^\s*File "/.test(lines[i])) continue;
    const m = read.exec(lines[i + 1] ?? '');
    if (m) return m[1];
  }
  return undefined;
}

function apiErrorOf(error: string, output = ''): ApiError | undefined {
  const kw = UNEXPECTED_KEYWORD.exec(error);
  if (kw) return { kind: 'keyword', line: kw[0], cls: kw[1], method: kw[2], keyword: kw[3] };
  const positional = TOO_MANY_POSITIONAL.exec(error);
  if (positional) return { kind: 'positional', line: positional[0], fn: positional[1], given: Number(positional[3]) };
  const lacks = OBJECT_LACKS.exec(error);
  if (lacks) return { kind: 'attribute', line: lacks[0], cls: lacks[1], attr: lacks[2] };
  const imp = CANNOT_IMPORT.exec(error);
  if (imp) return { kind: 'import', line: imp[0], module: imp[2], name: imp[1], from: 'import' };
  const attr = MODULE_LACKS.exec(error);
  if (attr) return { kind: 'import', line: attr[0], module: attr[1], name: attr[2], from: 'module' };
  const bare = BARE_ATTRIBUTE.exec(error);
  const owner = bare ? memberOwner(output, bare[1]) : undefined;
  if (bare && owner) return { kind: 'attribute', line: bare[0], cls: owner, attr: bare[1] };
  return undefined;
}

/**
 * What snapshot `id`'s recorded API says of the failing call or import: every record of it refuses it, every
 * record accepts it, or undefined (not recorded, `**kwargs` without the keyword, records that disagree).
 */
function recordedAt(e: ApiError, id: string): 'refused' | 'accepted' | undefined {
  const all = <T>(found: T[], refuses: (x: T) => boolean, accepts: (x: T) => boolean) =>
    !found.length ? undefined : found.every(refuses) ? 'refused' : found.every(accepts) ? 'accepted' : undefined;
  switch (e.kind) {
    case 'keyword': {
      const found = INFERENCE_LIBRARIES.flatMap((pkg) => methodParams(loadPackageApi(id, pkg), e.cls, e.method) ?? []);
      const has = (sig: Params) => sig.some(([name, kind]) => name === e.keyword && (kind === 'pk' || kind === 'k'));
      return all(
        found,
        (sig) => !has(sig) && !sig.some(([, kind]) => kind === '**'),
        (sig) => has(sig),
      );
    }
    case 'positional': {
      // Fewer than the script passes: a parameter a later release added.
      const limits = INFERENCE_LIBRARIES.flatMap((pkg) => positionalLimits(loadPackageApi(id, pkg), e.fn));
      return all(
        limits,
        (n) => n < e.given,
        (n) => n >= e.given,
      );
    }
    case 'attribute': {
      const found = INFERENCE_LIBRARIES.map((pkg) => dataclassLacks(loadPackageApi(id, pkg), e.cls, e.attr)).filter(
        (x): x is boolean => x !== undefined,
      );
      return (
        all(
          found,
          (lacks) => lacks,
          (lacks) => !lacks,
        ) ?? (classHas(id, e.cls, e.attr) ? 'accepted' : undefined)
      );
    }
    case 'import': {
      const pkg = e.module.split('.')[0];
      if (!(INFERENCE_LIBRARIES as readonly string[]).includes(pkg)) return undefined;
      const presence = apiPresence(loadPackageApi(id, pkg), { module: e.module, name: e.name, line: 0 });
      return presence === 'absent' ? 'refused' : presence === 'present' ? 'accepted' : undefined;
    }
  }
}

/**
 * True when the data of snapshot `id` shows that the error ending `output` (a run's traceback), raised by the
 * script's own call or import, would be raised there too.
 */
export function apiErrorRecursAt(output: string, id: string): boolean {
  if (!hasSnapshotApi(id)) return false;
  const e = apiErrorOf(lastErrorLine(output), output);
  return !!e && raisedInScript(output, e.line) && recordedAt(e, id) === 'refused';
}

/**
 * True when the data of snapshot `id` shows the script's failing call or import, the error ending `output`, accepted
 * there: the keyword is a parameter of every recorded class of that name, every recorded function of that name takes
 * that many positional arguments, the imported name exists. Used to name where a call works when no snapshot has
 * the script's other imports too (`api-in-no-snapshot`); undefined data is "cannot tell" (false).
 */
export function apiErrorFixedAt(output: string, id: string): boolean {
  if (!hasSnapshotApi(id)) return false;
  const e = apiErrorOf(lastErrorLine(output));
  // An attribute a class or module lacks at run time says nothing of a call being accepted elsewhere.
  if (!e || e.kind === 'attribute' || (e.kind === 'import' && e.from === 'module')) return false;
  return recordedAt(e, id) === 'accepted';
}

/** A library API error of the script's own call, import or attribute, as the recorded API data can judge it. */
export interface ApiNeed {
  /** The error line it came from. */
  line: string;
  /** What the script needs, in words: `get_parameter_names() with 3 positional arguments`, `DistributedType.TPU`. */
  needs: string;
  /** The inference libraries whose recorded data describes the failing call's subject (the library to change). */
  library: (id: string) => string | undefined;
  /** The recorded API of snapshot (or derived environment) `id` accepts it. */
  acceptedAt: (id: string) => boolean;
}

/** The library API need behind the error ending `output` (a run's traceback), when the recorded data can judge it. */
export function apiNeedOf(output: string): ApiNeed | undefined {
  const e = apiErrorOf(lastErrorLine(output), output);
  if (!e || (e.kind !== 'attribute' && !raisedInScript(output, e.line))) return undefined;
  const needs =
    e.kind === 'keyword'
      ? `${e.cls}.${e.method}(${e.keyword}=)`
      : e.kind === 'positional'
        ? `${e.fn}() with ${e.given} positional arguments`
        : e.kind === 'attribute'
          ? `${e.cls}.${e.attr}`
          : `${e.module}.${e.name}`;
  const subject = e.kind === 'keyword' || e.kind === 'attribute' ? e.cls : e.kind === 'positional' ? e.fn : undefined;
  return {
    line: e.line,
    needs,
    acceptedAt: (id) => hasSnapshotApi(id) && recordedAt(e, id) === 'accepted',
    library: (id) =>
      e.kind === 'import'
        ? e.module.split('.')[0]
        : INFERENCE_LIBRARIES.find(
            (pkg) => hasSnapshotApi(id) && Object.values(loadPackageApi(id, pkg).objects).some((o) => o.qualname === subject),
          ),
  };
}
