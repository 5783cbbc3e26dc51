"""Exact match (ForgeEnv's offline stand-in for evaluate-metric/exact_match)."""
import re
import string

import datasets
import numpy as np

import evaluate as metric_lib


class ExactMatch(metric_lib.Metric):
    def _info(self):
        return metric_lib.MetricInfo(
            description="The rate of predictions identical to their reference (after optional normalisation).",
            citation="",
            inputs_description="predictions, references: lists of strings",
            features=datasets.Features({"predictions": datasets.Value("string", id="sequence"), "references": datasets.Value("string", id="sequence")}),
        )

    def _compute(self, predictions, references, regexes_to_ignore=None, ignore_case=False, ignore_punctuation=False, ignore_numbers=False):
        p, r = list(predictions), list(references)
        for rx in regexes_to_ignore or []:
            p = [re.sub(rx, "", x) for x in p]
            r = [re.sub(rx, "", x) for x in r]
        drop = (string.punctuation if ignore_punctuation else "") + (string.digits if ignore_numbers else "")
        table = str.maketrans("", "", drop)
        norm = lambda x: (x.lower() if ignore_case else x).translate(table)  # noqa: E731
        return {"exact_match": float(np.mean([norm(a) == norm(b) for a, b in zip(p, r)])) if p else 0.0}
