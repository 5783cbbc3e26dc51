// What the episode commands return (tests and other extensions drive the loop through them).
import type { HumanEpisodeStart } from '../../env/episode/humanEpisode';

export interface StartResult {
  episodeId: string;
  taskId: string;
  seed: number;
  primitive: HumanEpisodeStart['breakageSpec'];
  filePath: string;
  broke: boolean;
  diagnostics: number;
  /** From the command to the editor showing train.py with its diagnostics. */
  openMs: number;
}

export interface ScoreResult {
  run: number;
  reward: number;
  reward_breakdown: Record<string, number>;
  held_out_breakdown: Record<string, number>;
  findings: string[];
  success: boolean;
  exitCode: number | null;
  diagnostics: number;
  /** From the command to the score being shown. */
  scoreMs: number;
  cached: boolean;
  /** Whether the script ran in a warm zygote or a cold interpreter (absent when it did not run). */
  runtime?: 'warm' | 'cold';
}

export interface StoredResult {
  episodeId: string;
  /** True when the record is in the dataset; false when it waits in the pending queue. */
  stored: boolean;
  datasetDir: string;
  pendingId?: string;
  error?: string;
}
