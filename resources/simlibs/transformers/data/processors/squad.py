"""SQuAD examples and features (transformers.data.processors.squad): reading the SQuAD JSON format
and turning examples into fixed-length features with start/end token positions, one feature per
example (long contexts are truncated rather than split into doc_stride windows)."""
import json
import os

import torch


class SquadExample:
    def __init__(self, qas_id, question_text, context_text, answer_text, start_position_character, title, answers=[], is_impossible=False):
        self.qas_id, self.question_text, self.context_text = qas_id, question_text, context_text
        self.answer_text, self.title, self.is_impossible, self.answers = answer_text, title, is_impossible, answers
        self.doc_tokens = context_text.split()
        self.start_position = self.end_position = 0
        if start_position_character is not None and not is_impossible:
            before = len(context_text[:start_position_character].split())
            self.start_position = before
            self.end_position = min(before + max(len(answer_text.split()) - 1, 0), max(len(self.doc_tokens) - 1, 0))


class SquadFeatures:
    def __init__(self, input_ids, attention_mask, token_type_ids, cls_index, p_mask, example_index, unique_id, paragraph_len, token_is_max_context,
                 tokens, token_to_orig_map, start_position, end_position, is_impossible, qas_id=None, encoding=None):
        self.input_ids, self.attention_mask, self.token_type_ids = input_ids, attention_mask, token_type_ids
        self.cls_index, self.p_mask, self.example_index, self.unique_id = cls_index, p_mask, example_index, unique_id
        self.paragraph_len, self.token_is_max_context, self.tokens = paragraph_len, token_is_max_context, tokens
        self.token_to_orig_map, self.start_position, self.end_position = token_to_orig_map, start_position, end_position
        self.is_impossible, self.qas_id, self.encoding = is_impossible, qas_id, encoding


class SquadResult:
    def __init__(self, unique_id, start_logits, end_logits, start_top_index=None, end_top_index=None, cls_logits=None):
        self.unique_id, self.start_logits, self.end_logits = unique_id, start_logits, end_logits
        self.start_top_index, self.end_top_index, self.cls_logits = start_top_index, end_top_index, cls_logits


class SquadProcessor:
    train_file = None
    dev_file = None

    def _read(self, data_dir, filename, is_training):
        path = os.path.join(data_dir or "", filename) if data_dir else filename
        with open(path, encoding="utf-8") as f:
            data = json.load(f)["data"]
        out = []
        for entry in data:
            title = entry.get("title", "")
            for paragraph in entry["paragraphs"]:
                context = paragraph["context"]
                for qa in paragraph["qas"]:
                    impossible = qa.get("is_impossible", False)
                    answer, start, answers = None, None, []
                    if not impossible:
                        if is_training:
                            answer = qa["answers"][0]["text"]
                            start = qa["answers"][0]["answer_start"]
                        else:
                            answers = qa["answers"]
                    out.append(SquadExample(qa["id"], qa["question"], context, answer, start, title, answers, impossible))
        return out

    def get_train_examples(self, data_dir, filename=None):
        return self._read(data_dir, filename or self.train_file, True)

    def get_dev_examples(self, data_dir, filename=None):
        return self._read(data_dir, filename or self.dev_file, False)


class SquadV1Processor(SquadProcessor):
    train_file = "train-v1.1.json"
    dev_file = "dev-v1.1.json"


class SquadV2Processor(SquadProcessor):
    train_file = "train-v2.0.json"
    dev_file = "dev-v2.0.json"


def squad_convert_examples_to_features(examples, tokenizer, max_seq_length, doc_stride, max_query_length, is_training, padding_strategy="max_length",
                                       return_dataset=False, threads=1, tqdm_enabled=True):
    features = []
    for i, ex in enumerate(examples):
        q = tokenizer.tokenize(ex.question_text)[:max_query_length]
        doc = ex.doc_tokens
        enc = tokenizer(" ".join(q), " ".join(doc), truncation="only_second", max_length=max_seq_length, padding="max_length")
        ids = enc["input_ids"]
        start = end = 0
        if is_training and not ex.is_impossible:
            offset = len(q) + 2
            start = min(offset + ex.start_position, max_seq_length - 1)
            end = min(offset + ex.end_position, max_seq_length - 1)
        features.append(SquadFeatures(ids, enc["attention_mask"], enc.get("token_type_ids", [0] * len(ids)), 0, [0] * len(ids), i, 1000000000 + i,
                                      len(doc), {}, [], {}, start, end, ex.is_impossible, ex.qas_id))
    if not return_dataset:
        return features
    t = lambda k: torch.tensor([getattr(f, k) for f in features], dtype=torch.int64)  # noqa: E731
    all_input_ids, all_attention_masks, all_token_type_ids = t("input_ids"), t("attention_mask"), t("token_type_ids")
    all_cls_index, all_p_mask = t("cls_index"), torch.tensor([f.p_mask for f in features], dtype=torch.float32)
    all_is_impossible = torch.tensor([float(f.is_impossible) for f in features])
    if not is_training:
        all_feature_index = torch.arange(len(features))
        dataset = torch.utils.data.TensorDataset(all_input_ids, all_attention_masks, all_token_type_ids, all_feature_index, all_cls_index, all_p_mask)
    else:
        dataset = torch.utils.data.TensorDataset(all_input_ids, all_attention_masks, all_token_type_ids, t("start_position"), t("end_position"),
                                                 all_cls_index, all_p_mask, all_is_impossible)
    return features, dataset
