// Lays out a folder `openenv push` accepts (openenv-core's validate_env_structure): the Python
// client at its root (__init__.py, client.py, models.py, pyproject.toml), openenv.yaml, a README
// with a Hugging Face Space's front matter (Docker SDK, port 8000), the Dockerfile and the build
// context it copies (tracked files only; tests, benches and docs stay out).
// usage: node scripts/openenv-stage.mjs OUT_DIR     then: cd OUT_DIR && openenv push
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const out = process.argv[2] ? resolve(process.argv[2]) : undefined;
if (!out) {
  console.error('usage: node scripts/openenv-stage.mjs OUT_DIR');
  process.exit(2);
}
if (existsSync(out) && readdirSync(out).length > 0) {
  console.error(`${out} is not empty: give a new or empty folder`);
  process.exit(2);
}
mkdirSync(out, { recursive: true });

// The Docker build context: what the Dockerfile copies and builds from.
const CONTEXT = ['package.json', 'package-lock.json', 'tsconfig.json', 'Dockerfile', 'LICENSE', 'bin/', 'scripts/', 'src/', 'resources/'];
const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' }).split('\0').filter(Boolean);
let copied = 0;
for (const f of tracked) {
  if (!CONTEXT.some((c) => (c.endsWith('/') ? f.startsWith(c) : f === c))) continue;
  mkdirSync(dirname(join(out, f)), { recursive: true });
  cpSync(join(root, f), join(out, f));
  copied++;
}

// The environment's Python side, at the root as openenv push expects it.
const client = join(root, 'clients/python/forge_env');
for (const f of ['__init__.py', 'client.py', 'models.py']) cpSync(join(client, f), join(out, f));
cpSync(join(root, 'openenv.yaml'), join(out, 'openenv.yaml'));
const pyproject = readFileSync(join(root, 'clients/python/pyproject.toml'), 'utf8').replace(
  'packages = ["forge_env"]',
  'packages = ["forge_env"]\npackage-dir = { "forge_env" = "." }',
);
writeFileSync(join(out, 'pyproject.toml'), pyproject);
mkdirSync(join(out, 'outputs'), { recursive: true });
writeFileSync(join(out, 'outputs', '.gitkeep'), '');

const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
writeFileSync(
  join(out, 'README.md'),
  `---
title: ForgeEnv
emoji: 🔧
colorFrom: indigo
colorTo: gray
sdk: docker
app_port: 8000
pinned: false
tags:
  - openenv
---

# ForgeEnv (OpenEnv environment), version ${version}

Break a working Hugging Face training script with a library-drift primitive (\`drift_gen\`), then repair it with a
unified diff (\`repair\`), scored by running it in a sandbox and checking what training produced.

The server is \`forgeenv serve\` (Node) on port 8000, speaking openenv-core's HTTP and \`/ws\` protocol. The Python
client is \`forge_env.ForgeEnv\` (this folder's \`client.py\`; \`pip install openenv-forge_env\`).
`,
);
console.log(`staged ${copied} files of the build context and the client in ${out}`);
