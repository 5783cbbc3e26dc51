import { appendFileSync, readFileSync } from 'node:fs';
import { summarizeDataset } from './src/store/summary';
const dir = process.argv[2]!;
(async () => {
  await summarizeDataset(dir);
  const c = process.cpuUsage(); const t = performance.now();
  appendFileSync(dir + '/demonstrations.jsonl', readFileSync('/tmp/tail1k.jsonl'));
  const c1 = process.cpuUsage(); const t1 = performance.now();
  await summarizeDataset(dir);
  const u = process.cpuUsage(c1); console.log('incremental cpu', ((u.user + u.system) / 1000).toFixed(0), 'wall', (performance.now() - t1).toFixed(0));
})();
