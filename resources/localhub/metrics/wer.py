"""Word error rate (ForgeEnv's offline stand-in for evaluate-metric/wer): edits / reference words, as jiwer."""
import datasets

import evaluate as metric_lib


def edits(a, b):
    """Levenshtein distance of two token lists."""
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            cur = row[j]
            row[j] = min(row[j] + 1, row[j - 1] + 1, prev + (x != y))
            prev = cur
    return row[-1]


class Wer(metric_lib.Metric):
    def _info(self):
        return metric_lib.MetricInfo(
            description="Word error rate: (substitutions + deletions + insertions) / words in the references.",
            citation="",
            inputs_description="predictions, references: lists of strings",
            features=datasets.Features({"predictions": datasets.Value("string", id="sequence"), "references": datasets.Value("string", id="sequence")}),
        )

    def _compute(self, predictions=None, references=None, concatenate_texts=False):
        errors = total = 0
        for p, r in zip(predictions, references):
            ref = r.split()
            errors += edits(ref, p.split())
            total += len(ref)
        return errors / total if total else 0.0
