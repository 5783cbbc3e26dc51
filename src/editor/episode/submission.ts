// What Submit stores and says, for an episode and for a revision alike: the demonstration record
// (built by the store's one builder; a revision names the record it supersedes) and the message
// once it is saved. No vscode import.
import type { RepairEvaluation } from '../../env/episode/episodeTypes';
import { snapshotIdOf } from '../../env/snapshots/versions';
import { buildDemonstration } from '../../store/demonstrationBuilder';
import type { DemonstrationRecord } from '../../store/records';
import type { EpisodeEditor } from './editorPort';
import type { LiveEpisode } from './liveEpisode';
import { provenanceOf } from './provenance';
import { suggestionInfo } from '../suggest/suggestionRecord';
import type { SessionServices } from './services';

/** Throws IdenticalRevisionError when a revision's diff is the revised record's. */
export function demonstrationOf(live: LiveEpisode, s: SessionServices, final: RepairEvaluation, submittedAt: Date): DemonstrationRecord {
  const rev = live.state.revision;
  return buildDemonstration({
    start: live.start,
    final,
    provenance: provenanceOf(live, s, submittedAt),
    info: {
      library_snapshot: snapshotIdOf(live.start.libraryVersions) ?? null,
      backend: live.state.backend.kind,
      client: s.client,
      ...(rev ? { reopened_from: rev.previous.info.record_id } : {}),
      // The model's proposal (when one was asked for) apart from the human's diff, and the time to a verified fix.
      ...suggestionInfo(live.state),
    },
    previous: rev?.previous,
  });
}

export function announceSaved(editor: EpisodeEditor, s: SessionServices, record: DemonstrationRecord, final: RepairEvaluation): void {
  const reward = final.reward.toFixed(2);
  if (record.info.supersedes)
    return editor.info(`ForgeEnv: revision ${record.info.revision} saved (reward ${reward}); it supersedes ${record.info.supersedes}.`);
  editor.info(
    `ForgeEnv: demonstration saved (reward ${reward}${final.success ? '' : ', not successful'}).`,
    { title: 'Next Task', run: () => s.command('forgeenv.nextTask') },
    { title: 'Reveal Dataset', run: () => s.command('forgeenv.openDatasetFolder') },
  );
}
