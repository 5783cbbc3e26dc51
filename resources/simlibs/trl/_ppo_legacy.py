"""trl < 0.12's PPO API: PPOConfig(model_name=...), PPOTrainer(config, model, ref_model, tokenizer, dataset, data_collator),
generate/step/log_stats, AutoModelForCausalLMWithValueHead, and trl.core's LengthSampler."""
import random
from dataclasses import dataclass, field
from typing import Any, Dict, Optional

import torch
from torch import nn

from transformers import AutoModelForCausalLM

from _forgeenv_sim import progress as _progress


@dataclass
class PPOConfig:
    exp_name: str = "ppo"
    seed: int = 0
    log_with: Optional[str] = None
    task_name: Optional[str] = None
    model_name: Optional[str] = None
    query_dataset: Optional[str] = None
    reward_model: Optional[str] = None
    remove_unused_columns: bool = True
    tracker_kwargs: Dict[str, Any] = field(default_factory=dict)
    accelerator_kwargs: Dict[str, Any] = field(default_factory=dict)
    project_kwargs: Dict[str, Any] = field(default_factory=dict)
    tracker_project_name: str = "trl"
    push_to_hub_if_best_kwargs: Dict[str, Any] = field(default_factory=dict)
    steps: int = 20000
    learning_rate: float = 1.41e-5
    adap_kl_ctrl: bool = True
    init_kl_coef: Optional[float] = 0.2
    kl_penalty: str = "kl"
    target: Optional[float] = 6
    horizon: Optional[float] = 10000
    gamma: float = 1
    lam: float = 0.95
    cliprange: float = 0.2
    cliprange_value: float = 0.2
    vf_coef: float = 0.1
    batch_size: int = 256
    forward_batch_size: Optional[int] = None
    mini_batch_size: int = 1
    gradient_accumulation_steps: int = 1
    world_size: Optional[int] = None
    ppo_epochs: int = 4
    max_grad_norm: Optional[float] = None
    optimize_cuda_cache: bool = False
    optimize_device_cache: bool = False
    early_stopping: bool = False
    target_kl: float = 1
    compare_steps: int = 1
    ratio_threshold: float = 10.0
    use_score_scaling: bool = False
    use_score_norm: bool = False
    score_clip: Optional[float] = None
    whiten_rewards: bool = False
    is_encoder_decoder: Optional[bool] = None
    is_peft_model: Optional[bool] = None
    backward_batch_size: Optional[int] = None
    global_backward_batch_size: Optional[int] = None
    global_batch_size: Optional[int] = None

    def __post_init__(self):
        self.backward_batch_size = self.mini_batch_size * self.gradient_accumulation_steps
        self.world_size = 1
        self.global_backward_batch_size = self.backward_batch_size
        self.global_batch_size = self.batch_size
        if self.batch_size % self.backward_batch_size != 0:
            raise ValueError("`batch_size` (%d) must be a multiple of `mini_batch_size * gradient_accumulation_steps` (%d)" % (self.batch_size, self.backward_batch_size))


class AutoModelForCausalLMWithValueHead(nn.Module):
    def __init__(self, pretrained_model):
        super().__init__()
        self.pretrained_model = pretrained_model
        self.v_head = nn.Linear(4, 1)
        self.config = pretrained_model.config
        self.is_peft_model = hasattr(pretrained_model, "peft_config")

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, *model_args, **kwargs):
        if isinstance(pretrained_model_name_or_path, nn.Module):
            return cls(pretrained_model_name_or_path)
        peft_config = kwargs.pop("peft_config", None)
        base = AutoModelForCausalLM.from_pretrained(pretrained_model_name_or_path, *model_args, **kwargs)
        if peft_config is not None:
            from peft import get_peft_model

            base = get_peft_model(base, peft_config)
        return cls(base)

    @property
    def name_or_path(self):
        return self.pretrained_model.name_or_path

    def forward(self, input_ids=None, past_key_values=None, attention_mask=None, **kwargs):
        out = self.pretrained_model(input_ids=input_ids, attention_mask=attention_mask, **kwargs)
        return out

    def generate(self, *args, **kwargs):
        return self.pretrained_model.generate(*args, **kwargs)

    def save_pretrained(self, save_directory, *args, **kwargs):
        return self.pretrained_model.save_pretrained(save_directory, *args, **kwargs)

    def gradient_checkpointing_enable(self, *args, **kwargs):
        pass


