// A "Retry" action when a remote server was only busy (its capacity reached), else none.
import { RemoteEnvironmentError } from '../../env/openenv/remoteBackend';
import type { Action } from './editorPort';
import type { SessionServices } from './services';

export function retryIfBusy(s: Pick<SessionServices, 'command'>, e: unknown, command: string): Action[] {
  const busy = e instanceof RemoteEnvironmentError && e.code === 'CAPACITY_REACHED' && e.data.busy === true;
  return busy ? [{ title: 'Retry', run: () => s.command(command) }] : [];
}
