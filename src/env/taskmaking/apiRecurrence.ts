// Whether a library API error a run raised at one snapshot would recur at another, read from the other
// snapshot's recorded API data (resources/snapshots/api): a keyword the class's recorded signature lacks, a
// name its module lacks, more positional arguments than a function takes. The snapshot fallback skips such a
// snapshot instead of spending a run on it, so that adding a snapshot between two that fail the same way does
// not push a working older one out of reach.
// Conservative: anything the data cannot tell (no signature, `**kwargs`, no such object) is "may not recur".
import { hasSnapshotApi, loadPackageApi, type PackageApi } from '../snapshots/api';
import { lastErrorLine } from './rules';
import { apiPresence, INFERENCE_LIBRARIES } from './snapshotInference';

const UNEXPECTED_KEYWORD = /TypeError: ([\w.]+)\.(\w+)\(\) got an unexpected keyword argument '(\w+)'/;
const CANNOT_IMPORT = /ImportError: cannot import name '(\w+)' from '([\w.]+)'/;
const MODULE_LACKS = /AttributeError: module '([\w.]+)' has no attribute '(\w+)'/;
const OBJECT_LACKS = /AttributeError: '(\w+)' object has no attribute '(\w+)'/;
const TOO_MANY_POSITIONAL = /TypeError: (\w+)\(\) takes (?:from \d+ to )?(\d+) positional arguments? but (\d+) (?:were|was) given/;

/**
 * The most positional arguments each recorded module-level function named `qualname` takes in one package's data
 * (Infinity with `*args`); empty when none is recorded.
 */
function positionalLimits(api: PackageApi, qualname: string): number[] {
  const out: number[] = [];
  for (const obj of Object.values(api.objects)) {
    if (obj.kind !== 'function' || obj.qualname !== qualname || !obj.signature) continue;
    out.push(obj.signature.some((p) => p[1] === '*') ? Infinity : obj.signature.filter((p) => p[1] === 'p' || p[1] === 'pk').length);
  }
  return out;
}

/**
 * Whether a dataclass named `qualname` (a config the script parses: trl's ModelConfig, SFTConfig) lacks `attr` in one
 * package's data: its fields are its recorded __init__ parameters; undefined when no such dataclass is recorded
 * (other classes set attributes in __init__, which the data does not list).
 */
function dataclassLacks(api: PackageApi, qualname: string, attr: string): boolean | undefined {
  let seen = false;
  for (const obj of Object.values(api.objects)) {
    if (obj.kind !== 'class' || obj.qualname !== qualname || !obj.dataclass || !obj.init) continue;
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
  for (const obj of Object.values(api.objects)) {
    if (obj.kind !== 'class' || obj.qualname !== classQualname) continue;
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

/**
 * True when the data of snapshot `id` shows that the error ending `output` (a run's traceback), raised by the
 * script's own call or import, would be raised there too.
 */
export function apiErrorRecursAt(output: string, id: string): boolean {
  if (!hasSnapshotApi(id)) return false;
  const error = lastErrorLine(output);
  const kw = UNEXPECTED_KEYWORD.exec(error);
  if (kw) {
    if (!raisedInScript(output, kw[0])) return false;
    const [, cls, method, keyword] = kw;
    const found = INFERENCE_LIBRARIES.flatMap((pkg) => methodParams(loadPackageApi(id, pkg), cls, method) ?? []);
    if (!found.length) return false;
    // Every recorded class of that name refuses the keyword: no parameter of that name, no `**kwargs`.
    return found.every((sig) => !sig.some(([name, kind]) => kind === '**' || (name === keyword && (kind === 'pk' || kind === 'k'))));
  }
  const positional = TOO_MANY_POSITIONAL.exec(error);
  if (positional) {
    if (!raisedInScript(output, positional[0])) return false;
    const given = Number(positional[3]);
    const limits = INFERENCE_LIBRARIES.flatMap((pkg) => positionalLimits(loadPackageApi(id, pkg), positional[1]));
    // Every recorded function of that name takes fewer than the script passes (a parameter a later release added).
    return limits.length > 0 && limits.every((n) => n < given);
  }
  const lacks = OBJECT_LACKS.exec(error);
  if (lacks) {
    if (!raisedInScript(output, lacks[0])) return false;
    const found = INFERENCE_LIBRARIES.map((pkg) => dataclassLacks(loadPackageApi(id, pkg), lacks[1], lacks[2])).filter(
      (x): x is boolean => x !== undefined,
    );
    return found.length > 0 && found.every(Boolean);
  }
  const imp = CANNOT_IMPORT.exec(error);
  const attr = imp ? undefined : MODULE_LACKS.exec(error);
  const hit = imp ?? attr;
  if (!hit || !raisedInScript(output, hit[0])) return false;
  const [module, name] = imp ? [imp[2], imp[1]] : [hit[1], hit[2]];
  const pkg = module.split('.')[0];
  if (!(INFERENCE_LIBRARIES as readonly string[]).includes(pkg)) return false;
  return apiPresence(loadPackageApi(id, pkg), { module, name, line: 0 }) === 'absent';
}

/**
 * True when the data of snapshot `id` shows the script's failing call or import, the error ending `output`, accepted
 * there: the keyword is a parameter of every recorded class of that name, every recorded function of that name takes
 * that many positional arguments, the imported name exists. Used to name where a call works when no snapshot has
 * the script's other imports too (`api-in-no-snapshot`); undefined data is "cannot tell" (false).
 */
export function apiErrorFixedAt(output: string, id: string): boolean {
  if (!hasSnapshotApi(id)) return false;
  const error = lastErrorLine(output);
  const kw = UNEXPECTED_KEYWORD.exec(error);
  if (kw) {
    const [, cls, method, keyword] = kw;
    const found = INFERENCE_LIBRARIES.flatMap((pkg) => methodParams(loadPackageApi(id, pkg), cls, method) ?? []);
    return found.length > 0 && found.every((sig) => sig.some(([name, kind]) => name === keyword && (kind === 'pk' || kind === 'k')));
  }
  const positional = TOO_MANY_POSITIONAL.exec(error);
  if (positional) {
    const limits = INFERENCE_LIBRARIES.flatMap((pkg) => positionalLimits(loadPackageApi(id, pkg), positional[1]));
    return limits.length > 0 && limits.every((n) => n >= Number(positional[3]));
  }
  const imp = CANNOT_IMPORT.exec(error);
  if (!imp) return false;
  const pkg = imp[2].split('.')[0];
  if (!(INFERENCE_LIBRARIES as readonly string[]).includes(pkg)) return false;
  return apiPresence(loadPackageApi(id, pkg), { module: imp[2], name: imp[1], line: 0 }) === 'present';
}
