// Live run output for the "ForgeEnv Runs" channel, batched (one append per 150 ms instead of
// one per pipe chunk) and bounded per run: a script that floods its output must not flood the
// workbench too. The full captured output stays one click away in the run-output document.
import type * as vscode from 'vscode';

export class RunStream {
  private buffer = '';
  private shown = 0;
  private truncated = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly channel: Pick<vscode.OutputChannel, 'append'>,
    private readonly limitChars = 200_000,
    private readonly intervalMs = 150,
  ) {}

  readonly write = (_stream: 'stdout' | 'stderr', chunk: string): void => {
    if (this.truncated) return;
    const room = this.limitChars - this.shown - this.buffer.length;
    if (chunk.length > room) {
      this.buffer += chunk.slice(0, Math.max(0, room));
      this.buffer += '\n… (live output cut here; ForgeEnv: Show Last Run Output has everything the run printed)\n';
      this.truncated = true;
    } else this.buffer += chunk;
    this.timer ??= setTimeout(() => this.flush(), this.intervalMs);
  };

  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.buffer) return;
    this.shown += this.buffer.length;
    this.channel.append(this.buffer);
    this.buffer = '';
  }
}
