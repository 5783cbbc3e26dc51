"""Mean squared error (ForgeEnv's offline stand-in for evaluate-metric/mse)."""
import datasets
import numpy as np

import evaluate as metric_lib


class Mse(metric_lib.Metric):
    def _info(self):
        multi = self.config_name == "multilist"
        value = datasets.Sequence(datasets.Value("float")) if multi else datasets.Value("float")
        return metric_lib.MetricInfo(
            description="Mean squared error.",
            citation="",
            inputs_description="predictions, references: lists of floats (lists of lists for config 'multilist')",
            features=datasets.Features({"predictions": value, "references": value}),
        )

    def _compute(self, predictions, references, sample_weight=None, multioutput="uniform_average", squared=True):
        e = (np.asarray(predictions, dtype=float) - np.asarray(references, dtype=float)) ** 2
        w = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
        per = np.average(e, axis=0, weights=w)
        if not squared:
            per = np.sqrt(per)
        value = per if multioutput == "raw_values" else float(np.mean(per))
        return {"mse": value}
