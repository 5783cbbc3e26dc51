"""Matthews correlation coefficient (ForgeEnv's offline stand-in for evaluate-metric/matthews_correlation)."""
import datasets
import numpy as np

import evaluate as metric_lib


def mcc(predictions, references, sample_weight=None):
    """The multiclass MCC (Gorodkin's R_K), which is sklearn's matthews_corrcoef."""
    p = np.asarray(predictions)
    r = np.asarray(references)
    w = np.ones(len(p)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    labels = sorted(set(p.tolist()) | set(r.tolist()))
    c = np.zeros((len(labels), len(labels)))
    at = {x: i for i, x in enumerate(labels)}
    for a, b, k in zip(r.tolist(), p.tolist(), w):
        c[at[a], at[b]] += k
    t, q = c.sum(axis=1), c.sum(axis=0)
    n, correct = c.sum(), np.trace(c)
    cov_ytyp = correct * n - t.dot(q)
    cov_ypyp = n * n - q.dot(q)
    cov_ytyt = n * n - t.dot(t)
    if cov_ypyp * cov_ytyt == 0:
        return 0.0
    return float(cov_ytyp / np.sqrt(cov_ytyt * cov_ypyp))


class MatthewsCorrelation(metric_lib.Metric):
    def _info(self):
        return metric_lib.MetricInfo(
            description="Matthews correlation coefficient of predicted and true labels.",
            citation="",
            inputs_description="predictions, references: lists of ints",
            features=datasets.Features({"predictions": datasets.Value("int32"), "references": datasets.Value("int32")}),
        )

    def _compute(self, predictions, references, sample_weight=None, average=None):
        return {"matthews_correlation": mcc(predictions, references, sample_weight)}
