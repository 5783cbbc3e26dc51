"""The metrics the corpus uses, computed exactly (they are plain arithmetic, no model involved)."""
import math
import re
from collections import Counter


def _plain(v):
    if v is None:
        return None
    if hasattr(v, "tolist"):
        return v.tolist()
    return list(v)


class Metric:
    name = "metric"

    def __init__(self, config_name=None, **init_kwargs):
        self.config_name = config_name or "default"
        self._preds, self._refs = [], []

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        self._preds.extend(_plain(predictions) or [])
        self._refs.extend(_plain(references) or [])

    def add(self, *, prediction=None, reference=None, **kwargs):
        self._preds.append(prediction.tolist() if hasattr(prediction, "tolist") else prediction)
        self._refs.append(reference.tolist() if hasattr(reference, "tolist") else reference)

    def compute(self, *, predictions=None, references=None, **kwargs):
        if predictions is None and references is None:
            predictions, references = self._preds, self._refs
            self._preds, self._refs = [], []
        predictions, references = _plain(predictions), _plain(references)
        if predictions is None or references is None:
            raise ValueError("Evaluation module inputs are missing: %s. All required inputs are %s" % (["predictions" if predictions is None else "references"], ["predictions", "references"]))
        if len(predictions) != len(references):
            raise ValueError("Mismatch in the number of predictions (%d) and references (%d)" % (len(predictions), len(references)))
        return self._compute(predictions=predictions, references=references, **kwargs)

    def __repr__(self):
        return 'EvaluationModule(name: "%s", module_type: "metric", features: ..., usage: ...)' % self.name


class Accuracy(Metric):
    name = "accuracy"

    def _compute(self, predictions, references, normalize=True, sample_weight=None):
        correct = sum(1 for p, r in zip(predictions, references) if p == r)
        if not predictions:
            return {"accuracy": 0.0}
        return {"accuracy": float(correct / len(predictions) if normalize else correct)}


def _prf(predictions, references, average, pos_label=1, labels=None):
    classes = sorted(set(references) | set(predictions)) if labels is None else labels
    stats = {}
    for c in classes:
        tp = sum(1 for p, r in zip(predictions, references) if p == c and r == c)
        fp = sum(1 for p, r in zip(predictions, references) if p == c and r != c)
        fn = sum(1 for p, r in zip(predictions, references) if p != c and r == c)
        stats[c] = (tp, fp, fn)

    def f(tp, fp, fn):
        prec = tp / (tp + fp) if tp + fp else 0.0
        rec = tp / (tp + fn) if tp + fn else 0.0
        return prec, rec, (2 * prec * rec / (prec + rec) if prec + rec else 0.0)

    if average == "binary":
        return f(*stats.get(pos_label, (0, 0, 0)))
    if average == "micro":
        tp = sum(s[0] for s in stats.values())
        fp = sum(s[1] for s in stats.values())
        fn = sum(s[2] for s in stats.values())
        return f(tp, fp, fn)
    per = [f(*s) for s in stats.values()]
    if average == "weighted":
        support = [sum(1 for r in references if r == c) for c in stats]
        total = sum(support) or 1
        return tuple(sum(p[i] * w for p, w in zip(per, support)) / total for i in range(3))
    if average is None:
        return tuple([p[i] for p in per] for i in range(3))
    n = len(per) or 1
    return tuple(sum(p[i] for p in per) / n for i in range(3))


class F1(Metric):
    name = "f1"

    def _compute(self, predictions, references, labels=None, pos_label=1, average="binary", sample_weight=None):
        return {"f1": _prf(predictions, references, average, pos_label, labels)[2]}


class Precision(Metric):
    name = "precision"

    def _compute(self, predictions, references, labels=None, pos_label=1, average="binary", sample_weight=None, zero_division="warn"):
        return {"precision": _prf(predictions, references, average, pos_label, labels)[0]}


class Recall(Metric):
    name = "recall"

    def _compute(self, predictions, references, labels=None, pos_label=1, average="binary", sample_weight=None, zero_division="warn"):
        return {"recall": _prf(predictions, references, average, pos_label, labels)[1]}


