// The warm runtime's pool, started when the editor opens an episode (issue 18: "started lazily:
// when the editor opens an episode"), so that the annotator's first Run & Score finds a zygote with
// the libraries already imported, and the original's reference already verified. In the background:
// opening never waits for it, and a pool that cannot start is a line in the output channel, never a
// toast (the run is then cold, as before).
import type { EpisodeSession } from '../../env/episode/episodeSession';
import { warmPool } from '../../env/run/executor';
import type { SessionLog } from './services';

/** How long the output channel waits to report the pool ready (a real snapshot's imports take 20–90 s). */
const READY_WAIT_MS = 10 * 60_000;
/** Zygotes one Run & Score claims: the repair's run and the verifier's evidence run (fewer on one core). */
const RUN_AND_SCORE_RUNS = 2;

/**
 * Starts the pool for `env`'s runs when the warm runtime is on and the environment runs here.
 * Resolves once the zygotes a Run & Score uses are ready (true), or the pool cannot serve this
 * episode (false); never rejects.
 */
export async function prewarmEpisode(env: EpisodeSession, warmRuntime: boolean, channel: SessionLog): Promise<boolean> {
  if (!warmRuntime || !env.prewarm) return false;
  // The editor layer may be torn down (its output channel closed) before the pool answers: a lost line, never a rejection.
  const log = {
    info: (line: string) => quietly(() => channel.info(line)),
    warn: (line: string) => quietly(() => channel.warn(line)),
  };
  try {
    const p = await env.prewarm();
    if ('error' in p) {
      log.info(`[warm] no warm runtime for this episode (its runs are cold): ${p.error}`);
      return false;
    }
    log.info(`[warm] starting the pool for this episode's runs: ${p.label}`);
    let ready = await warmPool.waitReady(p.key, RUN_AND_SCORE_RUNS, READY_WAIT_MS);
    if (ready && env.prepareReference) {
      // The first Run & Score would also run the unbroken original and verify it (the band it is judged
      // against): done now, on the ready zygotes, then the pool refills.
      const t0 = Date.now();
      const why = await env.prepareReference();
      log.info(`[warm] the original's reference ${why ? `was not computed: ${why}` : `is ready (${Date.now() - t0} ms)`}`);
      ready = await warmPool.waitReady(p.key, RUN_AND_SCORE_RUNS, READY_WAIT_MS);
    }
    const k = warmPool.stats().keys.find((x) => x.label === p.label);
    log.info(
      ready && k
        ? `[warm] ${k.label}: ${k.ready} of ${k.parked} zygote(s) ready, ${k.rssMiB} MiB resident together`
        : `[warm] ${p.label}: no zygote ready${k?.lastError ? ` (${k.lastError})` : ''}; runs stay cold until one is`,
    );
    return ready;
  } catch (e) {
    log.warn(`[warm] the pool could not start: ${(e as Error)?.message ?? String(e)}`);
    return false;
  }
}

function quietly(f: () => void): void {
  try {
    f();
  } catch {
    // the channel is closed
  }
}
