import { summarizeDataset } from './src/store/summary';
const dir = process.argv[2]!;
(async () => { await summarizeDataset(dir); const c = process.cpuUsage(); for (let i = 0; i < 5; i++) await summarizeDataset(dir); const u = process.cpuUsage(c); console.log('avg cpu', ((u.user + u.system) / 5000).toFixed(0)); })();
