"""Corpus BLEU as sacrebleu reports it (ForgeEnv's offline stand-in for evaluate-metric/sacrebleu)."""
import collections
import math
import re

import datasets

import evaluate as metric_lib


def tokenize(s, lowercase=False):
    """A 13a-like tokenisation: punctuation split from words."""
    s = s.lower() if lowercase else s
    s = re.sub(r"([\{-\~\[-\` -\&\(-\+\:-\@\/])", r" \1 ", s)
    s = re.sub(r"([^0-9])([\.,])", r"\1 \2 ", s)
    s = re.sub(r"([\.,])([^0-9])", r" \1 \2", s)
    s = re.sub(r"([0-9])(-)", r"\1 \2 ", s)
    return s.split()


def ngrams(tokens, n):
    return collections.Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


class Sacrebleu(metric_lib.Metric):
    def _info(self):
        return metric_lib.MetricInfo(
            description="Corpus BLEU (4-grams, brevity penalty, closest reference length), sacrebleu's output keys.",
            citation="",
            inputs_description="predictions: list of strings; references: list of lists of strings (the same number per prediction)",
            features=datasets.Features(
                {"predictions": datasets.Value("string", id="sequence"), "references": datasets.Sequence(datasets.Value("string", id="sequence"), id="references")}
            ),
        )

    def _compute(self, predictions, references, smooth_method="exp", smooth_value=None, force=False, lowercase=False, tokenize=None, use_effective_order=False):
        counts, totals = [0] * 4, [0] * 4
        sys_len = ref_len = 0
        for pred, refs in zip(predictions, references):
            p = globals()["tokenize"](pred, lowercase)
            rs = [globals()["tokenize"](r, lowercase) for r in refs]
            sys_len += len(p)
            ref_len += min((abs(len(r) - len(p)), len(r)) for r in rs)[1] if rs else 0
            for n in range(1, 5):
                got = ngrams(p, n)
                best = collections.Counter()
                for r in rs:
                    best |= ngrams(r, n)
                counts[n - 1] += sum(min(c, best[g]) for g, c in got.items())
                totals[n - 1] += max(len(p) - n + 1, 0)
        precisions = [100.0 * c / t if t else 0.0 for c, t in zip(counts, totals)]
        if smooth_method == "exp":
            k, smoothed = 1.0, []
            for c, t in zip(counts, totals):
                if t == 0:
                    smoothed.append(0.0)
                elif c == 0:
                    k *= 2
                    smoothed.append(100.0 / (k * t))
                else:
                    smoothed.append(100.0 * c / t)
        else:
            smoothed = precisions
        bp = 1.0 if sys_len > ref_len else (math.exp(1 - ref_len / sys_len) if sys_len else 0.0)
        score = bp * math.exp(sum(math.log(x) for x in smoothed) / 4) if all(x > 0 for x in smoothed) else 0.0
        return {"score": score, "counts": counts, "totals": totals, "precisions": precisions, "bp": bp, "sys_len": sys_len, "ref_len": ref_len}
