// The label form's choices and the record it produces, kept free of vscode so the keyboard
// accelerators and validation are unit-testable.
import { z } from 'zod';
import type { LabelInput } from '../../../store/datasetStore';
import { LabelRecordSchema, LabelTargetSchema, type LabelTarget } from '../../../store/records';
import { formatZodError } from '../../../env/schemas';

export const DEFAULT_LABEL_TAGS: readonly string[] = ['rename', 'import', 'kwarg', 'schema', 'tokenizer', 'other'];

/** The `forgeenv.labels.tags` setting as a clean list: trimmed, non-empty, unique; the default when unusable. */
export function tagsFromSetting(value: unknown): string[] {
  const parsed = z.array(z.string()).safeParse(value);
  if (!parsed.success) return [...DEFAULT_LABEL_TAGS];
  const tags = [...new Set(parsed.data.map((t) => t.trim()).filter(Boolean))];
  return tags.length ? tags : [...DEFAULT_LABEL_TAGS];
}

export interface Choice<T> {
  value: T;
  /** Starts with the key to type, so typing it filters the quick pick to this item. */
  label: string;
  description: string;
}

export const DIFFICULTY_CHOICES: ReadonlyArray<Choice<1 | 2 | 3>> = [
  { value: 1, label: '1', description: 'easy: the error points straight at the fix' },
  { value: 2, label: '2', description: 'medium: needs knowing the library change' },
  { value: 3, label: '3', description: 'hard: several steps or a misleading error' },
];

export const CONFIDENCE_CHOICES: ReadonlyArray<Choice<number>> = [
  { value: 1, label: '1', description: 'guessing' },
  { value: 2, label: '2', description: 'unsure' },
  { value: 3, label: '3', description: 'fairly sure' },
  { value: 4, label: '4', description: 'sure' },
  { value: 5, label: '5', description: 'certain' },
];

export const LabelArgsSchema = z
  .object({
    target: LabelTargetSchema.optional(),
    difficulty: z.union([z.literal(1), z.literal(2), z.literal(3)]).optional(),
    tags: z.array(z.string().min(1)).optional(),
    confidence: z.number().int().min(1).max(5).optional(),
    note: z.string().optional(),
    dataset: z.string().min(1).optional(),
  })
  .strict();
export type LabelArgs = z.infer<typeof LabelArgsSchema>;

/** The store input for a filled form; throws an Error with a readable message when a field is wrong. */
export function labelInput(fields: {
  target: LabelTarget;
  difficulty: number;
  tags: readonly string[];
  confidence: number;
  note: string;
  labeler: string;
}): LabelInput {
  const input = {
    target: fields.target,
    difficulty: fields.difficulty,
    tags: [...fields.tags],
    confidence: fields.confidence,
    note: fields.note.trim(),
    labeler: fields.labeler,
  };
  // Validate the same way the store will, so the error surfaces before anything is written.
  const check = LabelRecordSchema.safeParse({
    kind: 'label',
    schema: 'forgeenv.label/v1',
    label_id: '00000000-0000-4000-8000-000000000000',
    at: new Date().toISOString(),
    ...input,
  });
  if (!check.success) throw new Error(`Invalid label: ${formatZodError(check.error)}`);
  return input as LabelInput;
}

/** Short description of a target for titles. */
export function targetTitle(target: LabelTarget, extra?: string): string {
  const base = target.type === 'task' ? `task ${target.task_id}` : `demonstration ${target.record_id.slice(0, 8)}`;
  return extra ? `${base} (${extra})` : base;
}
