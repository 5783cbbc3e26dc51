// Suggest Repair: the configured model (forgeenv.model.*) proposes a repair of the open episode's
// broken script; the proposal opens in VS Code's diff view (broken ↔ proposed), and the human
// accepts it into the script (then edits, scores and submits as usual), scores it as it stands
// without submitting, or discards it. The episode keeps every suggestion (suggestionRecord.ts),
// so the demonstration holds the model's proposal apart from the human's diff.
import * as vscode from 'vscode';
import { createRepairDiff } from '../../env/diff/diff';
import { refusal, type CommandResult } from '../commandArgs';
import type { ForgeContext } from '../context';
import type { EpisodeFeature } from '../episode';
import type { LiveEpisode } from '../episode/liveEpisode';
import { brokenScriptUri } from '../episode/virtualDocuments';
import { askForRepair, modelChoiceOf } from './askModel';
import { SuggestionDocuments, suggestionUri } from './suggestionDocuments';
import type { Suggestion, SuggestionScore } from './suggestionRecord';

/** The proposal on screen: which episode, which suggestion, and its whole script. */
interface Shown {
  episodeId: string;
  n: number;
  script: string;
  uri: vscode.Uri;
}

export interface SuggestResult {
  n: number;
  diff: string;
  answerKind: 'diff' | 'script';
  uri: string;
  latencyMs: number;
}

