// GitChameleon-style answer files: one `{example_id, answer}` per line (JSONL), or a JSON array of
// them. `evaluate-model --export-answers` writes the model's raw completions this way, and
// `--import-answers` scores answers produced elsewhere (another harness, a model run offline):
// several rows with the same example_id are that problem's samples for pass@k. Read with a size
// limit and every row validated; written atomically.
import { statSync, readFileSync } from 'node:fs';
import { z } from 'zod';
import { formatZodError } from '../env/schemas';
import { writeFileAtomic } from './atomicWrite';

export const AnswerRowSchema = z.looseObject({ example_id: z.string().min(1).max(512), answer: z.string() });
export type AnswerRow = z.infer<typeof AnswerRowSchema>;

export const MAX_ANSWERS_FILE_BYTES = 64 << 20;

/** The rows of an answers file in order; throws an Error naming the file and line of the first bad row. */
export function readAnswersFile(file: string): AnswerRow[] {
  const st = statSync(file, { throwIfNoEntry: false });
  if (!st?.isFile()) throw new Error(`${file}: no such file`);
  if (st.size > MAX_ANSWERS_FILE_BYTES)
    throw new Error(`${file}: ${st.size} bytes, over the ${MAX_ANSWERS_FILE_BYTES}-byte limit for an answers file`);
  const text = readFileSync(file, 'utf8');
  const trimmed = text.trimStart();
  const rows: Array<{ value: unknown; where: string }> = [];
  if (trimmed.startsWith('[')) {
    let arr: unknown;
    try {
      arr = JSON.parse(text);
    } catch (e) {
      throw new Error(`${file}: not valid JSON (${(e as Error).message})`, { cause: e });
    }
    if (!Array.isArray(arr)) throw new Error(`${file}: expected a JSON array of {example_id, answer}`);
    arr.forEach((value, i) => rows.push({ value, where: `${file}[${i}]` }));
  } else {
    text.split('\n').forEach((line, i) => {
      if (line.trim() === '') return;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch (e) {
        throw new Error(`${file}:${i + 1}: not valid JSON (${(e as Error).message})`, { cause: e });
      }
      rows.push({ value, where: `${file}:${i + 1}` });
    });
  }
  return rows.map(({ value, where }) => {
    const r = AnswerRowSchema.safeParse(value);
    if (!r.success) throw new Error(`${where}: not an {example_id, answer} row: ${formatZodError(r.error)}`);
    return r.data;
  });
}

/** Answers grouped by example id, in file order. */
export function groupAnswers(rows: readonly AnswerRow[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const r of rows) out.set(r.example_id, [...(out.get(r.example_id) ?? []), r.answer]);
  return out;
}

export async function writeAnswersFile(file: string, rows: readonly AnswerRow[]): Promise<void> {
  await writeFileAtomic(file, rows.map((r) => JSON.stringify({ example_id: r.example_id, answer: r.answer }) + '\n').join(''));
}
