// The persisted episode names its backend; states saved before remote episodes existed resume as embedded ones.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EpisodeBackendSchema, PersistedEpisodeSchema } from '../../../src/editor/episode/episodeRecord';

test('an episode saved without a backend is an embedded one; a remote one needs its server URL', () => {
  const backend = PersistedEpisodeSchema.shape.backend;
  assert.deepEqual(backend.parse(undefined), { kind: 'embedded' });
  assert.deepEqual(backend.parse({ kind: 'remote', url: 'http://127.0.0.1:7860' }), { kind: 'remote', url: 'http://127.0.0.1:7860' });
  assert.equal(EpisodeBackendSchema.safeParse({ kind: 'remote' }).success, false);
  assert.equal(EpisodeBackendSchema.safeParse({ kind: 'remote', url: '' }).success, false);
  assert.equal(EpisodeBackendSchema.safeParse({ kind: 'cloud' }).success, false);
});
