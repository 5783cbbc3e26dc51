"""Entity-level precision, recall and F1 of IOB tags (ForgeEnv's offline stand-in for evaluate-metric/seqeval; seqeval's default mode)."""
import datasets
import numpy as np

import evaluate as metric_lib


def _chunks(tags):
    """(type, start, end) spans of an IOB2 sequence (conlleval rules)."""
    out, start, kind = [], None, None
    for i, tag in enumerate(list(tags) + ["O"]):
        prefix, _, t = tag.partition("-") if tag != "O" else ("O", "", "")
        if kind is not None and (prefix in ("O", "B") or t != kind):
            out.append((kind, start, i))
            kind = None
        if prefix == "B" or (prefix == "I" and kind is None):
            kind, start = t, i
    return out


class Seqeval(metric_lib.Metric):
    def _info(self):
        return metric_lib.MetricInfo(
            description="Entity-level precision, recall and F1 of IOB-tagged sequences (seqeval's default mode).",
            citation="",
            inputs_description="predictions, references: lists of lists of tags",
            features=datasets.Features(
                {
                    "predictions": datasets.Sequence(datasets.Value("string", id="label"), id="sequence"),
                    "references": datasets.Sequence(datasets.Value("string", id="label"), id="sequence"),
                }
            ),
        )

    def _compute(self, predictions, references, suffix=False, scheme=None, mode=None, sample_weight=None, zero_division="warn"):
        true, pred = set(), set()
        correct_tokens = total_tokens = 0
        for k, (p, r) in enumerate(zip(predictions, references)):
            true.update((k,) + c for c in _chunks(r))
            pred.update((k,) + c for c in _chunks(p))
            correct_tokens += sum(1 for a, b in zip(p, r) if a == b)
            total_tokens += len(r)

        def prf(t, p):
            hit = len(t & p)
            precision = hit / len(p) if p else 0.0
            recall = hit / len(t) if t else 0.0
            f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
            return precision, recall, f1

        scores = {}
        for kind in sorted({c[1] for c in true | pred}):
            t = {c for c in true if c[1] == kind}
            p = {c for c in pred if c[1] == kind}
            precision, recall, f1 = prf(t, p)
            scores[kind] = {"precision": precision, "recall": recall, "f1": f1, "number": len(t)}
        precision, recall, f1 = prf(true, pred)
        scores["overall_precision"] = precision
        scores["overall_recall"] = recall
        scores["overall_f1"] = f1
        scores["overall_accuracy"] = correct_tokens / total_tokens if total_tokens else 0.0
        return scores
