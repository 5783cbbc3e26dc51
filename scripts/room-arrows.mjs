// Prints the import arrows between rooms (src/env/<room>, src/store, src/cli, src/editor/<feature>) with counts:
// `node scripts/room-arrows.mjs` (docs/architecture.md).
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, dirname, posix } from 'node:path';
const files = [];
(function walk(d) {
  for (const e of readdirSync(d)) {
    const p = join(d, e);
    statSync(p).isDirectory() ? walk(p) : p.endsWith('.ts') && files.push(p);
  }
})('src');
const room = (f) => {
  const p = f.split('/');
  if (p[1] === 'env') return p.length > 3 ? `env/${p[2]}` : 'env (root)';
  if (p[1] === 'editor') return p.length > 3 ? `editor/${p[2]}` : 'editor (root)';
  if (p[1] === 'store') return 'store';
  if (p[1] === 'cli') return 'cli';
  return p[1];
};
const edges = new Map();
for (const f of files)
  for (const m of readFileSync(f, 'utf8').matchAll(/from\s+'(\.[^']+)'/g)) {
    const t = posix.normalize(posix.join(dirname(f), m[1]));
    const a = room(f),
      b = room(t + '.ts');
    if (a !== b) edges.set(`${a} -> ${b}`, (edges.get(`${a} -> ${b}`) ?? 0) + 1);
  }
console.log(
  [...edges]
    .sort()
    .map(([k, v]) => `${k} (${v})`)
    .join('\n'),
);
