// The editor's background pool start (src/editor/episode/warmStart.ts) never rejects: a pool that
// cannot start is a line in the output channel, and a channel closed meanwhile (the editor layer torn
// down, as a reload does) loses the line, not the promise (CI saw "Channel has been closed" unhandled).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { EpisodeSession } from '../../src/env/episode/episodeSession';
import { prewarmEpisode } from '../../src/editor/episode/warmStart';
import type { SessionLog } from '../../src/editor/episode/services';

const closed: SessionLog = {
  info: () => {
    throw new Error('Channel has been closed');
  },
  warn: () => {
    throw new Error('Channel has been closed');
  },
  error: () => {
    throw new Error('Channel has been closed');
  },
};

function recording(): SessionLog & { lines: string[] } {
  const lines: string[] = [];
  return { lines, info: (m) => lines.push(m), warn: (m) => lines.push(m), error: (m) => lines.push(m) };
}

const session = (prewarm: EpisodeSession['prewarm']) => ({ prewarm }) as unknown as EpisodeSession;

describe('prewarmEpisode', () => {
  test('a pool that cannot start resolves false and says why', async () => {
    const log = recording();
    const failing = session(() => Promise.reject(new Error('no bubblewrap')));
    assert.equal(await prewarmEpisode(failing, true, log), false);
    assert.match(log.lines.join('\n'), /the pool could not start: no bubblewrap/);
    const refused = session(() => Promise.resolve({ error: 'FORGEENV_WARM=0: the warm runtime is off' }));
    assert.equal(await prewarmEpisode(refused, true, log), false);
    assert.match(log.lines.at(-1)!, /runs are cold\): FORGEENV_WARM=0/);
  });

  test('a closed output channel loses the line, not the promise', async () => {
    const failing = session(() => Promise.reject(new Error('no bubblewrap')));
    assert.equal(await prewarmEpisode(failing, true, closed), false);
    const refused = session(() => Promise.resolve({ error: 'off' }));
    assert.equal(await prewarmEpisode(refused, true, closed), false);
  });

  test('off, or an environment that runs elsewhere: nothing is started', async () => {
    let asked = false;
    const env = session(() => {
      asked = true;
      return Promise.resolve({ error: 'x' });
    });
    assert.equal(await prewarmEpisode(env, false, recording()), false);
    assert.equal(asked, false);
    assert.equal(await prewarmEpisode({} as EpisodeSession, true, recording()), false);
  });
});
