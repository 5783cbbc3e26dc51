// Read-only virtual documents (`forgeenv-lab:` scheme) for the lab's diffs: the original and
// the broken script live only in memory, so applying a primitive never touches the user's file.
import { randomUUID } from 'node:crypto';
import { basename } from 'node:path';
import * as vscode from 'vscode';
import type { PrimitiveResult } from '../../env/primitives/types';
import type { LibraryVersions, PrimitiveSpec } from '../../env/schemas';

export const LAB_SCHEME = 'forgeenv-lab';
export type LabSide = 'original' | 'broken' | 'restored';

/** One applied primitive: what the diff shows and what Run / Check inverse / Save as task use. */
export interface LabSession {
  id: string;
  /** The file the primitive was applied to (never modified), or a description such as `corpus:task_id`. */
  source: vscode.Uri | string;
  fileName: string;
  original: string;
  spec: PrimitiveSpec;
  result: PrimitiveResult;
  versions?: LibraryVersions;
  /** Task id when the script came from the corpus or a task folder. */
  taskId?: string;
}

export class LabDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly texts = new Map<string, string>();
  private readonly sessions = new Map<string, LabSession>();
  private readonly order: string[] = [];
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  constructor(private readonly maxSessions = 50) {}

  provideTextDocumentContent(uri: vscode.Uri): string {
    return (
      this.texts.get(uri.toString()) ?? `# This ForgeEnv lab document is no longer available (${uri.path}).\n# Apply the primitive again.\n`
    );
  }

  uriFor(session: LabSession, side: LabSide): vscode.Uri {
    return vscode.Uri.from({ scheme: LAB_SCHEME, path: `/${session.id}/${side}/${session.fileName}` });
  }

  /** Registers a session and its two documents; old sessions beyond the limit are forgotten. */
  add(init: Omit<LabSession, 'id' | 'fileName'> & { fileName?: string }): LabSession {
    const fileName = init.fileName ?? (typeof init.source === 'string' ? 'train.py' : basename(init.source.path) || 'train.py');
    const session: LabSession = { ...init, id: randomUUID().slice(0, 8), fileName };
    this.sessions.set(session.id, session);
    this.order.push(session.id);
    this.setText(this.uriFor(session, 'original'), session.original);
    this.setText(this.uriFor(session, 'broken'), session.result.script);
    while (this.order.length > this.maxSessions) this.forget(this.order.shift()!);
    return session;
  }

  setText(uri: vscode.Uri, text: string): void {
    this.texts.set(uri.toString(), text);
    this.changed.fire(uri);
  }

  sessionOf(uri: vscode.Uri | undefined): LabSession | undefined {
    if (!uri || uri.scheme !== LAB_SCHEME) return undefined;
    return this.sessions.get(uri.path.split('/')[1] ?? '');
  }

  get(id: string): LabSession | undefined {
    return this.sessions.get(id);
  }

  latest(): LabSession | undefined {
    const id = this.order[this.order.length - 1];
    return id ? this.sessions.get(id) : undefined;
  }

  private forget(id: string): void {
    this.sessions.delete(id);
    for (const key of [...this.texts.keys()]) if (vscode.Uri.parse(key).path.startsWith(`/${id}/`)) this.texts.delete(key);
  }

  dispose(): void {
    this.changed.dispose();
    this.texts.clear();
    this.sessions.clear();
  }
}
