"""ROUGE-1/2/L/Lsum F-measures (ForgeEnv's offline stand-in for evaluate-metric/rouge; lower-cased alphanumeric tokens)."""
import re

import datasets
import numpy as np

import evaluate as metric_lib



def _tokens(text):
    return re.findall(r"[a-z0-9]+", text.lower())


def _ngrams(tokens, n):
    grams = {}
    for i in range(len(tokens) - n + 1):
        g = tuple(tokens[i : i + n])
        grams[g] = grams.get(g, 0) + 1
    return grams


def _f(hit, n_pred, n_ref):
    if not hit:
        return 0.0
    precision, recall = hit / n_pred, hit / n_ref
    return 2 * precision * recall / (precision + recall)


def _rouge_n(pred, ref, n):
    p, r = _ngrams(pred, n), _ngrams(ref, n)
    hit = sum(min(c, r.get(g, 0)) for g, c in p.items())
    return _f(hit, sum(p.values()), sum(r.values()))


def _lcs(a, b):
    row = [0] * (len(b) + 1)
    for x in a:
        prev = 0
        for j, y in enumerate(b):
            cur = row[j + 1]
            row[j + 1] = prev + 1 if x == y else max(row[j + 1], row[j])
            prev = cur
    return row[-1]


def _rouge_l(pred, ref):
    return _f(_lcs(pred, ref), len(pred), len(ref))


class Rouge(metric_lib.Metric):
    def _info(self):
        return metric_lib.MetricInfo(
            description="ROUGE-1/2/L/Lsum F-measures (lower-cased alphanumeric tokens, no stemming).",
            citation="",
            inputs_description="predictions, references: lists of strings",
            features=[
                datasets.Features({"predictions": datasets.Value("string", id="sequence"), "references": datasets.Sequence(datasets.Value("string", id="sequence"))}),
                datasets.Features({"predictions": datasets.Value("string", id="sequence"), "references": datasets.Value("string", id="sequence")}),
            ],
        )

    def _compute(self, predictions, references, rouge_types=None, use_aggregator=True, use_stemmer=False, tokenizer=None):
        rouge_types = rouge_types or ["rouge1", "rouge2", "rougeL", "rougeLsum"]
        per = {t: [] for t in rouge_types}
        for p, r in zip(predictions, references):
            refs = r if isinstance(r, list) else [r]
            for t in rouge_types:
                best = 0.0
                for ref in refs:
                    a, b = _tokens(p), _tokens(ref)
                    if t == "rougeL" or t == "rougeLsum":
                        v = _rouge_l(a, b)
                    else:
                        v = _rouge_n(a, b, int(t[len("rouge"):]))
                    best = max(best, v)
                per[t].append(best)
        if use_aggregator:
            return {t: float(np.mean(v)) if v else 0.0 for t, v in per.items()}
        return per
