"""Pearson correlation (ForgeEnv's offline stand-in for evaluate-metric/pearsonr)."""
import datasets
import numpy as np

import evaluate as metric_lib


class Pearsonr(metric_lib.Metric):
    def _info(self):
        return metric_lib.MetricInfo(
            description="Pearson correlation coefficient of predictions and references.",
            citation="",
            inputs_description="predictions, references: lists of floats",
            features=datasets.Features({"predictions": datasets.Value("float"), "references": datasets.Value("float")}),
        )

    def _compute(self, predictions, references, return_pvalue=False):
        p = np.asarray(predictions, dtype=float)
        r = np.asarray(references, dtype=float)
        out = {"pearsonr": float(np.corrcoef(p, r)[0, 1]) if p.std() and r.std() else float("nan")}
        if return_pvalue:
            out["p-value"] = float("nan")
        return out
