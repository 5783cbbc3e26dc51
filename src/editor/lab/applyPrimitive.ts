// "Apply a primitive to the current Python file": pick a primitive that applies, pick or edit
// its params (prefilled from the file, validated with the primitive's schema), and show
// original ↔ broken in the diff editor. The file itself is never modified.
import * as vscode from 'vscode';
import { z } from 'zod';
import { applySpec, getPrimitive } from '../../env/primitives/registry';
import { PrimitiveRefusal, type PrimitiveResult } from '../../env/primitives/types';
import { LibraryVersionsSchema } from '../../env/schemas';
import { refusal, type CommandResult } from '../commandArgs';
import type { ApplicabilityService } from './applicabilityService';
import { intersectingCandidates, type ApplicablePrimitive } from './core/applicability';
import { candidatePickItems, checkParamsText, paramsText, primitivePickItems, type PrimitivePickItem } from './core/prefill';
import type { LabDocuments, LabSession } from './labDocuments';

/** Optional arguments (tests, code actions, other commands); every field is checked. */
export const ApplyArgsSchema = z
  .object({
    uri: z.union([z.string(), z.custom<vscode.Uri>((v) => v instanceof vscode.Uri, 'a vscode.Uri')]).optional(),
    primitive: z.string().min(1).optional(),
    /** Apply exactly these params (no input box). */
    params: z.record(z.string(), z.unknown()).optional(),
    /** Start the params input with these (code action). */
    prefill: z.record(z.string(), z.unknown()).optional(),
    /** Only return what the primitive quick pick would show. */
    list: z.boolean().optional(),
    /** Do not show the follow-up notification (tests). */
    quiet: z.boolean().optional(),
    versions: LibraryVersionsSchema.optional(),
  })
  .strict();
export type ApplyArgs = z.infer<typeof ApplyArgsSchema>;

export interface ApplyOutcome {
  session: string;
  primitive: string;
  params: Record<string, unknown>;
  originalUri: string;
  brokenUri: string;
  script: string;
  inverse: PrimitiveResult['inverse'];
  edits: PrimitiveResult['edits'];
}

export function toUri(u: string | vscode.Uri): vscode.Uri {
  return typeof u === 'string' ? (/^[a-z][\w+.-]*:/i.test(u) && !/^[a-z]:[\\/]/i.test(u) ? vscode.Uri.parse(u) : vscode.Uri.file(u)) : u;
}

export async function documentFor(uri: string | vscode.Uri | undefined): Promise<vscode.TextDocument | undefined> {
  if (uri) return vscode.workspace.openTextDocument(toUri(uri));
  return vscode.window.activeTextEditor?.document;
}

export function isPythonDocument(d: vscode.TextDocument): boolean {
  return d.languageId === 'python' || d.uri.path.endsWith('.py');
}

export async function openLabDiff(docs: LabDocuments, session: LabSession, opts: { preview?: boolean } = {}): Promise<void> {
  const title = `${session.fileName}: original ↔ ${session.spec.primitive_type} (ForgeEnv lab)`;
  await vscode.commands.executeCommand('vscode.diff', docs.uriFor(session, 'original'), docs.uriFor(session, 'broken'), title, {
    preview: opts.preview ?? false,
  });
}

async function pickPrimitive(items: PrimitivePickItem[]): Promise<string | undefined> {
  const picked = await vscode.window.showQuickPick(items, {
    ignoreFocusOut: true,
    title: 'ForgeEnv: apply a drift primitive (the file is not modified)',
    placeHolder: 'Primitives that can act on this file',
    matchOnDescription: true,
    matchOnDetail: true,
  });
  return picked?.primitive;
}

async function pickParams(
  applicable: ApplicablePrimitive,
  script: string,
  prefill?: Record<string, unknown>,
): Promise<Record<string, unknown> | undefined> {
  const { primitive, candidates } = applicable;
  let start = prefill;
  if (!start) {
    if (candidates.length === 1) start = candidates[0].params;
    else if (candidates.length > 1) {
      const items = candidatePickItems(candidates, script);
      const picked = await vscode.window.showQuickPick(items, {
        ignoreFocusOut: true,
        title: `${primitive.name}: where to break`,
        placeHolder: 'Candidates found in this file (Enter, then edit the params)',
        matchOnDescription: true,
        matchOnDetail: true,
      });
      if (!picked) return undefined;
      start = candidates[picked.index].params;
    } else start = {};
  }
  const text = await vscode.window.showInputBox({
    title: `${primitive.name} params (JSON)`,
    prompt: `${primitive.description} Validated with the primitive's schema; Enter applies.`,
    value: paramsText(start),
    ignoreFocusOut: true,
    validateInput: (t) => {
      const r = checkParamsText(primitive, t, script);
      return r.ok ? undefined : { message: r.error, severity: vscode.InputBoxValidationSeverity.Error };
    },
  });
  if (text === undefined) return undefined;
  const r = checkParamsText(primitive, text);
  return r.ok ? r.params : undefined;
}