class Matthews(Metric):
    name = "matthews_correlation"

    def _compute(self, predictions, references, sample_weight=None, average=None):
        tp = sum(1 for p, r in zip(predictions, references) if p == 1 and r == 1)
        tn = sum(1 for p, r in zip(predictions, references) if p == 0 and r == 0)
        fp = sum(1 for p, r in zip(predictions, references) if p == 1 and r == 0)
        fn = sum(1 for p, r in zip(predictions, references) if p == 0 and r == 1)
        d = math.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
        return {"matthews_correlation": (tp * tn - fp * fn) / d if d else 0.0}


class MSE(Metric):
    name = "mse"

    def _compute(self, predictions, references, sample_weight=None, multioutput="uniform_average", squared=True):
        v = sum((float(p) - float(r)) ** 2 for p, r in zip(predictions, references)) / max(len(predictions), 1)
        return {"mse": v if squared else math.sqrt(v)}


class MAE(Metric):
    name = "mae"

    def _compute(self, predictions, references, sample_weight=None, multioutput="uniform_average"):
        return {"mae": sum(abs(float(p) - float(r)) for p, r in zip(predictions, references)) / max(len(predictions), 1)}


def _tokens(text):
    return re.findall(r"[a-z0-9]+", str(text).lower())


def _lcs(a, b):
    if not a or not b:
        return 0
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def _f(overlap, n_pred, n_ref):
    if not n_pred or not n_ref or not overlap:
        return 0.0
    p, r = overlap / n_pred, overlap / n_ref
    return 2 * p * r / (p + r)


class Rouge(Metric):
    name = "rouge"

    def _compute(self, predictions, references, rouge_types=None, use_aggregator=True, use_stemmer=False, tokenizer=None):
        rouge_types = rouge_types or ["rouge1", "rouge2", "rougeL", "rougeLsum"]
        scores = {t: [] for t in rouge_types}
        for p, r in zip(predictions, references):
            if isinstance(r, list):
                r = r[0]
            pt, rt = _tokens(p), _tokens(r)
            for t in rouge_types:
                if t in ("rougeL", "rougeLsum"):
                    scores[t].append(_f(_lcs(pt, rt), len(pt), len(rt)))
                else:
                    n = int(t[5:])
                    pg = Counter(tuple(pt[i : i + n]) for i in range(len(pt) - n + 1))
                    rg = Counter(tuple(rt[i : i + n]) for i in range(len(rt) - n + 1))
                    scores[t].append(_f(sum((pg & rg).values()), sum(pg.values()), sum(rg.values())))
        if use_aggregator:
            return {t: (sum(v) / len(v) if v else 0.0) for t, v in scores.items()}
        return scores


class Bleu(Metric):
    name = "bleu"

    def _compute(self, predictions, references, tokenizer=None, max_order=4, smooth=False):
        matches, possible = [0] * max_order, [0] * max_order
        pl = rl = 0
        for p, refs in zip(predictions, references):
            refs = refs if isinstance(refs, list) else [refs]
            pt = _tokens(p)
            rts = [_tokens(r) for r in refs]
            pl += len(pt)
            rl += min((len(r) for r in rts), key=lambda n: abs(n - len(pt)))
            for n in range(1, max_order + 1):
                pg = Counter(tuple(pt[i : i + n]) for i in range(len(pt) - n + 1))
                best = Counter()
                for rt in rts:
                    best |= Counter(tuple(rt[i : i + n]) for i in range(len(rt) - n + 1))
                matches[n - 1] += sum((pg & best).values())
                possible[n - 1] += max(len(pt) - n + 1, 0)
        precisions = [((m + 1) / (p + 1) if smooth else (m / p if p else 0.0)) for m, p in zip(matches, possible)]
        geo = math.exp(sum(math.log(p) for p in precisions) / max_order) if min(precisions) > 0 else 0.0
        bp = 1.0 if pl > rl or pl == 0 else math.exp(1 - rl / pl)
        return {"bleu": geo * bp, "precisions": precisions, "brevity_penalty": bp, "length_ratio": pl / rl if rl else 0.0, "translation_length": pl, "reference_length": rl}


def _norm_answer(s):
    s = str(s).lower()
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    s = re.sub(r"[^\w\s]", "", s)
    return " ".join(s.split())


class Squad(Metric):
    name = "squad"

    def _compute(self, predictions, references):
        gold = {r["id"]: r["answers"]["text"] for r in references}
        em = f1 = 0.0
        for p in predictions:
            golds = gold.get(p["id"], [""]) or [""]
            pred = _norm_answer(p["prediction_text"])
            em += max(float(pred == _norm_answer(g)) for g in golds)
            best = 0.0
            for g in golds:
                pt, gt = pred.split(), _norm_answer(g).split()
                common = sum((Counter(pt) & Counter(gt)).values())
                best = max(best, _f(common, len(pt), len(gt)))
            f1 += best
        n = max(len(predictions), 1)
        return {"exact_match": 100.0 * em / n, "f1": 100.0 * f1 / n}


