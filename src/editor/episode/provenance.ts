// Who made a demonstration, how and for how long: the provenance stored in its info.
import { ENV_VERSION } from '../../env/episode/environment';
import type { DemonstrationProvenance } from '../../store/demonstrationBuilder';
import { annotatorId } from '../settingsSchema';
import type { LiveEpisode } from './liveEpisode';
import type { SessionServices } from './services';

export function provenanceOf(live: LiveEpisode, s: SessionServices, submittedAt: Date): DemonstrationProvenance {
  return {
    session_id: s.sessionId,
    annotator_id: annotatorId(s.settings()),
    mode: live.state.mode,
    interpreter: live.state.interpreter,
    extension_version: s.extensionVersion,
    env_version: ENV_VERSION,
    started_at: live.state.startedAt,
    submitted_at: submittedAt.toISOString(),
    active_ms: Math.round(live.tracker.activeMs),
    wall_ms: Math.max(0, submittedAt.getTime() - Date.parse(live.state.startedAt)),
    runs: live.state.runs,
  };
}