export function registerSuggest(ctx: ForgeContext, { session }: EpisodeFeature): void {
  const docs = ctx.lifecycle.add(new SuggestionDocuments());
  let shown: Shown | undefined;
  let asking = false;
  const setShown = (s: Shown | undefined) => {
    shown = s;
    void vscode.commands.executeCommand('setContext', 'forgeenv.hasSuggestion', s !== undefined);
  };
  setShown(undefined);
  /** The proposal on screen if it belongs to the open episode (an ended episode's is forgotten). */
  const current = (): { live: LiveEpisode; shown: Shown } | undefined => {
    const live = session.current;
    if (shown && (!live || live.episodeId !== shown.episodeId)) forget();
    return live && shown ? { live, shown } : undefined;
  };
  const forget = () => {
    docs.clear();
    setShown(undefined);
  };
  ctx.lifecycle.add(ctx.onWillStartEpisode(forget));
  const closeDiff = async (uri: vscode.Uri) => {
    const tabs = vscode.window.tabGroups.all
      .flatMap((g) => g.tabs)
      .filter((t) => t.input instanceof vscode.TabInputTextDiff && t.input.modified.toString() === uri.toString());
    if (tabs.length) await vscode.window.tabGroups.close(tabs, true).then(undefined, () => false);
  };
  /** Rewrites suggestion `n` of the episode's persisted list. */
  const updateSuggestion = (live: LiveEpisode, n: number, change: Partial<Suggestion>) =>
    live.update({ suggestions: (live.state.suggestions ?? []).map((s) => (s.n === n ? { ...s, ...change } : s)) });
  const noSuggestion = () => refusal('no_episode', 'No suggested repair is open: run ForgeEnv: Suggest Repair first.');

  const suggest = async (): Promise<CommandResult<SuggestResult>> => {
    const live = session.current;
    if (!live) return session.noEpisode();
    if (asking) return refusal('busy', 'The model is already being asked for a repair.');
    const choice = modelChoiceOf(ctx.settings());
    if (!choice.ok) {
      void vscode.window.showWarningMessage(choice.message, 'Open Setting').then((c) => {
        if (c) void vscode.commands.executeCommand('workbench.action.openSettings', `forgeenv.${choice.setting}`);
      });
      return refusal('no_model', choice.message);
    }
    asking = true;
    const askedAt = new Date();
    let outcome;
    try {
      outcome = await vscode.window.withProgress(
        {
          location: vscode.ProgressLocation.Notification,
          title: `ForgeEnv: asking ${choice.choice.model} for a repair…`,
          cancellable: true,
        },
        (_p, token) => {
          const abort = new AbortController();
          const sub = token.onCancellationRequested(() => abort.abort());
          return askForRepair(choice.choice, {
            brokenScript: live.start.brokenScript,
            repairPrompt: live.start.repairPrompt,
            maxDiffBytes: ctx.settings().maxDiffBytes,
            apiKey: process.env.FORGEENV_MODEL_API_KEY || undefined,
            signal: abort.signal,
          }).finally(() => {
            sub.dispose();
          });
        },
      );
    } finally {
      asking = false;
    }
    if (!outcome.ok) {
      // The episode and its script are untouched: nothing to lose, the human goes on or asks again.
      ctx.log.warn(
        `Suggest Repair (${outcome.stage}): ${outcome.message}${outcome.completion ? `\n--- completion ---\n${outcome.completion.slice(0, 4000)}` : ''}`,
      );
      if (/\bcancelled\b/.test(outcome.message)) return refusal('cancelled', 'Suggest Repair cancelled.');
      void vscode.window.showErrorMessage(`${outcome.message} Your script is unchanged.`, 'Retry', 'Open Settings').then((c) => {
        if (c === 'Retry') void vscode.commands.executeCommand('forgeenv.suggestRepair');
        else if (c) void vscode.commands.executeCommand('workbench.action.openSettings', 'forgeenv.model.');
      });
      return refusal('error', outcome.message);
    }
    if (session.current !== live) return refusal('cancelled', 'The episode ended while the model was answering.');
    const p = outcome.proposal;
    const n = (live.state.suggestions?.length ?? 0) + 1;
    const record: Suggestion = {
      agent: p.agent,
      diff: p.diff,
      answer_kind: p.answerKind,
      completion: p.completion,
      asked_at: askedAt.toISOString(),
      latency_ms: p.stats.latency_ms,
      n,
      accepted: false,
      decision: 'pending',
    };
    // A pending proposal replaced by a new one counts as discarded.
    const earlier = (live.state.suggestions ?? []).map((s) =>
      s.decision === 'pending' ? { ...s, decision: 'discarded' as const, decided_at: askedAt.toISOString() } : s,
    );
    await live.update({ suggestions: [...earlier, record].slice(-50) });
    if (shown) {
      docs.forget(shown.uri);
      await closeDiff(shown.uri);
    }
    const uri = suggestionUri(live.episodeId, n);
    docs.set(uri, p.script);
    setShown({ episodeId: live.episodeId, n, script: p.script, uri });
    ctx.log.info(
      `Suggest Repair: suggestion ${n} from ${p.agent.model} (${p.answerKind}, ${p.diff.split('\n').length} diff lines, ${p.stats.latency_ms} ms)`,
    );
    await vscode.commands.executeCommand(
      'vscode.diff',
      brokenScriptUri(live.episodeId),
      uri,
      `train.py: broken ↔ suggested by ${p.agent.model}`,
      { preview: true },
    );
    void vscode.window
      .showInformationMessage(
        `ForgeEnv: ${p.agent.model} suggests a repair (shown as a diff). Accept it into train.py to edit it further, score it as it stands, or discard it.`,
        'Accept',
        'Score Suggestion',
        'Discard',
      )
      .then((c) => {
        if (c === 'Accept') void vscode.commands.executeCommand('forgeenv.acceptSuggestion');
        else if (c === 'Score Suggestion') void vscode.commands.executeCommand('forgeenv.scoreSuggestion');
        else if (c === 'Discard') void vscode.commands.executeCommand('forgeenv.discardSuggestion');
      });
    return { ok: true, n, diff: p.diff, answerKind: p.answerKind, uri: uri.toString(), latencyMs: p.stats.latency_ms };
  };

  const accept = async (): Promise<CommandResult<{ n: number; filePath: string }>> => {
    const c = current();
    if (!c) return session.current ? noSuggestion() : session.noEpisode();
    const { live, shown: s } = c;
    if (live.running) return refusal('busy', 'A run is in progress; accept the suggestion when it has finished.');
    // An edit of the episode's own document (undoable, unsaved): the human keeps editing from here.
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(live.file));
    const edit = new vscode.WorkspaceEdit();
    edit.replace(doc.uri, new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length)), s.script);
    if (!(await vscode.workspace.applyEdit(edit)))
      return session.fail('ForgeEnv: the suggestion could not be applied to train.py (the editor refused the edit).');
    await updateSuggestion(live, s.n, { accepted: true, decision: 'accepted', decided_at: new Date().toISOString() });
    docs.forget(s.uri);
    setShown(undefined);
    await closeDiff(s.uri);
    await session.editor.openScript(live.file, { focus: true });
    return { ok: true, n: s.n, filePath: live.file };
  };

  const discard = async (): Promise<CommandResult<{ n: number }>> => {
    const c = current();
    if (!c) return session.current ? noSuggestion() : session.noEpisode();
    await updateSuggestion(c.live, c.shown.n, { decision: 'discarded', decided_at: new Date().toISOString() });
    docs.forget(c.shown.uri);
    setShown(undefined);
    await closeDiff(c.shown.uri);
    return { ok: true, n: c.shown.n };
  };

  /** Runs the proposal through the environment as it stands (not submitted; the script and its score are untouched). */
  const score = async (): Promise<CommandResult<{ n: number } & Omit<SuggestionScore, 'scored_at'>>> => {
    const c = current();
    if (!c) return session.current ? noSuggestion() : session.noEpisode();
    const { live, shown: s } = c;
    if (live.running) return refusal('busy', 'A run is in progress.');
    const diff = createRepairDiff(live.start.brokenScript, s.script);
    live.running = true;
    session.render('running', false);
    let evaluation;
    try {
      const out = session.editor.runOutput(
        `suggestion ${s.n} of train.py (${live.state.start.task.task_id}, ${live.state.mode}, not submitted)`,
      );
      evaluation = await session.editor.withProgress(`ForgeEnv: running the suggested repair…`, (signal) =>
        live.env.evaluateRepair(diff, { signal, onOutput: out.write }).finally(out.flush),
      );
    } finally {
      live.running = false;
      session.render(live.state.lastEvaluation ? 'scored' : 'idle', false);
    }
    if (evaluation.execution?.killed && /\bcancelled\b/.test(evaluation.execution.stderr)) return refusal('cancelled', 'Run cancelled.');
    const result: SuggestionScore = {
      reward: evaluation.reward,
      success: evaluation.success,
      exit_code: evaluation.execution?.exit_code ?? null,
      reward_breakdown: evaluation.reward_breakdown,
      held_out_breakdown: evaluation.held_out_breakdown,
      scored_at: new Date().toISOString(),
    };
    if (session.current === live) await updateSuggestion(live, s.n, { score: result });
    const verdict = evaluation.success
      ? 'it repairs the script'
      : `it does not repair the script${evaluation.error_trace ? ` (${evaluation.error_trace.split('\n').filter(Boolean).at(-1)?.slice(0, 160)})` : ''}`;
    void vscode.window
      .showInformationMessage(
        `ForgeEnv: the suggestion scores ${evaluation.reward.toFixed(2)}: ${verdict}. Not submitted.`,
        'Accept',
        'Discard',
      )
      .then((choice) => {
        if (choice === 'Accept') void vscode.commands.executeCommand('forgeenv.acceptSuggestion');
        else if (choice === 'Discard') void vscode.commands.executeCommand('forgeenv.discardSuggestion');
      });
    const { scored_at: _at, ...rest } = result;
    return { ok: true, n: s.n, ...rest };
  };

  const trusted = <T>(fn: () => Promise<T>) => ctx.refuseUntrusted() ?? fn();
  ctx.commands.register('forgeenv.suggestRepair', suggest, { dropUriArgument: true });
  ctx.commands.register('forgeenv.acceptSuggestion', accept, { dropUriArgument: true });
  ctx.commands.register('forgeenv.discardSuggestion', discard, { dropUriArgument: true });
  ctx.commands.register('forgeenv.scoreSuggestion', () => trusted(score), { dropUriArgument: true });
}
