import { readSummaryInput } from './src/store/summaryIndex';
import { summarizeDataset } from './src/store/summary';
const dir = process.argv[2]!;
const cpu = async (label: string, f: () => Promise<unknown>) => { const c = process.cpuUsage(); const t = performance.now(); await f(); const u = process.cpuUsage(c); console.log(label, 'wall', (performance.now()-t).toFixed(0), 'cpu', ((u.user+u.system)/1000).toFixed(0)); };
(async () => {
  await cpu('readSummaryInput', () => readSummaryInput(dir));
  await cpu('summarize', () => summarizeDataset(dir));
  await cpu('summarize', () => summarizeDataset(dir));
})();
