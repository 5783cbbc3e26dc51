// The recipe of an episode (EpisodeRecipeSchema): what re-creates it deterministically on a fresh
// environment. Both sides compute the scripts' digests the same way, here.
import { createHash } from 'node:crypto';
import type { EpisodeRecipe, EpisodeState } from './episodeTypes';

export function scriptDigest(script: string): string {
  return createHash('sha256').update(script, 'utf8').digest('hex');
}

/**
 * The recipe of a saved episode, with the digests of its scripts. Not its broken script's first run:
 * the environment that restores it runs the broken script again rather than take a client's word for it.
 */
export function recipeOf(state: EpisodeState): EpisodeRecipe {
  return {
    episode_id: state.episode_id,
    seed: state.seed,
    task_id: state.task_id,
    library_versions: state.library_versions,
    target_category: state.target_category,
    started_at: state.started_at,
    original_sha256: scriptDigest(state.original_script),
    ...(state.breakage_spec && state.broken_script !== null
      ? {
          breakage: { primitive_type: state.breakage_spec.primitive_type, params: state.breakage_spec.params },
          broken_sha256: scriptDigest(state.broken_script),
        }
      : {}),
  };
}
