"""transformers.data.metrics.squad_metrics (simulated): best-span predictions and exact/F1 scores."""
import collections
import re
import string


def normalize_answer(s):
    s = s.lower()
    s = "".join(ch for ch in s if ch not in set(string.punctuation))
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split())


def compute_exact(a_gold, a_pred):
    return int(normalize_answer(a_gold) == normalize_answer(a_pred))


def compute_f1(a_gold, a_pred):
    g, p = normalize_answer(a_gold).split(), normalize_answer(a_pred).split()
    common = collections.Counter(g) & collections.Counter(p)
    same = sum(common.values())
    if not g or not p:
        return int(g == p)
    if same == 0:
        return 0
    prec, rec = same / len(p), same / len(g)
    return 2 * prec * rec / (prec + rec)


def squad_evaluate(examples, preds, no_answer_probs=None, no_answer_probability_threshold=1.0):
    exact, f1 = [], []
    for ex in examples:
        golds = [a["text"] for a in ex.answers if normalize_answer(a["text"])] or [""]
        pred = preds.get(ex.qas_id, "")
        exact.append(max(compute_exact(a, pred) for a in golds))
        f1.append(max(compute_f1(a, pred) for a in golds))
    n = max(len(exact), 1)
    return collections.OrderedDict([("exact", 100.0 * sum(exact) / n), ("f1", 100.0 * sum(f1) / n), ("total", len(exact))])


def compute_predictions_logits(all_examples, all_features, all_results, n_best_size, max_answer_length, do_lower_case, output_prediction_file,
                               output_nbest_file, output_null_log_odds_file, verbose_logging, version_2_with_negative, null_score_diff_threshold, tokenizer):
    by_id = {r.unique_id: r for r in all_results}
    preds = collections.OrderedDict()
    for f in all_features:
        ex = all_examples[f.example_index]
        r = by_id.get(f.unique_id)
        if r is None:
            continue
        s = max(range(len(r.start_logits)), key=lambda i: r.start_logits[i])
        e = max(range(s, min(s + max_answer_length, len(r.end_logits))), key=lambda i: r.end_logits[i])
        preds[ex.qas_id] = tokenizer.decode(f.input_ids[s : e + 1], skip_special_tokens=True)
    return preds


def compute_predictions_log_probs(all_examples, all_features, all_results, n_best_size, max_answer_length, output_prediction_file, output_nbest_file,
                                  output_null_log_odds_file, start_n_top, end_n_top, version_2_with_negative, tokenizer, verbose_logging):
    return compute_predictions_logits(all_examples, all_features, all_results, n_best_size, max_answer_length, False, output_prediction_file,
                                      output_nbest_file, output_null_log_odds_file, verbose_logging, version_2_with_negative, 0.0, tokenizer)
