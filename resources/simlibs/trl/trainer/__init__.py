"""trl.trainer: the trainers and configs, ConstantLengthDataset."""
import trl as _trl

from .._trainers import *  # noqa: F401,F403
from .._trainers import BCOConfig, BCOTrainer, CPOConfig, CPOTrainer, DPOConfig, DPOTrainer, KTOConfig, KTOTrainer, ORPOConfig, ORPOTrainer  # noqa: F401
from .._trainers import GRPOConfig, GRPOTrainer, OnlineDPOConfig, OnlineDPOTrainer, RewardConfig, RewardTrainer  # noqa: F401

SFTTrainer = _trl.SFTTrainer


class ConstantLengthDataset:
    """Packs tokenized texts into fixed-length chunks of input_ids (an iterable dataset, as in trl)."""

    def __init__(self, tokenizer, dataset, dataset_text_field=None, formatting_func=None, infinite=False, seq_length=1024, num_of_sequences=1024,
                 chars_per_token=3.6, eos_token_id=0, shuffle=True, append_concat_token=True, add_special_tokens=True):
        self.tokenizer, self.dataset = tokenizer, dataset
        self.seq_length = seq_length
        self.infinite = infinite
        self.concat_token_id = tokenizer.eos_token_id if tokenizer.eos_token_id is not None else eos_token_id
        if formatting_func is None:
            formatting_func = lambda x: x[dataset_text_field]  # noqa: E731
        self.formatting_func = formatting_func
        self.add_special_tokens = add_special_tokens
        self._chunks = None

    def _build(self):
        import torch

        flat = []
        for row in self.dataset:
            flat.extend(self.tokenizer(self.formatting_func(row), add_special_tokens=self.add_special_tokens, truncation=False)["input_ids"] + [self.concat_token_id])
        n = self.seq_length
        self._chunks = [flat[i : i + n] for i in range(0, len(flat) - n + 1, n)] or [flat[:n]]
        return [{"input_ids": torch.tensor(c), "labels": torch.tensor(c)} for c in self._chunks]

    def __iter__(self):
        return iter(self._build())

    def __len__(self):
        return len(self._build())

    def __getitem__(self, i):
        return self._build()[i]
