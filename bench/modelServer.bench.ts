// The offline model's costs (docs/model-in-the-loop.md): installing it with scripts/setup-model.sh
// into a fresh cache folder (the registries' own caches stay warm, as on a machine that ran it
// before), loading it, and generating through the OpenAI-compatible shim. Prints numbers only.
//   npm run bench:model [-- --requests 3 --max-tokens 64]
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const ROOT = resolve(__dirname, '..');
const { values } = parseArgs({ options: { requests: { type: 'string', default: '3' }, 'max-tokens': { type: 'string', default: '64' } } });
const requests = Math.max(1, Number(values.requests));
const maxTokens = Math.max(1, Number(values['max-tokens']));

async function main(): Promise<void> {
  const cache = mkdtempSync(join(tmpdir(), 'forgeenv-model-bench-'));
  try {
    let t = Date.now();
    const setup = spawnSync('bash', [join(ROOT, 'scripts/setup-model.sh')], {
      cwd: ROOT,
      env: { ...process.env, FORGEENV_CACHE_DIR: cache },
      encoding: 'utf8',
    });
    if (setup.status !== 0) throw new Error(`setup-model.sh failed:\n${setup.stderr}`);
    console.log(`setup-model.sh into an empty cache: ${((Date.now() - t) / 1000).toFixed(1)} s`);
    t = Date.now();
    const again = spawnSync('bash', [join(ROOT, 'scripts/setup-model.sh')], {
      cwd: ROOT,
      env: { ...process.env, FORGEENV_CACHE_DIR: cache },
      encoding: 'utf8',
    });
    if (again.status !== 0) throw new Error(`setup-model.sh (second run) failed:\n${again.stderr}`);
    console.log(`setup-model.sh when current: ${((Date.now() - t) / 1000).toFixed(1)} s`);
    const du = spawnSync('du', ['-sm', join(cache, 'models'), join(cache, 'model-server')], { encoding: 'utf8' });
    for (const line of du.stdout.trim().split('\n')) {
      const [mb, path] = line.split('\t');
      console.log(`size of ${path.slice(cache.length + 1)}: ${mb} MB`);
    }

    t = Date.now();
    const server = spawn(process.execPath, [join(ROOT, 'scripts/model-server/serve.mjs'), '--port', '0'], {
      env: { ...process.env, FORGEENV_CACHE_DIR: cache },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const base = await new Promise<string>((res, rej) => {
        let log = '';
        const timer = setTimeout(() => rej(new Error(`no start in 120 s: ${log}`)), 120_000);
        const on = (d: Buffer) => {
          log += d.toString();
          const m = /listening on (http:\/\/[\d.]+:\d+)/.exec(log);
          if (m) {
            clearTimeout(timer);
            res(m[1]);
          }
        };
        server.stdout.on('data', on);
        server.stderr.on('data', on);
      });
      console.log(`server start and model load: ${((Date.now() - t) / 1000).toFixed(1)} s`);
      for (let i = 0; i < requests; i++) {
        t = Date.now();
        const r = await fetch(`${base}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            messages: [{ role: 'user', content: 'Write a Python function that adds two numbers.' }],
            max_tokens: maxTokens,
            temperature: 0.2,
            seed: i,
          }),
        });
        const j = (await r.json()) as { usage?: { completion_tokens?: number } };
        const s = (Date.now() - t) / 1000;
        const n = j.usage?.completion_tokens ?? 0;
        console.log(`request ${i + 1}: ${n} tokens in ${s.toFixed(2)} s (${(n / s).toFixed(1)} tokens/s)`);
      }
    } finally {
      server.kill('SIGTERM');
    }
    console.log(`load average now: ${spawnSync('cat', ['/proc/loadavg'], { encoding: 'utf8' }).stdout.trim()}`);
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
}

void main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
