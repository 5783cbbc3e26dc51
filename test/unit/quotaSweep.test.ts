// A process killed outright cannot unmount its run folders' tmpfs quotas; the next process that
// mounts one sweeps them (src/env/sandbox/quota.ts). Needs root (the quota is a host mount).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { canMountQuota, releaseQuota, sweepStaleQuotas } from '../../src/env/sandbox/quota';

const isMounted = (dir: string) =>
  readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .some((l) => l.split(' ')[4] === dir);

test(
  'the quotas of a killed process are swept; a live owner keeps its own',
  { skip: canMountQuota() ? false : 'needs root and mount' },
  async () => {
    const base = mkdtempSync(join(tmpdir(), 'forgeenv-quota-sweep-'));
    const registry = join(base, 'registry');
    process.env.FORGEENV_QUOTA_REGISTRY = registry;
    const quota = resolve(__dirname, '../../src/env/sandbox/quota.ts');
    const mountIn = (dir: string) =>
      spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          '-e',
          `require(${JSON.stringify(quota)}).mountQuota(${JSON.stringify(dir)}, 4).then((e) => { console.log(e ?? 'mounted'); setInterval(() => {}, 1000); })`,
        ],
        {
          stdio: ['ignore', 'pipe', 'inherit'],
          env: { ...process.env, FORGEENV_QUOTA_REGISTRY: registry },
        },
      );
    const ready = (child: ReturnType<typeof spawn>) =>
      new Promise<string>((res) => child.stdout!.once('data', (b: Buffer) => res(b.toString().trim())));
    const dead = join(base, 'run-dead');
    const alive = join(base, 'run-alive');
    mkdirSync(dead);
    mkdirSync(alive);
    const a = mountIn(dead);
    const b = mountIn(alive);
    try {
      assert.equal(await ready(a), 'mounted');
      assert.equal(await ready(b), 'mounted');
      assert.ok(isMounted(dead) && isMounted(alive));
      a.kill('SIGKILL');
      await new Promise((r) => a.once('exit', r));
      assert.ok(isMounted(dead), 'a killed process leaves its quota mounted');
      const swept = await sweepStaleQuotas();
      assert.deepEqual(swept, [dead]);
      assert.equal(isMounted(dead), false);
      assert.equal(existsSync(dead), false);
      assert.ok(isMounted(alive), 'a live owner keeps its quota');
    } finally {
      b.kill('SIGKILL');
      await releaseQuota(alive, false);
      await releaseQuota(dead, false);
      delete process.env.FORGEENV_QUOTA_REGISTRY;
      rmSync(base, { recursive: true, force: true });
    }
  },
);

test(
  'a registry others may write is not trusted: nothing in it is swept',
  { skip: process.platform === 'linux' ? false : 'Linux only' },
  async () => {
    const base = mkdtempSync(join(tmpdir(), 'forgeenv-quota-registry-'));
    const registry = join(base, 'registry');
    mkdirSync(registry);
    const entry = join(registry, 'forgeenv-run-x');
    // A dead owner (no such pid) and a folder: a trusted registry would drop this entry.
    writeFileSync(entry, `999999999 1\n${join(base, 'forgeenv-run-x')}`);
    process.env.FORGEENV_QUOTA_REGISTRY = registry;
    try {
      chmodSync(registry, 0o777);
      assert.deepEqual(await sweepStaleQuotas(), []);
      assert.ok(existsSync(entry), 'an untrusted registry is not even read');
      chmodSync(registry, 0o700);
      await sweepStaleQuotas();
      assert.equal(existsSync(entry), false, 'the same entry in a trusted registry is dropped (its owner is gone)');
    } finally {
      delete process.env.FORGEENV_QUOTA_REGISTRY;
      rmSync(base, { recursive: true, force: true });
    }
  },
);
