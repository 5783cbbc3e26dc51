// Reopen: placeholder until the episode controller's API is known.
import type { ReviewController } from './reviewMode';
export async function reopenCommand(_review: ReviewController, _args: unknown): Promise<undefined> {
  return undefined;
}
