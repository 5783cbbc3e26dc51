// Builds everything VS Code and the command line load, with esbuild:
//   dist/extension.js               the extension (one bundle; `vscode` is provided by the host)
//   dist/cli.js                     the `forgeenv` command line (when src/cli/main.ts exists)
//   dist/diffWorker.js              the worker thread that applies large repair diffs (src/env/diff/diffAsync.ts)
//   dist/scrubWorker.js             the worker thread that scrubs paths out of large run outputs (src/env/run/scrubAsync.ts)
//   dist/test/integration/*.js      the integration suites + their mocha entry (index.js)
// Resources (resources/tasks, resources/simlibs) are not copied: src/env/paths.ts finds them
// beside the extension root at run time.
//
// Usage: node scripts/build.mjs [--production] [--no-tests] [--no-cli] [--analyze] [--outdir DIR]
//   --outdir DIR: write the bundles there instead of dist/ (the Docker layout check builds into a scratch folder).
//   --analyze: also print what the extension bundle is made of (largest packages/folders).
//   --production (or NODE_ENV=production): minified bundles (source maps are always written).
import * as esbuild from 'esbuild';
import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const args = new Set(process.argv.slice(2));
const production = args.has('--production') || process.env.NODE_ENV === 'production';
const withTests = !args.has('--no-tests');
const withCli = !args.has('--no-cli');
const outArg = process.argv.indexOf('--outdir');
const out = outArg > 0 && process.argv[outArg + 1] ? resolve(process.argv[outArg + 1]) : join(root, 'dist');

rmSync(out, { recursive: true, force: true });

// zod's `z` namespace re-exports every locale (about 200 KiB minified) although only English
// is ever used (the default, which zod's schemas.js imports itself): bundle `z.locales.en` only.
const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(b) {
    // zod's classic entry and its core both re-export `../locales/index`.
    b.onResolve({ filter: /^\.\.\/locales\/index\.c?js$/ }, (a) =>
      /[\\/]zod[\\/]v4[\\/](classic|core)[\\/]/.test(a.importer)
        ? {
            path: 'en',
            namespace: 'zod-english-only',
            pluginData: { dir: join(dirname(a.importer), '..', 'locales'), cjs: a.path.endsWith('.cjs') },
          }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'zod-english-only' }, (a) => ({
      contents: a.pluginData.cjs ? "exports.en = require('./en.cjs').default;" : "export { default as en } from './en.js';",
      resolveDir: a.pluginData.dir,
      loader: 'js',
    }));
  },
};

const common = {
  absWorkingDir: root,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  sourcemap: true,
  minify: production,
  logLevel: 'warning',
  // Keeps `__dirname` meaningful (src/env/paths.ts walks up from it to find resources/).
  legalComments: 'none',
  plugins: [zodEnglishOnly],
};

const builds = [
  esbuild.build({
    ...common,
    entryPoints: ['src/extension.ts'],
    outfile: join(out, 'extension.js'),
    external: ['vscode'],
    metafile: true,
  }),
  // Beside extension.js and cli.js, where src/env/workerHost.ts looks for them (`__dirname`).
  esbuild.build({ ...common, entryPoints: ['src/env/diff/diffWorker.ts'], outfile: join(out, 'diffWorker.js') }),
  esbuild.build({ ...common, entryPoints: ['src/env/run/scrubWorker.ts'], outfile: join(out, 'scrubWorker.js') }),
];
if (withCli && existsSync(join(root, 'src/cli/main.ts'))) {
  builds.push(esbuild.build({ ...common, entryPoints: ['src/cli/main.ts'], outfile: join(out, 'cli.js') }));
}

function walk(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}
let testCount = 0;
if (withTests) {
  const dir = join(root, 'test/integration');
  const entries = walk(dir)
    .filter((f) => f.endsWith('.test.ts') || f === join(dir, 'index.ts'))
    .map((f) => relative(root, f));
  testCount = entries.length;
  if (entries.length) {
    // One output file per suite, so mocha loads each after it has installed its globals.
    builds.push(
      esbuild.build({
        ...common,
        minify: false,
        entryPoints: entries,
        outbase: 'test/integration',
        outdir: join(out, 'test', 'integration'),
        external: ['vscode', 'mocha', 'source-map-support'],
      }),
    );
  }
}

const [ext] = await Promise.all(builds);
const size = statSync(join(out, 'extension.js')).size;
const inputs = Object.keys(ext.metafile.inputs).length;
if (args.has('--analyze')) {
  const by = new Map();
  for (const out of Object.values(ext.metafile.outputs)) {
    for (const [input, { bytesInOutput }] of Object.entries(out.inputs)) {
      const parts = input.split('/');
      const key = parts[0] === 'node_modules' ? parts.slice(0, parts[1].startsWith('@') ? 3 : 2).join('/') : parts.slice(0, 3).join('/');
      by.set(key, (by.get(key) ?? 0) + bytesInOutput);
    }
  }
  for (const [k, v] of [...by].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(`${(v / 1024).toFixed(1).padStart(8)} KiB  ${k}`);
}
console.log(
  `built dist/extension.js (${(size / 1024).toFixed(1)} KiB, ${inputs} modules${production ? ', minified' : ''})` +
    (existsSync(join(out, 'cli.js')) ? ', dist/cli.js' : '') +
    (testCount ? `, ${testCount} integration files` : ''),
);
