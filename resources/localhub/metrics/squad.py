"""SQuAD v1 exact match and F1 (ForgeEnv's offline stand-in for evaluate-metric/squad), in percent."""
import collections
import re
import string

import datasets

import evaluate as metric_lib


def normalize(s):
    """Lower case, no punctuation, no articles, single spaces (the SQuAD evaluation's normalisation)."""
    s = "".join(c for c in s.lower() if c not in set(string.punctuation))
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split())


def f1(prediction, truth):
    p, t = normalize(prediction).split(), normalize(truth).split()
    common = collections.Counter(p) & collections.Counter(t)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = same / len(p), same / len(t)
    return 2 * precision * recall / (precision + recall)


class Squad(metric_lib.Metric):
    def _info(self):
        return metric_lib.MetricInfo(
            description="SQuAD v1.1: exact match and token F1 against the best reference answer.",
            citation="",
            inputs_description="predictions: [{id, prediction_text}], references: [{id, answers: {text: [...], answer_start: [...]}}]",
            features=datasets.Features(
                {
                    "predictions": {"id": datasets.Value("string"), "prediction_text": datasets.Value("string")},
                    "references": {
                        "id": datasets.Value("string"),
                        "answers": datasets.features.Sequence({"text": datasets.Value("string"), "answer_start": datasets.Value("int32")}),
                    },
                }
            ),
        )

    def _compute(self, predictions, references):
        preds = {p["id"]: p["prediction_text"] for p in predictions}
        em = f = 0.0
        n = 0
        for ref in references:
            if ref["id"] not in preds:
                continue
            n += 1
            answers = ref["answers"]["text"] or [""]
            em += max(float(normalize(preds[ref["id"]]) == normalize(a)) for a in answers)
            f += max(f1(preds[ref["id"]], a) for a in answers)
        return {"exact_match": 100.0 * em / n if n else 0.0, "f1": 100.0 * f / n if n else 0.0}
