// Registers every forgeenv.* command, with one error surface: an unexpected error is logged to the
// ForgeEnv log with its stack, shown as a message naming the command as the palette does, and
// returned as a refusal (the CommandResult every command returns), never an unhandled rejection.
import * as vscode from 'vscode';
import { refusal } from './commandArgs';
import type { DisposableStore } from './lifecycle';

export interface RegisterOptions {
  /** Editor-title and explorer buttons pass a Uri first; these commands take option objects only. */
  dropUriArgument?: boolean;
}

export class CommandRegistry {
  private readonly ids = new Set<string>();
  private readonly titles: Map<string, string>;

  constructor(
    private readonly log: vscode.LogOutputChannel,
    private readonly owner: DisposableStore,
    manifestCommands: ReadonlyArray<{ command: string; title: string; category?: string }>,
  ) {
    this.titles = new Map(manifestCommands.map((c) => [c.command, c.category ? `${c.category}: ${c.title}` : c.title]));
  }

  register(id: string, handler: (...args: unknown[]) => unknown, opts: RegisterOptions = {}): void {
    if (this.ids.has(id)) throw new Error(`${id} is registered twice`);
    this.ids.add(id);
    this.owner.add(
      vscode.commands.registerCommand(id, async (...args: unknown[]) => {
        const given = opts.dropUriArgument && args[0] instanceof vscode.Uri ? [] : args;
        try {
          return await handler(...given);
        } catch (e) {
          return this.report(id, e);
        }
      }),
    );
  }

  /** Every id registered so far (the manifest test compares them with package.json). */
  get registered(): readonly string[] {
    return [...this.ids];
  }

  private report(id: string, e: unknown) {
    const message = e instanceof Error ? e.message : String(e);
    this.log.error(`${id} failed: ${e instanceof Error && e.stack ? e.stack : message}`);
    void vscode.window.showErrorMessage(`${this.titles.get(id) ?? id} failed: ${message}`);
    return refusal('error', message);
  }
}
