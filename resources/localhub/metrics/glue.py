"""GLUE (ForgeEnv's offline stand-in for evaluate-metric/glue): each config's keys, as the original."""
import datasets
import numpy as np

import evaluate as metric_lib

CONFIGS = ["sst2", "mnli", "mnli_mismatched", "mnli_matched", "cola", "stsb", "mrpc", "qqp", "qnli", "rte", "wnli", "hans"]


def _accuracy(p, r):
    return float((np.asarray(p) == np.asarray(r)).mean())


def _f1(p, r):
    p, r = np.asarray(p), np.asarray(r)
    tp = float(((p == 1) & (r == 1)).sum())
    precision = tp / float((p == 1).sum()) if (p == 1).any() else 0.0
    recall = tp / float((r == 1).sum()) if (r == 1).any() else 0.0
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def _mcc(p, r):
    p, r = np.asarray(p), np.asarray(r)
    labels = sorted(set(p.tolist()) | set(r.tolist()))
    at = {x: i for i, x in enumerate(labels)}
    c = np.zeros((len(labels), len(labels)))
    for a, b in zip(r.tolist(), p.tolist()):
        c[at[a], at[b]] += 1
    t, q, n = c.sum(axis=1), c.sum(axis=0), c.sum()
    den = (n * n - q.dot(q)) * (n * n - t.dot(t))
    return float((np.trace(c) * n - t.dot(q)) / np.sqrt(den)) if den else 0.0


def _ranks(x):
    x = np.asarray(x, dtype=float)
    order = np.argsort(x, kind="mergesort")
    out = np.empty(len(x))
    i = 0
    while i < len(x):
        j = i
        while j + 1 < len(x) and x[order[j + 1]] == x[order[i]]:
            j += 1
        out[order[i : j + 1]] = (i + j) / 2.0 + 1
        i = j + 1
    return out


def _corr(a, b):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.corrcoef(a, b)[0, 1]) if a.std() and b.std() else float("nan")


class Glue(metric_lib.Metric):
    def _info(self):
        if self.config_name not in CONFIGS:
            raise KeyError("You should supply a configuration name selected in " + str(CONFIGS))
        kind = "float32" if self.config_name == "stsb" else "int64"
        return metric_lib.MetricInfo(
            description="GLUE: the score of each GLUE task (accuracy, F1, Matthews or Pearson/Spearman correlation).",
            citation="",
            inputs_description="predictions, references: lists of ints (floats for stsb)",
            features=datasets.Features({"predictions": datasets.Value(kind), "references": datasets.Value(kind)}),
            format="numpy",
        )

    def _compute(self, predictions, references):
        if self.config_name == "cola":
            return {"matthews_correlation": _mcc(predictions, references)}
        if self.config_name == "stsb":
            return {"pearson": _corr(predictions, references), "spearmanr": _corr(_ranks(predictions), _ranks(references))}
        if self.config_name in ("mrpc", "qqp"):
            return {"accuracy": _accuracy(predictions, references), "f1": _f1(predictions, references)}
        return {"accuracy": _accuracy(predictions, references)}
