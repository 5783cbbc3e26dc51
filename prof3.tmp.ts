import { openSync, readSync } from 'node:fs';
import { z } from 'zod';
import { DemonstrationRecordSchema, DemonstrationInfoSchema } from './src/store/records';
import { RolloutResultSchema } from './src/env/schemas';
const file = process.argv[2]! + '/demonstrations.jsonl';
const fd = openSync(file, 'r');
const lines: string[] = [];
{ const buf = Buffer.alloc(1 << 20); let carry = ''; let n; let pos = 0;
  while ((n = readSync(fd, buf, 0, buf.length, pos)) > 0) { pos += n; const parts = (carry + buf.subarray(0, n).toString('utf8')).split('\n'); carry = parts.pop()!; for (const p of parts) if (lines.length < 20000) lines.push(p); if (lines.length >= 20000) break; } }
const objs = lines.map((l) => JSON.parse(l));
function time(label: string, f: (o: any) => unknown) { const t = performance.now(); for (const o of objs) f(o); console.log(label, (performance.now() - t).toFixed(0)); }
time('full', (o) => DemonstrationRecordSchema.safeParse(o));
time('rollout only', (o) => RolloutResultSchema.safeParse(o));
time('info only', (o) => DemonstrationInfoSchema.safeParse(o.info));
const S = z.string();
time('string x6', (o) => { S.safeParse(o.drift_prompt); S.safeParse(o.repair_prompt); });
