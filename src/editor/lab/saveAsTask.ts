import type { LabSession } from './labDocuments';
export async function saveAsTaskCommand(_s: LabSession | undefined, _args: unknown): Promise<undefined> {
  return undefined;
}
