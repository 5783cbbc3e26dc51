"""Accuracy: the proportion of correct predictions (ForgeEnv's offline stand-in for evaluate-metric/accuracy)."""
import datasets
import numpy as np

import evaluate as metric_lib


class Accuracy(metric_lib.Metric):
    def _info(self):
        multilabel = self.config_name == "multilabel"
        value = datasets.Sequence(datasets.Value("int32")) if multilabel else datasets.Value("int32")
        return metric_lib.MetricInfo(
            description="Accuracy: the proportion of correct predictions.",
            citation="",
            inputs_description="predictions, references: lists of ints (lists of lists for config 'multilabel')",
            features=datasets.Features({"predictions": value, "references": value}),
        )

    def _compute(self, predictions, references, normalize=True, sample_weight=None):
        p = np.asarray(predictions)
        r = np.asarray(references)
        hit = (p == r).all(axis=1) if p.ndim > 1 else p == r
        w = np.ones(len(hit)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
        correct = float((hit * w).sum())
        return {"accuracy": correct / float(w.sum()) if normalize else correct}