export async function applyPrimitiveCommand(
  ctx: { docs: LabDocuments; applicability: ApplicabilityService; followUp: (s: LabSession) => void },
  rawArgs: unknown,
): Promise<CommandResult<ApplyOutcome> | CommandResult<{ items: PrimitivePickItem[] }>> {
  const parsed = ApplyArgsSchema.safeParse(rawArgs instanceof vscode.Uri ? { uri: rawArgs } : (rawArgs ?? {}));
  if (!parsed.success)
    return refusal(
      'invalid_args',
      `Invalid arguments for ForgeEnv: Apply a Drift Primitive: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  const args = parsed.data;
  let document: vscode.TextDocument | undefined;
  try {
    document = await documentFor(args.uri);
  } catch (e) {
    return refusal('invalid_args', `Cannot open ${String(args.uri)}: ${(e as Error).message}`);
  }
  if (!document) {
    void vscode.window.showWarningMessage('ForgeEnv: open a Python training script first.');
    return refusal('invalid_args', 'No Python script is open.');
  }
  if (document.uri.scheme === 'forgeenv-lab') {
    void vscode.window.showWarningMessage('ForgeEnv: this is a lab preview; apply primitives to the original file.');
    return refusal('invalid_args', 'A lab preview cannot be broken again.');
  }
  const script = document.getText();
  const applicable = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Window, title: 'ForgeEnv: finding applicable primitives' },
    () => ctx.applicability.get(document),
  );
  const items = primitivePickItems(applicable);
  if (args.list) return { ok: true, items };

  const name = args.primitive ?? (applicable.length ? await pickPrimitive(items) : undefined);
  if (!args.primitive && applicable.length === 0) {
    const msg = `No drift primitive applies to ${document.fileName.split(/[\\/]/).pop()} (nothing it could break).`;
    void vscode.window.showInformationMessage(`ForgeEnv: ${msg}`);
    return refusal('error', msg);
  }
  if (!name) return refusal('cancelled', 'No primitive chosen.');
  const primitive = getPrimitive(name);
  if (!primitive || primitive.kind !== 'breakage') return refusal('invalid_args', `Unknown breakage primitive "${name}".`);

  let params: Record<string, unknown> | undefined;
  if (args.params) {
    const check = checkParamsText(primitive, JSON.stringify(args.params));
    if (!check.ok) return refusal('invalid_args', check.error);
    params = check.params;
  } else {
    const entry = applicable.find((a) => a.primitive.name === name) ?? { primitive, candidates: [] };
    params = await pickParams(entry, script, args.prefill);
  }
  if (!params) return refusal('cancelled', 'No params given.');

  let result: PrimitiveResult;
  try {
    result = applySpec(script, { primitive_type: name, params });
  } catch (e) {
    const msg = e instanceof PrimitiveRefusal ? `${name} refused: ${e.reason}` : `${name} failed: ${(e as Error).message}`;
    void vscode.window.showErrorMessage(`ForgeEnv: ${msg}`);
    return refusal('error', msg);
  }
  const session = ctx.docs.add({
    source: document.uri,
    original: script,
    spec: { primitive_type: name, category: primitive.category, params },
    result,
    versions: args.versions,
  });
  await openLabDiff(ctx.docs, session);
  if (!args.quiet) ctx.followUp(session);
  return {
    ok: true,
    session: session.id,
    primitive: name,
    params,
    originalUri: ctx.docs.uriFor(session, 'original').toString(),
    brokenUri: ctx.docs.uriFor(session, 'broken').toString(),
    script: result.script,
    inverse: result.inverse,
    edits: result.edits,
  };
}

/** Code actions on a selected call / import / keyword: the primitives whose candidates meet the selection. */
export class BreakWithPrimitiveActions implements vscode.CodeActionProvider {
  static readonly kind = vscode.CodeActionKind.Refactor.append('forgeenv');

  constructor(private readonly applicability: ApplicabilityService) {}

  async provideCodeActions(
    document: vscode.TextDocument,
    range: vscode.Range | vscode.Selection,
    _ctx: vscode.CodeActionContext,
    token: vscode.CancellationToken,
  ): Promise<vscode.CodeAction[]> {
    const applicable = await this.applicability.tryGet(document, token);
    if (!applicable || token.isCancellationRequested) return [];
    const from = document.offsetAt(range.start);
    const to = document.offsetAt(range.end);
    const actions: vscode.CodeAction[] = [];
    for (const { primitive, candidates } of intersectingCandidates(applicable, from, to)) {
      for (const c of candidates.slice(0, 3)) {
        const action = new vscode.CodeAction(`ForgeEnv: break with ${primitive.name}: ${c.label}`, BreakWithPrimitiveActions.kind);
        action.command = {
          command: 'forgeenv.lab.applyPrimitive',
          title: `Break with ${primitive.name}`,
          tooltip: c.drift ? `Models: ${c.drift}` : primitive.models,
          arguments: [{ uri: document.uri.toString(), primitive: primitive.name, prefill: c.params }],
        };
        actions.push(action);
      }
    }
    return actions;
  }
}
