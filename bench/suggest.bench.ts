// Suggest Repair's effect on the time to a verified fix, on the same 3 tasks (simulated mode),
// and the offline SmolLM2's pass@k on them when it is installed (scripts/setup-model.sh).
//   npm run bench:suggest [-- --k 2 --max-tokens 384 --chars-per-second 6 --no-model]
// Scripted, so the two arms are comparable (docs/model-in-the-loop.md):
//   without  a human's edit sequence: the oracle repair typed hunk by hunk (typing modelled at
//            --chars-per-second over the characters the hunk adds), Run & Score after each hunk,
//            until a run succeeds;
//   with     Suggest Repair (a local OpenAI-compatible server answering the oracle diff: the HTTP
//            round trip and parsing are measured), Score Suggestion, Accept, Run & Score (the
//            environment's cache of scored diffs answers the second run of the same diff, as in the editor).
// Machine time (runs, requests) is measured; typing time is the model above and printed apart.
import { createServer } from 'node:http';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { chatComplete } from '../src/env/agent/chatEndpoint';
import { evaluateModel } from '../src/env/agent/modelEvaluation';
import { applyRepairDiff, createRepairDiff } from '../src/env/diff/diff';
import { ForgeEnvironment } from '../src/env/episode/environment';
import { prepareRepairPhase } from '../src/env/episode/rollout';
import { askForRepair } from '../src/editor/suggest/askModel';

const ROOT = resolve(__dirname, '..');
const TASKS: ReadonlyArray<[string, number]> = [
  ['distilbert_sst2', 7],
  ['simple_regression', 1],
  ['tiny_mlp_mnist', 2],
];
const { values } = parseArgs({
  options: {
    k: { type: 'string', default: '2' },
    'max-tokens': { type: 'string', default: '384' },
    'chars-per-second': { type: 'string', default: '6' },
    'no-model': { type: 'boolean', default: false },
  },
});
const cps = Number(values['chars-per-second']);

/** The hunks of a unified diff, each as a diff of its own (applied one after the other). */
function hunks(diff: string): string[] {
  const lines = diff.split('\n');
  const head = lines
    .filter((l, i) => i < 4 && (l.startsWith('diff ') || l.startsWith('--- ') || l.startsWith('+++ ') || l.startsWith('index ')))
    .join('\n');
  const out: string[] = [];
  for (const l of lines.slice(head.split('\n').length)) {
    if (l.startsWith('@@')) out.push(l);
    else if (out.length) out[out.length - 1] += `\n${l}`;
  }
  return out.map((h) => `${head}\n${h.replace(/\n*$/, '')}\n`);
}

const addedChars = (diff: string) =>
  diff
    .split('\n')
    .filter((l) => l.startsWith('+') && !l.startsWith('+++'))
    .reduce((n, l) => n + l.length - 1, 0);

