"""Data collators with the real padding and label conventions."""
import torch


def _to_list(v):
    return v.tolist() if hasattr(v, "tolist") else v


def _rename_labels(batch):
    if "label" in batch:
        batch["labels"] = batch.pop("label")
    if "label_ids" in batch:
        batch["labels"] = batch.pop("label_ids")
    return batch


def default_data_collator(features, return_tensors="pt"):
    if not features:
        return {}
    if not isinstance(features[0], dict):
        features = [vars(f) for f in features]
    first = features[0]
    batch = {}
    if "label" in first and first["label"] is not None:
        lab = first["label"]
        lab = lab.item() if hasattr(lab, "item") and getattr(lab, "numel", lambda: 2)() == 1 else lab
        dtype = torch.int64 if isinstance(lab, int) else torch.float32
        batch["labels"] = torch.tensor([_to_list(f["label"]) for f in features], dtype=dtype)
    elif "label_ids" in first and first["label_ids"] is not None:
        batch["labels"] = torch.tensor([_to_list(f["label_ids"]) for f in features])
    for k, v in first.items():
        if k in ("label", "label_ids") or v is None or isinstance(v, str):
            continue
        if isinstance(v, torch.Tensor):
            batch[k] = torch.stack([f[k] for f in features])
        else:
            batch[k] = torch.tensor([_to_list(f[k]) for f in features])
    return batch


class DataCollatorWithPadding:
    def __init__(self, tokenizer, padding=True, max_length=None, pad_to_multiple_of=None, return_tensors="pt"):
        self.tokenizer, self.padding, self.max_length = tokenizer, padding, max_length
        self.pad_to_multiple_of, self.return_tensors = pad_to_multiple_of, return_tensors

    def __call__(self, features):
        batch = self.tokenizer.pad(features, padding=self.padding, max_length=self.max_length, pad_to_multiple_of=self.pad_to_multiple_of,
                                   return_tensors=self.return_tensors)
        return _rename_labels(dict(batch))


class DataCollatorForTokenClassification:
    def __init__(self, tokenizer, padding=True, max_length=None, pad_to_multiple_of=None, label_pad_token_id=-100, return_tensors="pt"):
        self.tokenizer, self.padding, self.max_length = tokenizer, padding, max_length
        self.pad_to_multiple_of, self.label_pad_token_id, self.return_tensors = pad_to_multiple_of, label_pad_token_id, return_tensors

    def __call__(self, features):
        label_name = "label" if "label" in features[0] else "labels"
        labels = [_to_list(f[label_name]) for f in features] if label_name in features[0] else None
        no_labels = [{k: v for k, v in f.items() if k != label_name} for f in features]
        batch = dict(self.tokenizer.pad(no_labels, padding=self.padding, max_length=self.max_length, pad_to_multiple_of=self.pad_to_multiple_of, return_tensors=None))
        if labels is None:
            return {k: torch.tensor(v) for k, v in batch.items()}
        t = len(batch["input_ids"][0])
        side = self.tokenizer.padding_side
        padded = [(l + [self.label_pad_token_id] * (t - len(l))) if side == "right" else ([self.label_pad_token_id] * (t - len(l)) + l) for l in labels]
        out = {}
        for k, v in batch.items():
            try:
                out[k] = torch.tensor(v)
            except ValueError:
                raise ValueError(
                    "Unable to create tensor, you should probably activate truncation and/or padding with 'padding=True' 'truncation=True' to have "
                    "batched tensors with the same length. Perhaps your features (`%s` in this case) have excessive nesting (inputs type `list` where type `int` is expected)." % k
                ) from None
        out["labels"] = torch.tensor(padded, dtype=torch.int64)
        return out


class DataCollatorForSeq2Seq:
    def __init__(self, tokenizer, model=None, padding=True, max_length=None, pad_to_multiple_of=None, label_pad_token_id=-100, return_tensors="pt"):
        self.tokenizer, self.model, self.padding, self.max_length = tokenizer, model, padding, max_length
        self.pad_to_multiple_of, self.label_pad_token_id, self.return_tensors = pad_to_multiple_of, label_pad_token_id, return_tensors

    def __call__(self, features, return_tensors=None):
        labels = [_to_list(f["labels"]) for f in features] if "labels" in features[0] else None
        rest = [{k: v for k, v in f.items() if k != "labels"} for f in features]
        batch = dict(self.tokenizer.pad(rest, padding=self.padding, max_length=self.max_length, pad_to_multiple_of=self.pad_to_multiple_of, return_tensors="pt"))
        if labels is not None:
            width = max(len(l) for l in labels)
            if self.pad_to_multiple_of:
                width = -(-width // self.pad_to_multiple_of) * self.pad_to_multiple_of
            side = self.tokenizer.padding_side
            rows = [(l + [self.label_pad_token_id] * (width - len(l))) if side == "right" else ([self.label_pad_token_id] * (width - len(l)) + l) for l in labels]
            batch["labels"] = torch.tensor(rows, dtype=torch.int64)
            if self.model is not None and hasattr(self.model, "prepare_decoder_input_ids_from_labels"):
                batch["decoder_input_ids"] = self.model.prepare_decoder_input_ids_from_labels(labels=batch["labels"])
        return batch


class DataCollatorForLanguageModeling:
    def __init__(self, tokenizer, mlm=True, mlm_probability=0.15, mask_replace_prob=0.8, random_replace_prob=0.1, pad_to_multiple_of=None, tf_experimental_compile=False, return_tensors="pt"):
        if mlm and tokenizer.mask_token is None:
            raise ValueError(
                "This tokenizer does not have a mask token which is necessary for masked language modeling. You should pass `mlm=False` to train on causal language modeling instead."
            )
        self.tokenizer, self.mlm, self.mlm_probability = tokenizer, mlm, mlm_probability
        self.pad_to_multiple_of, self.return_tensors = pad_to_multiple_of, return_tensors

    def __call__(self, examples):
        if isinstance(examples[0], dict):
            batch = dict(self.tokenizer.pad(examples, return_tensors="pt", pad_to_multiple_of=self.pad_to_multiple_of))
        else:
            batch = {"input_ids": torch.tensor([_to_list(e) for e in examples])}
        batch.pop("labels", None)
        ids = batch["input_ids"]
        if self.mlm:
            labels = ids.clone()
            masked = ids.clone()
            mask_id = self.tokenizer.mask_token_id
            specials = set(self.tokenizer.all_special_ids)
            for i, v in enumerate(ids.data):
                # deterministic 15% selection (the sim's stand-in for torch.bernoulli)
                if v not in specials and (i * 2654435761 + v) % 100 < self.mlm_probability * 100:
                    masked.data[i] = mask_id
                else:
                    labels.data[i] = -100
            batch["input_ids"], batch["labels"] = masked, labels
        else:
            labels = ids.clone()
            pad = self.tokenizer.pad_token_id
            if pad is not None:
                labels.data[:] = [-100 if v == pad else v for v in labels.data]
            batch["labels"] = labels
        return batch


class DefaultDataCollator:
    def __init__(self, return_tensors="pt"):
        self.return_tensors = return_tensors

    def __call__(self, features, return_tensors=None):
        return default_data_collator(features, return_tensors or self.return_tensors)


class DataCollatorForWholeWordMask(DataCollatorForLanguageModeling):
    """Masks whole words (sub-words starting with '##' follow their head); `chinese_ref` rows are accepted and dropped."""

    def __call__(self, examples):
        if isinstance(examples[0], dict):
            examples = [{k: v for k, v in e.items() if k != "chinese_ref"} for e in examples]
        return super().__call__(examples)
