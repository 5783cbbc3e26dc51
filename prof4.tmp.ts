import { readSummaryInput } from './src/store/summaryIndex';
const dir = process.argv[2]!;
(async () => {
  const inp = await readSummaryInput(dir);
  const ids = inp.demos.ids;
  for (let rep = 0; rep < 2; rep++) {
  let t = performance.now();
  const seen = new Set<string>(); for (const id of ids) seen.add(id); console.log('seen', (performance.now()-t).toFixed(0)); t = performance.now();
  const m = new Map<string, number>(); for (const h of inp.demos.recordHash) m.set(h, (m.get(h) ?? 0) + 1); console.log('rh', (performance.now()-t).toFixed(0)); t = performance.now();
  let k = 0; for (const id of ids) if (inp.latestReviews.get(id)) k++; console.log('rev', (performance.now()-t).toFixed(0)); t = performance.now();
  const arr: number[] = []; for (let i = 0; i < ids.length; i++) arr.push(inp.demos.reward[i]!); console.log('push', (performance.now()-t).toFixed(0));
  }
})();