def _entities(tags):
    ents, cur = [], None
    for i, t in enumerate(list(tags) + ["O"]):
        if t.startswith("B-") or t == "O" or (t.startswith("I-") and (cur is None or cur[0] != t[2:])):
            if cur is not None:
                ents.append((cur[0], cur[1], i))
                cur = None
            if t.startswith("B-") or t.startswith("I-"):
                cur = (t[2:], i)
    return set(ents)


class Seqeval(Metric):
    name = "seqeval"

    def _compute(self, predictions, references, suffix=False, scheme=None, mode=None, sample_weight=None, zero_division="warn"):
        tp = n_pred = n_true = 0
        per = {}
        correct_tok = total_tok = 0
        for p, r in zip(predictions, references):
            pe, re_ = _entities(p), _entities(r)
            tp += len(pe & re_)
            n_pred += len(pe)
            n_true += len(re_)
            for e in re_:
                per.setdefault(e[0], [0, 0, 0])[2] += 1
            for e in pe:
                per.setdefault(e[0], [0, 0, 0])[1] += 1
                if e in re_:
                    per[e[0]][0] += 1
            correct_tok += sum(1 for a, b in zip(p, r) if a == b)
            total_tok += len(r)
        out = {}
        for k in sorted(per):
            t, np_, nt = per[k]
            prec, rec = (t / np_ if np_ else 0.0), (t / nt if nt else 0.0)
            out[k] = {"precision": prec, "recall": rec, "f1": (2 * prec * rec / (prec + rec) if prec + rec else 0.0), "number": nt}
        prec, rec = (tp / n_pred if n_pred else 0.0), (tp / n_true if n_true else 0.0)
        out["overall_precision"] = prec
        out["overall_recall"] = rec
        out["overall_f1"] = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
        out["overall_accuracy"] = correct_tok / total_tok if total_tok else 0.0
        return out


class ExactMatch(Metric):
    name = "exact_match"

    def _compute(self, predictions, references, regexes_to_ignore=None, ignore_case=False, ignore_punctuation=False, ignore_numbers=False):
        n = max(len(predictions), 1)
        return {"exact_match": sum(1 for p, r in zip(predictions, references) if str(p) == str(r)) / n}


def _edit_distance(a, b):
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


class Wer(Metric):
    """Word error rate over the corpus (jiwer's definition: edits / reference words)."""

    name = "wer"
    _unit = staticmethod(lambda s: s.split())

    def _compute(self, predictions=None, references=None, concatenate_texts=False):
        edits = total = 0
        for p, r in zip(predictions, references):
            rp, rr = self._unit(p), self._unit(r)
            edits += _edit_distance(rp, rr)
            total += len(rr)
        return edits / total if total else 0.0


class Cer(Wer):
    name = "cer"
    _unit = staticmethod(lambda s: list(s))


class Glue(Metric):
    name = "glue"

    def _compute(self, predictions, references):
        acc = Accuracy()._compute(predictions, references)
        if self.config_name in ("mrpc", "qqp"):
            acc["f1"] = _prf(predictions, references, "binary")[2]
        if self.config_name == "cola":
            return Matthews()._compute(predictions, references)
        return acc


REGISTRY = {
    "accuracy": Accuracy,
    "f1": F1,
    "precision": Precision,
    "recall": Recall,
    "matthews_correlation": Matthews,
    "mse": MSE,
    "mae": MAE,
    "rouge": Rouge,
    "bleu": Bleu,
    "squad": Squad,
    "seqeval": Seqeval,
    "exact_match": ExactMatch,
    "glue": Glue,
    "wer": Wer,
    "cer": Cer,
}


def create(path, config_name=None):
    key = str(path).split("/")[-1]
    if key.startswith("evaluate-metric/"):
        key = key.split("/", 1)[1]
    cls = REGISTRY.get(key)
    if cls is None:
        raise FileNotFoundError(
            "Couldn't find a module script at %s/%s.py. Module '%s' doesn't exist on the Hugging Face Hub either." % (path, key, path)
        )
    return cls(config_name)