async function main(): Promise<void> {
  let answer = '';
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ choices: [{ message: { role: 'assistant', content: answer }, finish_reason: 'stop' }] }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  const env = new ForgeEnvironment({ mode: 'simulated' });
  const rows: string[] = [];
  try {
    console.log(`Time to a verified fix, simulated mode; typing modelled at ${cps} chars/s`);
    console.log('task                  arm      runs  machine_ms  typing_ms  total_ms');
    for (const [task, seed] of TASKS) {
      // Without: the human's scripted edits, hunk by hunk, a run after each.
      await prepareRepairPhase(env, { taskId: task, seed });
      const broken = env.state!.broken_script!;
      const oracle = env.oracleDiff();
      let script = broken;
      let machine = 0;
      let typing = 0;
      let runs = 0;
      let verified = false;
      for (const h of hunks(oracle)) {
        const next = applyRepairDiff(script, h);
        if (!next.ok) throw new Error(`${task}: hunk does not apply: ${next.error}`);
        script = next.script;
        typing += (addedChars(h) / cps) * 1000;
        const t = Date.now();
        const e = await env.evaluateRepair(createRepairDiff(broken, script));
        machine += Date.now() - t;
        runs++;
        if ((verified = e.success)) break;
      }
      rows.push(
        `${task.padEnd(21)} without  ${String(runs).padStart(4)}  ${String(machine).padStart(10)}  ${String(Math.round(typing)).padStart(9)}  ${String(Math.round(machine + typing)).padStart(8)}${verified ? '' : '  (never verified)'}`,
      );
      console.log(rows.at(-1));

      // With: ask, score the suggestion, accept, Run & Score.
      await prepareRepairPhase(env, { taskId: task, seed });
      answer = '```diff\n' + env.oracleDiff() + '```\n';
      const t = Date.now();
      const asked = await askForRepair(
        { endpoint, model: 'scripted', sampling: { temperature: 0, max_tokens: 1024 }, timeoutMs: 10_000, retries: 0 },
        { brokenScript: env.state!.broken_script!, repairPrompt: 'p', maxDiffBytes: 1 << 20 },
      );
      if (!asked.ok) throw new Error(asked.message);
      const s1 = await env.evaluateRepair(asked.proposal.diff); // Score Suggestion
      const s2 = await env.evaluateRepair(asked.proposal.diff); // Run & Score after Accept
      machine = Date.now() - t;
      rows.push(
        `${task.padEnd(21)} with     ${String(2).padStart(4)}  ${String(machine).padStart(10)}  ${'0'.padStart(9)}  ${String(machine).padStart(8)}${s1.success && s2.success ? '' : '  (never verified)'}`,
      );
      console.log(rows.at(-1));
    }
  } finally {
    server.close();
  }

  const gguf = join(process.env.FORGEENV_CACHE_DIR || join(homedir(), '.cache', 'forgeenv'), 'models', 'SmolLM2-135M-Instruct.Q4_1.gguf');
  if (values['no-model'] || !existsSync(gguf)) {
    console.log(values['no-model'] ? 'offline model: skipped (--no-model)' : `offline model: not installed (${gguf}); npm run model:setup`);
    await env.dispose();
    return;
  }
  const k = Math.max(1, Number(values.k));
  const proc = spawn(process.execPath, [join(ROOT, 'scripts/model-server/serve.mjs'), '--port', '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    const base = await new Promise<string>((res, rej) => {
      let log = '';
      const timer = setTimeout(() => rej(new Error(`the model server did not start in 120 s: ${log}`)), 120_000);
      const on = (d: Buffer) => {
        log += d.toString();
        const m = /listening on (http:\/\/[\d.]+:\d+)/.exec(log);
        if (m) {
          clearTimeout(timer);
          res(m[1]);
        }
      };
      proc.stdout.on('data', on);
      proc.stderr.on('data', on);
    });
    const sampling = { temperature: 0.8, max_tokens: Number(values['max-tokens']) };
    const t = Date.now();
    const report = await evaluateModel(env, {
      problems: TASKS.map(([task_id, seed]) => ({ task_id, seed })),
      n: k,
      k,
      agent: { endpoint: `${base}/v1`, model: 'smollm2-135m-instruct', sampling, source: 'endpoint' },
      answer: (p, _problem, i) =>
        chatComplete({ endpoint: `${base}/v1`, model: 'smollm2-135m-instruct', timeoutMs: 300_000, retries: 0 }, p.system, p.user, {
          ...sampling,
          seed: i,
        }),
    });
    console.log(
      `offline SmolLM2-135M-Instruct (Q4_1), ${report.attempts} attempts in ${((Date.now() - t) / 1000).toFixed(1)} s, max_tokens ${sampling.max_tokens}, temperature ${sampling.temperature}:`,
    );
    console.log(`  pass@k visible ${JSON.stringify(report.overall.visible)}, held-out ${JSON.stringify(report.overall.held_out)}`);
    console.log(
      `  unparseable answers ${report.unparseable} ${JSON.stringify(report.unparseable_reasons)}, endpoint failures ${report.endpoint_failures}`,
    );
    for (const p of report.problems)
      console.log(`  ${p.example_id}: ${p.held_out_passes}/${p.n} held-out passes, ${p.visible_passes}/${p.n} visible`);
  } finally {
    proc.kill('SIGTERM');
    await env.dispose();
  }
}

void main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
