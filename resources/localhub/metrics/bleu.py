"""Corpus BLEU (ForgeEnv's offline stand-in for evaluate-metric/bleu): the output keys of the original."""
import collections
import math
import re

import datasets

import evaluate as metric_lib


def tokenize_13a(s):
    s = re.sub(r"([\{-\~\[-\` -\&\(-\+\:-\@\/])", r" \1 ", s)
    s = re.sub(r"([^0-9])([\.,])", r"\1 \2 ", s)
    s = re.sub(r"([\.,])([^0-9])", r" \1 \2", s)
    return s.split()


def ngrams(tokens, n):
    return collections.Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


class Bleu(metric_lib.Metric):
    def _info(self):
        return metric_lib.MetricInfo(
            description="Corpus BLEU with brevity penalty (shortest closest reference length).",
            citation="",
            inputs_description="predictions: list of strings; references: list of lists of strings, or list of strings",
            features=[
                datasets.Features({"predictions": datasets.Value("string", id="sequence"), "references": datasets.Sequence(datasets.Value("string", id="sequence"), id="references")}),
                datasets.Features({"predictions": datasets.Value("string", id="sequence"), "references": datasets.Value("string", id="sequence")}),
            ],
        )

    def _compute(self, predictions, references, tokenizer=tokenize_13a, max_order=4, smooth=False):
        references = [[r] if isinstance(r, str) else r for r in references]
        matches, possible = [0] * max_order, [0] * max_order
        trans_len = ref_len = 0
        for pred, refs in zip(predictions, references):
            p = tokenizer(pred)
            rs = [tokenizer(r) for r in refs]
            trans_len += len(p)
            ref_len += min((abs(len(r) - len(p)), len(r)) for r in rs)[1] if rs else 0
            for n in range(1, max_order + 1):
                best = collections.Counter()
                for r in rs:
                    best |= ngrams(r, n)
                got = ngrams(p, n)
                matches[n - 1] += sum(min(c, best[g]) for g, c in got.items())
                possible[n - 1] += max(len(p) - n + 1, 0)
        if smooth:
            precisions = [(m + 1.0) / (q + 1.0) for m, q in zip(matches, possible)]
        else:
            precisions = [m / q if q else 0.0 for m, q in zip(matches, possible)]
        geo = math.exp(sum(math.log(x) for x in precisions) / max_order) if min(precisions) > 0 else 0.0
        ratio = trans_len / ref_len if ref_len else 0.0
        bp = 1.0 if ratio > 1.0 else (math.exp(1 - 1.0 / ratio) if ratio else 0.0)
        return {"bleu": geo * bp, "precisions": precisions, "brevity_penalty": bp, "length_ratio": ratio, "translation_length": trans_len, "reference_length": ref_len}
