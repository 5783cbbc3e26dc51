// Entry point: activate builds the editor layer (one context owning every disposable), deactivate
// tears it down and kills any script still running.
import * as vscode from 'vscode';
import { killAllRuns, warmPool } from './env/run/executor';
import { ForgeContext } from './editor/context';
import { registerEpisode, type EpisodeFeature } from './editor/episode';
import { registerLab } from './editor/lab';
import { registerReview } from './editor/review';
import { registerSuggest } from './editor/suggest';
import { showWelcomeOnFirstStart } from './editor/welcome';

let layer: { ctx: ForgeContext; episode: EpisodeFeature } | undefined;

/** What activate() returns; `testing` exists only when VS Code runs the extension's tests. */
export interface ForgeEnvApi {
  testing?: {
    episode(): EpisodeFeature | undefined;
    context(): ForgeContext | undefined;
    /** Tears the editor layer down as a window reload would, then activates it again (resume path). */
    reload(): Promise<void>;
  };
}

function build(extension: vscode.ExtensionContext): NonNullable<typeof layer> {
  const ctx = new ForgeContext(extension);
  // The warm pool's starts, readiness, failures and retirements (docs/sandbox.md, "Warm runtime").
  warmPool.setLog((line) => ctx.log.info(line));
  const episode = registerEpisode(ctx);
  registerLab(ctx);
  registerReview(ctx, episode.session);
  registerSuggest(ctx, episode);
  return { ctx, episode };
}

async function teardown(): Promise<void> {
  const current = layer;
  layer = undefined;
  await current?.ctx.dispose().catch((e: unknown) => console.error('ForgeEnv: dispose failed', e));
}

export function activate(extension: vscode.ExtensionContext): ForgeEnvApi {
  layer = build(extension);
  extension.subscriptions.push({ dispose: () => void teardown() });
  showWelcomeOnFirstStart(extension);
  if (extension.extensionMode !== vscode.ExtensionMode.Test) return {};
  return {
    testing: {
      episode: () => layer?.episode,
      context: () => layer?.ctx,
      reload: async () => {
        await teardown();
        layer = build(extension);
        await layer.episode.session.restore();
      },
    },
  };
}

export async function deactivate(): Promise<void> {
  await teardown();
  await Promise.all([killAllRuns(), warmPool.clear()]);
}