class AutoModelForSeq2SeqLMWithValueHead(AutoModelForCausalLMWithValueHead):
    pass


class LengthSampler:
    def __init__(self, min_value, max_value):
        self.values = list(range(min_value, max_value))
        self._rng = random.Random(0)

    def __call__(self):
        return self._rng.choice(self.values)


def respond_to_batch(model, queries, txt_len=20, top_k=0, top_p=1.0):
    return model.generate(queries, max_new_tokens=txt_len)


class PPOTrainer:
    def __init__(self, config=None, model=None, ref_model=None, tokenizer=None, dataset=None, optimizer=None, data_collator=None,
                 num_shared_layers=None, lr_scheduler=None):
        from accelerate import Accelerator

        self.config = config
        self.model, self.ref_model, self.tokenizer = model, ref_model, tokenizer
        self.accelerator = Accelerator(log_with=config.log_with, gradient_accumulation_steps=config.gradient_accumulation_steps)
        self.optimizer = optimizer or torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=config.learning_rate * 1000)
        self.lr_scheduler = lr_scheduler
        self.dataset = dataset
        self.data_collator = data_collator
        if dataset is not None:
            if hasattr(dataset, "column_names") and config.remove_unused_columns:
                pass
            self.dataloader = torch.utils.data.DataLoader(dataset, batch_size=config.batch_size, collate_fn=data_collator, shuffle=True, drop_last=True)
        else:
            self.dataloader = None
        self.current_step = 0

    def generate(self, query_tensor, length_sampler=None, batch_size=4, return_prompt=True, generate_ref_response=False, **generation_kwargs):
        def one(q):
            n = length_sampler() if length_sampler is not None else generation_kwargs.get("max_new_tokens", 16)
            q = q if isinstance(q, torch.Tensor) else torch.tensor(q)
            ids = q.tolist()
            resp = [ids[i % max(1, len(ids))] for i in range(n)] if ids else [0] * n
            return torch.tensor(ids + resp if return_prompt else resp)

        if isinstance(query_tensor, list):
            return [one(q) for q in query_tensor]
        return one(query_tensor)

    def step(self, queries, responses, scores, response_masks=None):
        bs = self.config.batch_size
        if len(queries) != bs or len(responses) != bs or len(scores) != bs:
            raise ValueError("Batch size (%d) does not match number of examples - but got %d for: queries" % (bs, len(queries)))
        self.model.train()
        rows = [torch.cat([q, r]) if isinstance(q, torch.Tensor) else torch.tensor(list(q) + list(r)) for q, r in zip(queries, responses)]
        width = max(len(r) for r in rows)
        pad = self.tokenizer.pad_token_id or 0
        ids = torch.tensor([r.tolist() + [pad] * (width - len(r)) for r in rows])
        mask = torch.tensor([[1] * len(r) + [0] * (width - len(r)) for r in rows])
        labels = torch.tensor([r.tolist() + [-100] * (width - len(r)) for r in rows])
        out = self.model(input_ids=ids, attention_mask=mask, labels=labels)
        loss = out.loss
        self.optimizer.zero_grad()
        loss.backward()
        _progress.clear()  # this step prints its own line
        self.optimizer.step()
        self.current_step += 1
        value = float(loss.detach().item())
        print("step=%d loss=%.4f" % (self.current_step, value), flush=True)
        mean_score = sum(float(s) for s in scores) / len(scores)
        return {"ppo/loss/total": value, "ppo/mean_scores": mean_score, "ppo/learning_rate": self.config.learning_rate}

    def log_stats(self, stats, batch, rewards, columns_to_log=("query", "response")):
        pass

    def save_pretrained(self, save_directory):
        self.model.save_pretrained(save_directory)
        if self.tokenizer is not None:
            self.tokenizer.save_pretrained(save_directory)

    def _save_pretrained(self, save_directory):
        self.save_pretrained(save_directory)
