import { ForgeEnvironment } from './src/env/environment';
import { startHumanEpisode } from './src/env/humanEpisode';
(async () => {
  const env = new ForgeEnvironment({ mode: 'simulated' });
  const TASK = process.argv[2]!; const P = JSON.parse(process.argv[3]!);
  for (const seed of [3, 4]) { const s = await startHumanEpisode(env, { taskId: TASK, seed, primitive: P }); console.log(seed, s.brokenExecution.exit_code, s.brokenExecution.timed_out); }
  await env.dispose();
})();
