import { openSync, readSync } from 'node:fs';
import { DemonstrationRecordSchema } from './src/store/records';
import { demonstrationInconsistency } from './src/store/datasetStore';
import { countDiffLines } from './src/store/diffStats';
const file = process.argv[2]! + '/demonstrations.jsonl';
const fd = openSync(file, 'r');
const lines: string[] = [];
{ const buf = Buffer.alloc(1 << 20); let carry = ''; let n; let pos = 0;
  while ((n = readSync(fd, buf, 0, buf.length, pos)) > 0) { pos += n; const parts = (carry + buf.subarray(0, n).toString('utf8')).split('\n'); carry = parts.pop()!; for (const p of parts) if (lines.length < 30000) lines.push(p); if (lines.length >= 30000) break; } }
let t = performance.now();
const objs = lines.map((l) => JSON.parse(l)); const tp = performance.now() - t; t = performance.now();
for (const o of objs) DemonstrationRecordSchema.safeParse(o); const tz = performance.now() - t; t = performance.now();
for (const o of objs) demonstrationInconsistency(o); const th = performance.now() - t; t = performance.now();
for (const o of objs) countDiffLines(o.repair_completion); const tc = performance.now() - t;
console.log(`30k lines: JSON.parse ${tp.toFixed(0)} ms, zod ${tz.toFixed(0)} ms, hash ${th.toFixed(0)} ms, countDiff ${tc.toFixed(0)} ms`);
