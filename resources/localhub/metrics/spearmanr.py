"""Spearman rank correlation (ForgeEnv's offline stand-in for evaluate-metric/spearmanr)."""
import datasets
import numpy as np

import evaluate as metric_lib


def ranks(x):
    """Average ranks (ties share the mean rank), as scipy.stats.rankdata."""
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


class Spearmanr(metric_lib.Metric):
    def _info(self):
        return metric_lib.MetricInfo(
            description="Spearman rank correlation coefficient of predictions and references.",
            citation="",
            inputs_description="predictions, references: lists of floats",
            features=datasets.Features({"predictions": datasets.Value("float"), "references": datasets.Value("float")}),
        )

    def _compute(self, predictions, references, return_pvalue=False):
        a, b = ranks(predictions), ranks(references)
        out = {"spearmanr": float(np.corrcoef(a, b)[0, 1]) if a.std() and b.std() else float("nan")}
        if return_pvalue:
            out["spearmanr_pvalue"] = float("nan")
        return out
