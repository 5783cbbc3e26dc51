"""Precision: tp / (tp + fp) (ForgeEnv's offline stand-in for evaluate-metric/precision): sklearn's definition, in numpy."""
import datasets
import numpy as np

import evaluate as metric_lib


def _counts(p, r, labels, w):
    tp = np.array([float(((p == c) & (r == c)).dot(w)) for c in labels])
    pred = np.array([float((p == c).dot(w)) for c in labels])
    true = np.array([float((r == c).dot(w)) for c in labels])
    return tp, pred, true


def _div(a, b, zero):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    out = np.full(a.shape, float(zero) if zero in (0, 1, 0.0, 1.0) else 0.0)
    np.divide(a, b, out=out, where=b != 0)
    return out


def _score(kind, tp, pred, true, zero):
    precision = _div(tp, pred, zero)
    recall = _div(tp, true, zero)
    if kind == "precision":
        return precision
    if kind == "recall":
        return recall
    return _div(2 * precision * recall, precision + recall, zero)


def prf(kind, predictions, references, labels=None, pos_label=1, average="binary", sample_weight=None, zero_division="warn"):
    p = np.asarray(predictions)
    r = np.asarray(references)
    w = np.ones(len(p)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    zero = 0 if zero_division == "warn" else zero_division
    if average == "binary":
        labels = [pos_label]
    elif labels is None:
        labels = sorted(set(p.tolist()) | set(r.tolist()))
    tp, pred, true = _counts(p, r, labels, w)
    if average == "micro":
        return float(_score(kind, tp.sum(keepdims=True), pred.sum(keepdims=True), true.sum(keepdims=True), zero)[0])
    per = _score(kind, tp, pred, true, zero)
    if average == "binary":
        return float(per[0])
    if average is None:
        return per
    if average == "weighted":
        return float((per * true).sum() / true.sum()) if true.sum() else 0.0
    return float(per.mean()) if len(per) else 0.0


class Precision(metric_lib.Metric):
    def _info(self):
        multilabel = self.config_name == "multilabel"
        value = datasets.Sequence(datasets.Value("int32")) if multilabel else datasets.Value("int32")
        return metric_lib.MetricInfo(
            description="Precision: tp / (tp + fp).",
            citation="",
            inputs_description="predictions, references: lists of ints; labels, pos_label, average, sample_weight, zero_division as in sklearn",
            features=datasets.Features({"predictions": value, "references": value}),
        )

    def _compute(self, predictions, references, labels=None, pos_label=1, average="binary", sample_weight=None, zero_division="warn"):
        return {"precision": prf("precision", predictions, references, labels, pos_label, average, sample_weight, zero_division)}
