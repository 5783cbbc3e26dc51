// Nested layouts of well-known local data files, for scripts that hand the file to a library reader
// rather than to load_dataset (whose rows are flat records). Each layout names the readers that expect
// it and its source; the synthetic content keeps the layout's invariants (a SQuAD answer is found at
// its `answer_start` in its context), so the reader's own checks pass.
import { z } from 'zod';

export const FILE_LAYOUTS = ['squad'] as const;
export const FileLayoutSchema = z.enum(FILE_LAYOUTS);
export type FileLayout = z.infer<typeof FileLayoutSchema>;

interface LayoutEntry {
  /** Names in a script that hand a json file to a reader of this layout. */
  readers: RegExp;
  /** Where the layout is specified. */
  source: string;
}

export const KNOWN_FILE_LAYOUTS: Readonly<Record<FileLayout, LayoutEntry>> = {
  // SQuAD v1.1/v2.0 files (https://rajpurkar.github.io/SQuAD-explorer/, train-v1.1.json): {"version", "data": [{"title",
  // "paragraphs": [{"context", "qas": [{"id", "question", "answers": [{"text", "answer_start"}], "is_impossible"}]}]}]},
  // as transformers' SquadProcessor._create_examples (transformers/data/processors/squad.py) and the run_squad-style
  // scripts that read the file with json.load(f)["data"] walk it.
  squad: {
    readers: /\bSquad(?:V1|V2)?Processor\b|\bread_squad_examples\b|\bsquad_convert_examples_to_features\b/,
    source: 'https://rajpurkar.github.io/SQuAD-explorer/ (SQuAD v1.1/v2.0 json), transformers/data/processors/squad.py',
  },
};

/** The layout the script's reader expects of the json files it is given, if it uses a known reader. */
export function fileLayoutOf(script: string): FileLayout | undefined {
  return FILE_LAYOUTS.find((l) => KNOWN_FILE_LAYOUTS[l].readers.test(script));
}

/**
 * A SQuAD-format file: `articles` articles of `paragraphs` paragraphs of 2 questions, every answer a span
 * of its context at `answer_start` (the reader checks that the answer text is found there), none impossible.
 */
export function synthesizeSquadFile(sentence: () => string, pick: (n: number) => number, articles = 8, paragraphs = 4): string {
  let qid = 0;
  const data = Array.from({ length: articles }, (_, a) => ({
    title: `Article_${a}`,
    paragraphs: Array.from({ length: paragraphs }, () => {
      const context = [sentence(), sentence(), sentence()].join(' ');
      const words = context.split(' ');
      const qas = Array.from({ length: 2 }, () => {
        const start = pick(words.length - 2);
        const text = words.slice(start, start + 1 + pick(2)).join(' ');
        const answerStart = words.slice(0, start).join(' ').length + (start > 0 ? 1 : 0);
        return {
          id: `q${String(qid++).padStart(5, '0')}`,
          question: `What about ${words[pick(words.length)].replace(/\.$/, '')}?`,
          answers: [{ text, answer_start: answerStart }],
          is_impossible: false,
        };
      });
      return { context, qas };
    }),
  }));
  return JSON.stringify({ version: '1.1', data }) + '\n';
}
