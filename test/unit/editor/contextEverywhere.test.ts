// Lab and review take settings, Workspace Trust and the task corpus from ForgeContext
// (src/editor/context.ts), never by hand: a source scan, like the environment factory's.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';

const ROOT = join(__dirname, '..', '..', '..');
const FEATURES = ['lab', 'review'].map((d) => join(ROOT, 'src', 'editor', d));

/** What only the context does: read the settings, check trust, load the corpus. */
const BY_HAND: ReadonlyArray<{ name: string; pattern: RegExp }> = [
  { name: 'readSettings(', pattern: /\breadSettings\s*\(/ },
  { name: 'workspace.isTrusted', pattern: /workspace\s*\.\s*isTrusted\b/ },
  { name: 'loadCorpus(', pattern: /\bloadCorpus\s*\(/ },
  { name: 'resolveInterpreter(', pattern: /\bresolveInterpreter\s*\(/ },
  { name: 'getConfiguration(', pattern: /\bgetConfiguration\s*\(/ },
];

/** Allowed uses, each with the reason. */
const EXCEPTIONS: Record<string, { name: string; why: string }> = {
  'src/editor/lab/taskFolderChoice.ts': {
    name: 'getConfiguration(',
    why: 'writes forgeenv.taskFolders: it appends to the raw, unresolved list the user wrote, which the context does not keep',
  },
};

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? tsFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** Comments say what the code does not: a mention there is no read. */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

test('lab and review read settings, trust and the corpus through ForgeContext only', () => {
  const offenders: string[] = [];
  let scanned = 0;
  for (const dir of FEATURES) {
    for (const f of tsFiles(dir)) {
      scanned++;
      const rel = relative(ROOT, f).split('\\').join('/');
      const text = code(readFileSync(f, 'utf8'));
      for (const { name, pattern } of BY_HAND) {
        if (!pattern.test(text)) continue;
        if (EXCEPTIONS[rel]?.name === name) continue;
        offenders.push(`${rel}: ${name}`);
      }
    }
  }
  assert.ok(scanned > 20, `expected the lab and review sources, scanned ${scanned} files`);
  assert.deepEqual(
    offenders,
    [],
    'use ForgeContext (settings(), trusted / refuseUntrusted(), tasks(), takenTaskIds(), interpreter(), runOptions(), annotatorId(), labelTags())',
  );
});

test('each exception still exists and still needs its exception', () => {
  for (const [rel, { name }] of Object.entries(EXCEPTIONS)) {
    const f = join(ROOT, rel);
    assert.ok(existsSync(f), `${rel} is gone: drop its exception`);
    const pattern = BY_HAND.find((b) => b.name === name)!.pattern;
    assert.ok(pattern.test(code(readFileSync(f, 'utf8'))), `${rel} no longer uses ${name}: drop its exception`);
  }
});

test('the per-feature settings modules are gone', () => {
  for (const rel of ['src/editor/lab/labSettings.ts', 'src/editor/review/reviewSettings.ts']) {
    assert.equal(existsSync(join(ROOT, rel)), false, `${rel} came back: read settings through ForgeContext`);
  }
});

test('the scan catches a hand-made read (it is not vacuous)', () => {
  const sample = 'const s = readSettings().settings;\nif (!vscode.workspace.isTrusted) return;\nloadCorpus({ extraDirs: [] });';
  const hits = BY_HAND.filter((b) => b.pattern.test(code(sample))).map((b) => b.name);
  assert.deepEqual(hits, ['readSettings(', 'workspace.isTrusted', 'loadCorpus(']);
  assert.deepEqual(
    BY_HAND.filter((b) => b.pattern.test(code('// readSettings() is the context’s job'))),
    [],
  );
});
