"""Simulated configs and models.

A model is a handful of tiny Linear layers named like the real checkpoint's modules (so PEFT finds
its target_modules), plus a deterministic forward pass:
- loss = floor + (L0 - floor) / (1 + q), where q = K * mean over trainable tensors of mean(p).
  Initial tensors are mean-centred (q = 0), and any optimiser step that follows the gradient raises
  q, so the loss falls step by step, reacts to the learning rate, and stays put when nothing trains.
- logits favour the label for a fraction of examples that grows with q (the labels are passed to
  forward during training and evaluation); without labels, the prediction is a hash of the input.
"""
import json
import math
import os

import torch
from torch import nn

from _forgeenv_sim import safetensors_io
from _forgeenv_sim import versions as _v
from _forgeenv_sim import warn as _warn
from _forgeenv_sim.hashing import stable_hash, unit

from . import _families

K_PROGRESS = 5000.0
SIM_HIDDEN = 4
SIM_LAYERS = 2

# head -> (L0 or None for ln(num_labels), floor fraction of L0, target accuracy)
HEAD_CURVES = {
    "seqcls": (None, 0.3, 0.9),
    "tokcls": (1.25, 0.12, 0.95),
    "qa": (3.8, 0.3, 0.72),
    "causal": (3.9, 0.74, 0.42),
    "seq2seq": (3.2, 0.5, 0.55),
    "mlm": (3.0, 0.6, 0.5),
    "imgcls": (None, 0.2, 0.9),
    "base": (1.0, 0.5, 0.5),
}


# --- outputs ---------------------------------------------------------------------------------
class ModelOutput(dict):
    _fields = ()

    def __init__(self, **kwargs):
        super().__init__()
        for k in self._fields:
            v = kwargs.get(k)
            if v is not None:
                dict.__setitem__(self, k, v)
        for k in self._fields:
            object.__setattr__(self, k, kwargs.get(k))

    def __getitem__(self, k):
        if isinstance(k, str):
            return dict.__getitem__(self, k)
        return self.to_tuple()[k]

    def __setattr__(self, k, v):
        object.__setattr__(self, k, v)
        if v is not None:
            dict.__setitem__(self, k, v)

    def to_tuple(self):
        return tuple(self[k] for k in self.keys())

    def __repr__(self):
        return "%s(%s)" % (type(self).__name__, ", ".join("%s=%r" % (k, v) for k, v in self.items()))


def _output(name, fields):
    return type(name, (ModelOutput,), {"_fields": tuple(fields), "__module__": "transformers.modeling_outputs"})


SequenceClassifierOutput = _output("SequenceClassifierOutput", ["loss", "logits", "hidden_states", "attentions"])
TokenClassifierOutput = _output("TokenClassifierOutput", ["loss", "logits", "hidden_states", "attentions"])
QuestionAnsweringModelOutput = _output("QuestionAnsweringModelOutput", ["loss", "start_logits", "end_logits", "hidden_states", "attentions"])
CausalLMOutputWithCrossAttentions = _output("CausalLMOutputWithCrossAttentions", ["loss", "logits", "past_key_values", "hidden_states", "attentions"])
CausalLMOutputWithPast = _output("CausalLMOutputWithPast", ["loss", "logits", "past_key_values", "hidden_states", "attentions"])
MaskedLMOutput = _output("MaskedLMOutput", ["loss", "logits", "hidden_states", "attentions"])
Seq2SeqLMOutput = _output("Seq2SeqLMOutput", ["loss", "logits", "past_key_values", "decoder_hidden_states", "encoder_last_hidden_state"])
ImageClassifierOutput = _output("ImageClassifierOutput", ["loss", "logits", "hidden_states", "attentions"])
BaseModelOutput = _output("BaseModelOutput", ["last_hidden_state", "hidden_states", "attentions"])


class _LazyLogits(torch.Tensor):
    """[B, T, V] language-model logits that are one-hot at a predicted token. V is the real vocab
    size, far too big to materialise in pure Python, so argmax/shape/slicing work on the predicted
    ids and anything else materialises (only small slices are allowed)."""

    def __init__(self, pred, shape):
        self._pred = pred  # flat B*T ids
        self._shape = tuple(shape)
        self.dtype = torch.float32
        self.requires_grad = False
        self.grad = None
        self._ctx = None
        self._retain = False
        self._dense = None

    @property
    def data(self):
        if self._dense is None:
            n = len(self._pred) * self._shape[-1]
            if n > 2_000_000:
                raise RuntimeError(
                    "forgeenv-sim: these language-model logits (%s) are too large to materialise; use logits.argmax(-1) "
                    "(e.g. in preprocess_logits_for_metrics)" % (list(self._shape),)
                )
            v = self._shape[-1]
            dense = [0.0] * n
            for i, p in enumerate(self._pred):
                dense[i * v + p] = 1.0
            self._dense = dense
        return self._dense

    @data.setter
    def data(self, value):
        self._dense = value

    def argmax(self, dim=None, keepdim=False, axis=None):
        d = axis if dim is None else dim
        if d in (-1, len(self._shape) - 1):
            return torch.Tensor._make(list(self._pred), self._shape[:-1], torch.int64)
        return torch.Tensor.argmax(self, dim, keepdim)

    def __getitem__(self, key):
        if not isinstance(key, tuple):
            key = (key,)
        if len(key) <= len(self._shape) - 1 and all(not isinstance(k, type(Ellipsis)) for k in key):
            from torch._tensor import _index_map

            idx, shape = _index_map(self._shape[:-1], key)
            return _LazyLogits([self._pred[i] for i in idx], shape + (self._shape[-1],))
        return torch.Tensor.__getitem__(self, key)

    def detach(self):
        return self

    def cpu(self):
        return self

    def float(self):
        return self

    def to(self, *args, **kwargs):
        return self

    def numel(self):
        return len(self._pred) * self._shape[-1]

    def __repr__(self):
        return "tensor(<simulated logits %s>)" % (list(self._shape),)


def _cat_lazy(parts, pad_index=-100):
    """Concatenates [B, T, V] lazy logits along the batch, padding T."""
    t = max(p._shape[1] for p in parts)
    v = parts[0]._shape[-1]
    pred = []
    b = 0
    for p in parts:
        pb, pt = p._shape[0], p._shape[1]
        for i in range(pb):
            row = p._pred[i * pt : (i + 1) * pt]
            pred.extend(row + [0] * (t - pt))
        b += pb
    return _LazyLogits(pred, (b, t, v))


# --- configs ---------------------------------------------------------------------------------
_CONFIG_DEFAULTS = dict(
    return_dict=True, output_hidden_states=False, output_attentions=False, torchscript=False, torch_dtype=None, use_bfloat16=False,
    tie_word_embeddings=True, is_encoder_decoder=False, is_decoder=False, add_cross_attention=False, tie_encoder_decoder=False,
    architectures=None, finetuning_task=None, problem_type=None, tokenizer_class=None, prefix=None, bos_token_id=None, pad_token_id=None,
    eos_token_id=None, sep_token_id=None, decoder_start_token_id=None, task_specific_params=None, max_length=20, min_length=0,
    hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1, classifier_dropout=None, use_cache=True, gradient_checkpointing=False,
    dropout=0.1, seq_classif_dropout=0.2, initializer_range=0.02, layer_norm_eps=1e-12, hidden_act="gelu", num_beams=1,
)
if _v.changed("transformers-from-pretrained-torch-dtype"):
    _CONFIG_DEFAULTS["dtype"] = None  # torch_dtype's new name

_FAMILY_CONFIG = {
    "bert": dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072, max_position_embeddings=512, type_vocab_size=2, pad_token_id=0),
    "distilbert": dict(dim=768, n_layers=6, n_heads=12, hidden_dim=3072, max_position_embeddings=512, pad_token_id=0, hidden_size=768),
    "roberta": dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072, max_position_embeddings=514, type_vocab_size=1, pad_token_id=1, bos_token_id=0, eos_token_id=2),
    "albert": dict(hidden_size=768, embedding_size=128, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072, max_position_embeddings=512, pad_token_id=0, bos_token_id=2, eos_token_id=3),
    "electra": dict(hidden_size=256, embedding_size=128, num_hidden_layers=12, num_attention_heads=4, intermediate_size=1024, max_position_embeddings=512, pad_token_id=0),
    "deberta-v2": dict(hidden_size=768, num_hidden_layers=6, num_attention_heads=12, max_position_embeddings=512, pad_token_id=0),
    "gpt2": dict(n_embd=768, n_layer=12, n_head=12, n_positions=1024, n_ctx=1024, bos_token_id=50256, eos_token_id=50256, hidden_size=768, max_position_embeddings=1024),
    "opt": dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, max_position_embeddings=2048, pad_token_id=1, bos_token_id=2, eos_token_id=2),
    "llama": dict(hidden_size=576, num_hidden_layers=30, num_attention_heads=9, max_position_embeddings=2048, bos_token_id=0, eos_token_id=0),
    "falcon": dict(hidden_size=4544, num_hidden_layers=32, num_attention_heads=71, max_position_embeddings=2048, bos_token_id=11, eos_token_id=11),
    "qwen2": dict(hidden_size=896, num_hidden_layers=24, num_attention_heads=14, max_position_embeddings=32768, bos_token_id=151643, eos_token_id=151643),
    "t5": dict(d_model=512, num_layers=6, num_heads=8, d_ff=2048, pad_token_id=0, eos_token_id=1, decoder_start_token_id=0, is_encoder_decoder=True, hidden_size=512, max_position_embeddings=100000,
               task_specific_params={"summarization": {"prefix": "summarize: ", "max_length": 200, "min_length": 30, "num_beams": 4}}),
    "bart": dict(d_model=768, encoder_layers=6, decoder_layers=6, pad_token_id=1, bos_token_id=0, eos_token_id=2, decoder_start_token_id=2, is_encoder_decoder=True, hidden_size=768, max_position_embeddings=1024),
    "vit": dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, image_size=224, patch_size=16, num_channels=3),
    "clip": dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, image_size=224, patch_size=32, num_channels=3),
}


class PretrainedConfig:
    model_type = ""
    _family = None

    def __init__(self, **kwargs):
        d = dict(_CONFIG_DEFAULTS)
        d.update(_FAMILY_CONFIG.get(self._family or "", {}))
        d["vocab_size"] = _families.FAMILIES[self._family]["vocab"] if self._family else 0
        id2label = kwargs.pop("id2label", None)
        label2id = kwargs.pop("label2id", None)
        num_labels = kwargs.pop("num_labels", None)
        d.update(kwargs)
        for k, v in d.items():
            setattr(self, k, v)
        if id2label is not None:
            self.id2label = {int(k): v for k, v in dict(id2label).items()}
        else:
            self.id2label = {i: "LABEL_%d" % i for i in range(num_labels if num_labels is not None else 2)}
        if num_labels is not None and id2label is not None and num_labels != len(self.id2label):
            _warn.log("You passed along `num_labels=%d` with an incompatible id to label map: %s. The number of labels wil be overwritten to %d." % (num_labels, self.id2label, len(self.id2label)))
        self.label2id = dict(label2id) if label2id is not None else {v: k for k, v in self.id2label.items()}
        self.name_or_path = d.get("name_or_path", d.get("_name_or_path", ""))

    @property
    def num_labels(self):
        return len(self.id2label)

    @num_labels.setter
    def num_labels(self, n):
        if len(self.id2label) != n:
            self.id2label = {i: "LABEL_%d" % i for i in range(n)}
            self.label2id = {v: k for k, v in self.id2label.items()}

    @property
    def use_return_dict(self):
        return self.return_dict

    def to_dict(self):
        out = {k: v for k, v in self.__dict__.items() if not k.startswith("_") and k != "name_or_path"}
        out["_name_or_path"] = self.name_or_path
        out["model_type"] = self.model_type
        out["id2label"] = {str(k): v for k, v in self.id2label.items()}
        out["transformers_version"] = _v.version("transformers")
        out["sim_family"] = self._family
        return out

    def to_json_string(self, use_diff=True):
        return json.dumps(self.to_dict(), indent=2, sort_keys=True, default=str) + "\n"

    def save_pretrained(self, save_directory, push_to_hub=False, **kwargs):
        if os.path.isfile(save_directory):
            raise AssertionError("Provided path (%s) should be a directory, not a file" % save_directory)
        os.makedirs(save_directory, exist_ok=True)
        with open(os.path.join(save_directory, "config.json"), "w", encoding="utf-8") as f:
            f.write(self.to_json_string())

    def update(self, config_dict):
        for k, v in config_dict.items():
            setattr(self, k, v)

    def __repr__(self):
        return "%s %s" % (type(self).__name__, self.to_json_string())

    def __eq__(self, other):
        return isinstance(other, PretrainedConfig) and self.to_dict() == other.to_dict()

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, cache_dir=None, force_download=False, local_files_only=False, token=None, revision="main", **kwargs):
        cfg, _ = _load_config(pretrained_model_name_or_path, kwargs, cls)
        return cfg

    @classmethod
    def from_dict(cls, config_dict, **kwargs):
        d = dict(config_dict)
        d.update(kwargs)
        d.pop("model_type", None)
        d.pop("transformers_version", None)
        return cls(**d)


_CONFIG_CLASSES = {}


def config_class(family):
    if family not in _CONFIG_CLASSES:
        fam = _families.FAMILIES[family]
        mod = family.replace("-", "_")
        _CONFIG_CLASSES[family] = type(
            fam["prefix"] + "Config", (PretrainedConfig,), {"model_type": family, "_family": family, "__module__": "transformers.models.%s.configuration_%s" % (mod, mod)}
        )
    return _CONFIG_CLASSES[family]


def _not_found(name):
    return OSError(
        "%s is not a local folder and is not a valid model identifier listed on 'https://huggingface.co/models'\n"
        "If this is a private repository, make sure to pass a token having permission to this repo either by logging in with "
        "`huggingface-cli login` or by passing `token=<your_token>`" % name
    )


_LOADING_KWARGS = {
    "torch_dtype", "device_map", "low_cpu_mem_usage", "trust_remote_code", "attn_implementation", "output_loading_info", "resume_download",
    "proxies", "subfolder", "from_tf", "from_flax", "offload_folder", "offload_state_dict", "variant", "_fast_init", "max_memory",
    "use_flash_attention_2", "tp_plan", "key_mapping", "gguf_file", "_from_auto", "_from_pipeline", "code_revision", "mirror", "local_files_only",
    "cache_dir", "force_download", "revision", "use_safetensors", "weights_only", "state_dict", "token", "config", "ignore_mismatched_sizes",
}
if _v.changed("transformers-from-pretrained-torch-dtype"):
    _LOADING_KWARGS.add("dtype")  # the new spelling of torch_dtype


def _load_config(name, kwargs, cls=None):
    """(config, sim_extra) for a hub id or a saved folder; pops the config kwargs it uses."""
    name = str(name)
    if "use_auth_token" in kwargs and not _v.changed("transformers-from-pretrained-use-auth-token"):
        # Removed in 5.0: it then travels on with the model's other unknown keywords (TypeError).
        kwargs.pop("use_auth_token")
        _warn.future("The `use_auth_token` argument is deprecated and will be removed in v5 of Transformers. Please use `token` instead.", stacklevel=5)
    if os.path.isdir(name):
        p = os.path.join(name, "config.json")
        if not os.path.exists(p):
            raise OSError("%s does not appear to have a file named config.json. Checkout 'https://huggingface.co/%s/tree/None' for available files." % (name, name))
        with open(p, encoding="utf-8") as f:
            saved = json.load(f)
        family = saved.get("sim_family")
        if family not in _families.FAMILIES:
            raise ValueError("Unrecognized model in %s. Should have a `model_type` key in its config.json" % name)
        extra = {"saved": True, "labels": [saved["id2label"][k] for k in sorted(saved.get("id2label", {}), key=int)], "head": None}
        base = {k: v for k, v in saved.items() if k not in ("sim_family", "model_type", "transformers_version", "_name_or_path")}
        base["id2label"] = {int(k): v for k, v in saved.get("id2label", {}).items()}
        base["sim_base_checkpoint"] = saved.get("sim_base_checkpoint", name)
    else:
        hit = _families.resolve(name)
        if hit is None:
            raise _not_found(name)
        family, extra = hit
        extra = dict(extra)
        base = {"sim_base_checkpoint": name}
        if "vocab_size" in extra:
            base["vocab_size"] = extra["vocab_size"]
        if extra.get("model_vocab_pad"):
            # Many checkpoints pad their embedding matrix beyond the tokenizer (pythia: 50304 rows for 50277 tokens).
            base["vocab_size"] = base.get("vocab_size", _families.FAMILIES[family]["vocab"]) + extra["model_vocab_pad"]
        if extra.get("labels"):
            base["id2label"] = {i: l for i, l in enumerate(extra["labels"])}
    ccls = config_class(family)
    cfg = ccls(**base)
    cfg.name_or_path = name
    # config kwargs given to from_pretrained
    for k in list(kwargs):
        if k in ("num_labels", "id2label", "label2id"):
            continue
        if hasattr(cfg, k) and k not in _LOADING_KWARGS:
            setattr(cfg, k, kwargs.pop(k))
    id2label = kwargs.pop("id2label", None)
    label2id = kwargs.pop("label2id", None)
    num_labels = kwargs.pop("num_labels", None)
    if id2label is not None:
        cfg.id2label = {int(k): v for k, v in dict(id2label).items()}
        cfg.label2id = dict(label2id) if label2id is not None else {v: k for k, v in cfg.id2label.items()}
    elif num_labels is not None:
        cfg.num_labels = num_labels
    if label2id is not None and id2label is None:
        cfg.label2id = dict(label2id)
    return cfg, extra


class AutoConfig:
    def __init__(self):
        raise EnvironmentError("AutoConfig is designed to be instantiated using the `AutoConfig.from_pretrained(pretrained_model_name_or_path)` method.")

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, **kwargs):
        for k in ("cache_dir", "force_download", "local_files_only", "token", "revision", "trust_remote_code"):
            kwargs.pop(k, None)
        return_unused = kwargs.pop("return_unused_kwargs", False)
        cfg, _ = _load_config(pretrained_model_name_or_path, kwargs)
        for k, v in list(kwargs.items()):
            setattr(cfg, k, v)
        return (cfg, {}) if return_unused else cfg

    @classmethod
    def for_model(cls, model_type, **kwargs):
        return config_class(model_type)(**kwargs)


# --- models ----------------------------------------------------------------------------------
class _Container(nn.Module):
    pass


class _ShapeOnly:
    """The embedding matrix as scripts inspect it (shape, dtype, device) without allocating vocab x hidden floats."""

    def __init__(self, shape):
        self.shape = torch.Size(shape)
        self.dtype = torch.float32
        self.device = torch.device("cpu")
        self.requires_grad = True

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[dim]


def _centred_linear(i, o, seed):
    lin = nn.Linear(i, o)
    import random as _r

    rng = _r.Random(seed)
    for p in (lin.weight, lin.bias):
        vals = [rng.uniform(-0.5, 0.5) for _ in p.data]
        m = sum(vals) / len(vals)
        p.data[:] = [v - m for v in vals]
    return lin


def _attach(root, path, name, module):
    node = root
    for part in [p for p in path.split(".") if p]:
        child = node._modules.get(part)
        if child is None:
            child = _Container()
            node.add_module(part, child)
        node = child
    node.add_module(name, module)


# forward parameters per family/head (the names the real forward() accepts)
_TEXT = ["input_ids", "attention_mask", "token_type_ids", "position_ids", "head_mask", "inputs_embeds"]
_OUT = ["output_attentions", "output_hidden_states", "return_dict"]


def forward_params(family, head):
    if _families.FAMILIES[family]["style"] == "image":
        base = ["pixel_values", "head_mask", "labels", "output_attentions", "output_hidden_states", "interpolate_pos_encoding", "return_dict"]
        return base
    text = list(_TEXT)
    if family in ("distilbert",):
        text = ["input_ids", "attention_mask", "head_mask", "inputs_embeds"]
    if family in ("gpt2",):
        text = ["input_ids", "past_key_values", "attention_mask", "token_type_ids", "position_ids", "head_mask", "inputs_embeds"]
    if family in ("opt", "llama", "qwen2", "falcon"):
        text = ["input_ids", "attention_mask", "position_ids", "past_key_values", "inputs_embeds"]
    if family in ("t5", "bart"):
        text = ["input_ids", "attention_mask", "decoder_input_ids", "decoder_attention_mask", "head_mask", "decoder_head_mask",
                "cross_attn_head_mask", "encoder_outputs", "past_key_values", "inputs_embeds", "decoder_inputs_embeds"]
    if head == "qa":
        tail = ["start_positions", "end_positions"]
    elif head == "base":
        tail = []
    else:
        tail = ["labels"]
    extra = ["use_cache"] if family in ("gpt2", "opt", "llama", "qwen2", "falcon", "t5", "bart") else []
    if family in ("llama", "qwen2", "opt", "falcon") and head == "causal":
        if _v.changed("transformers-causal-lm-logits-to-keep-added"):
            extra += ["cache_position", "logits_to_keep"]
        elif _v.changed("transformers-causal-lm-num-logits-to-keep-added"):
            extra += ["cache_position", "num_logits_to_keep"]
        else:
            extra += ["cache_position"]
    return text + tail + extra + _OUT


class PreTrainedModel(nn.Module):
    _family = None
    _head = "base"
    config_class = PretrainedConfig
    main_input_name = "input_ids"
    supports_gradient_checkpointing = True
    _keys_to_ignore_on_load_missing = None

    def __init__(self, config, *inputs, **kwargs):
        super().__init__()
        if inputs or kwargs:
            k = next(iter(kwargs)) if kwargs else None
            if k:
                raise _warn.unexpected_kwarg(type(self).__name__ + ".__init__", k)
            raise TypeError("%s.__init__() takes 2 positional arguments but %d were given" % (type(self).__name__, 2 + len(inputs)))
        if not isinstance(config, PretrainedConfig):
            raise ValueError(
                "Parameter config in `%s(config)` should be an instance of class `PretrainedConfig`. To create a model from a pretrained model use `model = %s.from_pretrained(PRETRAINED_MODEL_NAME)`"
                % (type(self).__name__, type(self).__name__)
            )
        self.config = config
        fam = _families.FAMILIES[self._family]
        self.name_or_path = config.name_or_path
        base_seed = stable_hash(getattr(config, "sim_base_checkpoint", "") or self._family)
        base = _Container()
        if fam["base_attr"]:
            self.add_module(fam["base_attr"], base)
        else:
            base = self
        for i in range(SIM_LAYERS):
            path = fam["layer_path"].format(i=i)
            for n in fam["attn"]:
                _attach(base, path, n, _centred_linear(SIM_HIDDEN, SIM_HIDDEN, stable_hash(base_seed, path, n)))
        self.warnings_issued = {}
        self.is_parallelizable = False
        self.model_parallel = False
        self.is_loaded_in_8bit = False
        self.is_loaded_in_4bit = False
        self._sim_new_params = []
        head_seed = int(torch.randint(0, 2 ** 31 - 1, (1,)).item())
        self._build_head(head_seed)
        self._sim_scale = K_PROGRESS / max(1, sum(1 for _ in self.parameters()))
        self.generation_config = GenerationConfig.from_model_config(config) if self._head in ("causal", "seq2seq") else None
        self.train(False)

    def _build_head(self, seed):
        head, n = self._head, self.config.num_labels
        fam = self._family
        names = []
        if head == "seqcls":
            if fam == "distilbert":
                names = [("pre_classifier", SIM_HIDDEN), ("classifier", n)]
            elif fam in ("roberta", "electra"):
                names = [("classifier.dense", SIM_HIDDEN), ("classifier.out_proj", n)]
            elif fam in ("gpt2", "opt", "llama", "qwen2", "falcon"):
                names = [("score", n)]
            elif fam == "bart":
                names = [("classification_head.dense", SIM_HIDDEN), ("classification_head.out_proj", n)]
            else:
                names = [("classifier", n)]
        elif head == "tokcls":
            names = [("classifier", n)] if fam not in ("gpt2",) else [("classifier", n)]
        elif head == "qa":
            names = [("qa_outputs", 2)]
        elif head in ("causal", "seq2seq", "mlm"):
            names = [("lm_head", SIM_HIDDEN)] if fam not in ("bert", "distilbert", "roberta", "albert", "electra", "deberta-v2") else [("cls.predictions.decoder" if fam == "bert" else "vocab_projector" if fam == "distilbert" else "lm_head.decoder", SIM_HIDDEN)]
        elif head == "imgcls":
            names = [("classifier", n)]
        for i, (dotted, out) in enumerate(names):
            path, _, leaf = dotted.rpartition(".")
            _attach(self, path, leaf, _centred_linear(SIM_HIDDEN, out, stable_hash(seed, dotted)))
            self._sim_new_params += [dotted + ".weight", dotted + ".bias"]

    # -- properties --
    @property
    def device(self):
        return torch.device("cpu")

    @property
    def dtype(self):
        return torch.float32

    @property
    def base_model(self):
        attr = _families.FAMILIES[self._family]["base_attr"]
        return self._modules.get(attr, self) if attr else self

    @property
    def is_gradient_checkpointing(self):
        return getattr(self, "_gc", False)

    def can_generate(self):
        return self._head in ("causal", "seq2seq")

    def num_parameters(self, only_trainable=False, exclude_embeddings=False):
        return sum(p.numel() for p in self.parameters() if p.requires_grad or not only_trainable)

    def gradient_checkpointing_enable(self, gradient_checkpointing_kwargs=None):
        self._gc = True

    def gradient_checkpointing_disable(self):
        self._gc = False

    def enable_input_require_grads(self):
        return None

    def get_input_embeddings(self):
        emb = _Container()
        emb.num_embeddings = self.config.vocab_size
        emb.embedding_dim = getattr(self.config, "hidden_size", SIM_HIDDEN)
        emb.weight = _ShapeOnly((emb.num_embeddings, emb.embedding_dim))
        return emb

    def get_output_embeddings(self):
        return self._modules.get("lm_head")

    def resize_token_embeddings(self, new_num_tokens=None, pad_to_multiple_of=None, mean_resizing=True):
        if new_num_tokens is not None:
            n = new_num_tokens
            if pad_to_multiple_of:
                n = -(-n // pad_to_multiple_of) * pad_to_multiple_of
            self.config.vocab_size = n
        return self.get_input_embeddings()

    def tie_weights(self):
        return None

    def post_init(self):
        return None

    def prepare_decoder_input_ids_from_labels(self, labels):
        return _shift_right(labels, self.config.decoder_start_token_id or 0, self.config.pad_token_id or 0)

    def push_to_hub(self, repo_id=None, *args, **kwargs):
        from _forgeenv_sim import hub

        return hub.push(self, repo_id or kwargs.get("repo_name") or self.name_or_path, **kwargs)

    # -- the simulated computation --
    def _progress(self):
        """q = scale * (sum over all parameter tensors of their mean). Trainable tensors enter the
        graph; frozen ones are constants. `scale` is fixed when the model is built, so training
        fewer tensors (LoRA) moves q more slowly, and merging adapters preserves it."""
        const, total = 0.0, None
        for p in self.parameters():
            if p.requires_grad and torch.is_grad_enabled():
                m = p.mean()
                total = m if total is None else total + m
            elif p.data:
                const += sum(p.data) / len(p.data)
        q = total + const if total is not None else torch.tensor(const)
        return q * self._sim_scale

    def _curve(self):
        l0, floor_frac, target = HEAD_CURVES[self._head]
        n = max(self.config.num_labels, 2)
        if l0 is None:
            l0 = math.log(n) if not (self._head == "seqcls" and self.config.num_labels == 1) else 1.0
        return l0, l0 * floor_frac, target

    def _loss_and_quality(self, has_labels):
        q = self._progress()
        qv = q.item()
        l0, floor, target = self._curve()
        if qv >= 0:
            loss = (1.0 / (1.0 + q)) * (l0 - floor) + floor
            s = 1.0 - math.exp(-1.5 * qv)  # quality saturates sooner than the loss curve
        else:
            loss = (1.0 - q) * (l0 - floor) + floor
            s = 0.0
        return (loss if has_labels else None), s, target, q

    def _check_ids(self, name, t):
        if t is None:
            return None
        if not isinstance(t, torch.Tensor):
            raise AttributeError("'%s' object has no attribute 'size'" % type(t).__name__)
        if t.dtype.kind == "f":
            raise RuntimeError(
                "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got torch.FloatTensor instead (while checking arguments for embedding)"
            )
        if t.dim() == 1:
            raise ValueError("not enough values to unpack (expected 2, got 1)")
        if t.dim() != 2:
            raise ValueError("too many values to unpack (expected 2)")
        return t

    def _validate(self, kw):
        ids = kw.get("input_ids")
        emb = kw.get("inputs_embeds")
        if _families.FAMILIES[self._family]["style"] == "image":
            px = kw.get("pixel_values")
            if px is None:
                raise ValueError("You have to specify pixel_values")
            if not isinstance(px, torch.Tensor):
                raise AttributeError("'%s' object has no attribute 'shape'" % type(px).__name__)
            if px.dim() != 4:
                raise ValueError("not enough values to unpack (expected 4, got %d)" % px.dim())
            if px.shape[1] != self.config.num_channels:
                raise ValueError(
                    "Make sure that the channel dimension of the pixel values match with the one set in the configuration. Expected %d but got %d."
                    % (self.config.num_channels, px.shape[1])
                )
            return px.shape[0], 1
        if ids is None and emb is None:
            raise ValueError("You have to specify either input_ids or inputs_embeds")
        if ids is not None and emb is not None:
            raise ValueError("You cannot specify both input_ids and inputs_embeds at the same time")
        if ids is None:
            return emb.shape[0], emb.shape[1]
        self._check_ids("input_ids", ids)
        b, t = ids.shape
        vocab = self.config.vocab_size
        for v in ids.data:
            if v < 0 or v >= vocab:
                raise IndexError("index out of range in self")
        max_pos = getattr(self.config, "max_position_embeddings", None) or 0
        if self._family in ("bert", "distilbert", "roberta", "albert", "electra", "gpt2", "bart") and max_pos and t > max_pos - (2 if self._family == "roberta" else 0):
            raise RuntimeError(
                "The size of tensor a (%d) must match the size of tensor b (%d) at non-singleton dimension 1" % (t, max_pos - (2 if self._family == "roberta" else 0))
            )
        mask = kw.get("attention_mask")
        if mask is not None:
            if not isinstance(mask, torch.Tensor):
                raise AttributeError("'%s' object has no attribute 'size'" % type(mask).__name__)
            if tuple(mask.shape) != (b, t):
                raise RuntimeError("The size of tensor a (%d) must match the size of tensor b (%d) at non-singleton dimension 3" % (mask.shape[-1], t))
        tt = kw.get("token_type_ids")
        if tt is not None and isinstance(tt, torch.Tensor):
            tv = getattr(self.config, "type_vocab_size", 2)
            if any(v >= tv or v < 0 for v in tt.data):
                raise IndexError("index out of range in self")
        return b, t

    def _row_keys(self, kw, b, t):
        ids = kw.get("input_ids")
        if ids is not None:
            return [tuple(ids.data[i * t : (i + 1) * t]) for i in range(b)]
        px = kw.get("pixel_values")
        if px is not None:
            n = len(px.data) // max(b, 1)
            return [tuple(round(x, 3) for x in px.data[i * n : i * n + 24]) for i in range(b)]
        return [(i,) for i in range(b)]

    def forward(self, *args, **kwargs):
        params = forward_params(self._family, self._head)
        if len(args) > len(params):
            raise TypeError("%s.forward() takes from 1 to %d positional arguments but %d were given" % (type(self).__name__, len(params) + 1, len(args) + 1))
        kw = dict(zip(params, args))
        for k, v in kwargs.items():
            if k not in params:
                raise _warn.unexpected_kwarg(type(self).__name__ + ".forward", k)
            if k in kw:
                raise TypeError("%s.forward() got multiple values for argument '%s'" % (type(self).__name__, k))
            kw[k] = v
        b, t = self._validate(kw)
        return getattr(self, "_forward_" + self._head)(kw, b, t)

    def _labels_tensor(self, kw, name="labels"):
        y = kw.get(name)
        if y is None:
            return None
        if not isinstance(y, torch.Tensor):
            raise AttributeError("'%s' object has no attribute 'view'" % type(y).__name__)
        return y

    def _class_logits(self, keys, labels, n, p, q, tag, per_token=None):
        data = []
        for i, key in enumerate(keys):
            positions = per_token if per_token is not None else 1
            for j in range(positions):
                y = None
                if labels is not None:
                    y = labels[i][j] if per_token is not None else labels[i]
                h = stable_hash(self._family, tag, key, j)
                if y is not None and 0 <= y < n and unit(h, "c") < p:
                    pred = y
                elif y is not None and 0 <= y < n and n > 1:
                    pred = (y + 1 + h % (n - 1)) % n
                else:
                    pred = h % n
                data.extend([(2.0 + 0.5 * unit(h, c)) if c == pred else (-1.0 + 0.3 * unit(h, c)) for c in range(n)])
        return data

    def _scaled(self, data, shape, q):
        base = torch.Tensor._make(data, shape, torch.float32)
        if isinstance(q, torch.Tensor) and q.requires_grad:
            return base * (q * 0.05 + 1.0)
        return base

    def _forward_seqcls(self, kw, b, t):
        y = self._labels_tensor(kw)
        n = self.config.num_labels
        loss, s, target, q = self._loss_and_quality(y is not None)
        labels = None
        if y is not None:
            regression = n == 1 or self.config.problem_type == "regression"
            if regression:
                if y.dtype.kind != "f" and n == 1:
                    raise RuntimeError("Found dtype Long but expected Float")
            else:
                if y.dtype.kind == "f" and self.config.problem_type != "multi_label_classification":
                    raise RuntimeError("expected scalar type Long but found Float")
                if y.numel() != b:
                    raise ValueError("Expected input batch_size (%d) to match target batch_size (%d)." % (b, y.numel()))
                for v in y.data:
                    if v < 0 or v >= n:
                        raise IndexError("Target %d is out of bounds." % v)
                labels = [int(v) for v in y.data]
        chance = 1.0 / max(n, 1)
        p = chance + (target - chance) * s
        data = self._class_logits(self._row_keys(kw, b, t), labels, n, p, q, "seqcls")
        if self._family in ("gpt2", "opt", "llama", "qwen2", "falcon") and b > 1 and self.config.pad_token_id is None:
            raise ValueError("Cannot handle batch sizes > 1 if no padding token is defined.")
        out_cls = ImageClassifierOutput if self._head == "imgcls" else SequenceClassifierOutput
        logits = self._scaled(data, (b, n), q)
        if n == 1 and y is None and self._head == "seqcls" and isinstance(q, torch.Tensor) and q.requires_grad:
            # A reward head scored without labels (pairwise reward modelling): its score rises with the
            # input's length as training progresses, so a pairwise loss over data whose preferred answers
            # are longer (the synthetic preference datasets' convention) decreases with training.
            mask = kw.get("attention_mask")
            lengths = [sum(1 for v in mask.data[i * t : (i + 1) * t] if v) for i in range(b)] if mask is not None else [t] * b
            logits = logits + q * torch.tensor([[0.1 * n_tok] for n_tok in lengths])
        return out_cls(loss=loss, logits=logits)

    _forward_imgcls = _forward_seqcls

    def _forward_tokcls(self, kw, b, t):
        y = self._labels_tensor(kw)
        n = self.config.num_labels
        loss, s, target, q = self._loss_and_quality(y is not None)
        labels = None
        if y is not None:
            if tuple(y.shape) != (b, t):
                raise ValueError("Expected input batch_size (%d) to match target batch_size (%d)." % (b * t, y.numel()))
            for v in y.data:
                if v != -100 and (v < 0 or v >= n):
                    raise IndexError("Target %d is out of bounds." % v)
            labels = [y.data[i * t : (i + 1) * t] for i in range(b)]
        p = 1.0 / n + (target - 1.0 / n) * s
        keys = self._row_keys(kw, b, t)
        data = self._class_logits(keys, labels, n, p, q, "tokcls", per_token=t)
        return TokenClassifierOutput(loss=loss, logits=self._scaled(data, (b, t, n), q))

    def _forward_qa(self, kw, b, t):
        sp, ep = self._labels_tensor(kw, "start_positions"), self._labels_tensor(kw, "end_positions")
        has = sp is not None and ep is not None
        loss, s, target, q = self._loss_and_quality(has)
        keys = self._row_keys(kw, b, t)
        p = target * s
        starts, ends = [], []
        for i, key in enumerate(keys):
            h = stable_hash(self._family, "qa", key)
            if has and unit(h, "c") < p:
                ps, pe = min(int(sp.data[i]), t - 1), min(int(ep.data[i]), t - 1)
            else:
                ps = h % t
                pe = min(t - 1, ps + h % 3)
            starts.extend([(3.0 if j == ps else -1.0 + 0.3 * unit(h, "s", j)) for j in range(t)])
            ends.extend([(3.0 if j == pe else -1.0 + 0.3 * unit(h, "e", j)) for j in range(t)])
        return QuestionAnsweringModelOutput(loss=loss, start_logits=self._scaled(starts, (b, t), q), end_logits=self._scaled(ends, (b, t), q))

    def _lm_logits(self, keys, labels, t, shift, p, tag):
        v = self.config.vocab_size
        pred = []
        for i, key in enumerate(keys):
            for j in range(t):
                h = stable_hash(self._family, tag, key, j)
                target = None
                if labels is not None:
                    jj = j + shift
                    if jj < t:
                        target = labels[i][jj]
                if target is not None and target >= 0 and unit(h, "c") < p:
                    pred.append(int(target))
                else:
                    row = key if key else (0,)
                    pred.append(int(row[h % len(row)]) if row and isinstance(row[0], int) else h % v)
        return _LazyLogits(pred, (len(keys), t, v))

    def _forward_causal(self, kw, b, t):
        y = self._labels_tensor(kw)
        loss, s, target, q = self._loss_and_quality(y is not None)
        labels = None
        if y is not None:
            if tuple(y.shape) != (b, t):
                raise ValueError("Expected input batch_size (%d) to match target batch_size (%d)." % ((t - 1) * b, max(y.numel() - y.shape[0], 0)))
            labels = [y.data[i * t : (i + 1) * t] for i in range(b)]
        p = 0.02 + (target - 0.02) * s
        logits = self._lm_logits(self._row_keys(kw, b, t), labels, t, 1, p, "causal")
        cls = CausalLMOutputWithCrossAttentions if self._family == "gpt2" else CausalLMOutputWithPast
        return cls(loss=loss, logits=logits)

    _forward_mlm = _forward_causal

    def _forward_seq2seq(self, kw, b, t):
        y = self._labels_tensor(kw)
        dec = kw.get("decoder_input_ids")
        if y is None and dec is None:
            raise ValueError(
                "You have to specify either decoder_input_ids or decoder_inputs_embeds"
            )
        loss, s, target, q = self._loss_and_quality(y is not None)
        ref = y if y is not None else dec
        tl = ref.shape[1]
        labels = [ref.data[i * tl : (i + 1) * tl] for i in range(b)] if y is not None else None
        p = 0.02 + (target - 0.02) * s
        keys = self._row_keys(kw, b, t)
        logits = self._lm_logits(keys, labels, tl, 0, p, "seq2seq")
        return Seq2SeqLMOutput(loss=loss, logits=logits)

    def _forward_base(self, kw, b, t):
        hidden = torch.Tensor._make([unit(self._family, i) for i in range(b * t * SIM_HIDDEN)], (b, t, SIM_HIDDEN), torch.float32)
        return BaseModelOutput(last_hidden_state=hidden)

    # -- generation --
    def generate(self, inputs=None, generation_config=None, logits_processor=None, stopping_criteria=None, prefix_allowed_tokens_fn=None,
                 synced_gpus=None, assistant_model=None, streamer=None, negative_prompt_ids=None, negative_prompt_attention_mask=None, **kwargs):
        if not self.can_generate():
            raise TypeError(
                "The current model class (%s) is not compatible with `.generate()`, as it doesn't have a language model head." % type(self).__name__
            )
        gen = {"max_length": 20, "max_new_tokens": None, "num_return_sequences": 1, "pad_token_id": None, "eos_token_id": None}
        if self.generation_config is not None:
            gen.update({k: v for k, v in vars(self.generation_config).items() if v is not None})
        if generation_config is not None:
            gen.update({k: v for k, v in vars(generation_config).items() if v is not None})
        ids = inputs if inputs is not None else kwargs.pop("input_ids", None)
        model_kwargs = {}
        for k in list(kwargs):
            if k in GenerationConfig._FIELDS:
                gen[k] = kwargs.pop(k)
            elif k in ("attention_mask", "token_type_ids", "decoder_input_ids", "use_cache", "position_ids"):
                model_kwargs[k] = kwargs.pop(k)
        if kwargs:
            raise ValueError(
                "The following `model_kwargs` are not used by the model: %s (note: typos in the generate arguments will also show up in this list)" % list(kwargs)
            )
        if ids is None:
            raise ValueError("`inputs` or `input_ids` must be provided to generate")
        self._check_ids("input_ids", ids)
        b, t = ids.shape
        pad = gen.get("pad_token_id") if gen.get("pad_token_id") is not None else self.config.pad_token_id
        eos = gen.get("eos_token_id") if gen.get("eos_token_id") is not None else self.config.eos_token_id
        if isinstance(eos, list):
            eos = eos[0]
        if "attention_mask" not in model_kwargs and self._head == "causal" and pad is None:
            _warn.log(
                "The attention mask and the pad token id were not set. As a consequence, you may observe unexpected behavior. "
                "Please pass your input's `attention_mask` to obtain reliable results."
            )
        if pad is None and eos is not None and self._head == "causal":
            _warn.log("Setting `pad_token_id` to `eos_token_id`:%s for open-end generation." % eos)
            pad = eos
        new = gen.get("max_new_tokens")
        if new is None:
            new = max(0, gen.get("max_length", 20) - (t if self._head == "causal" else 1))
        rows = []
        for i in range(b):
            prompt = [v for v in ids.data[i * t : (i + 1) * t]]
            mask = model_kwargs.get("attention_mask")
            content = [v for j, v in enumerate(prompt) if (mask is None or mask.data[i * t + j]) and v not in (pad, eos)]
            if self._head == "causal":
                ext = []
                for k in range(new):
                    h = stable_hash("gen", tuple(content), k)
                    ext.append(content[h % len(content)] if content else (eos or 0))
                rows.append(prompt + ext)
            else:
                start = self.config.decoder_start_token_id or 0
                body = content[: max(0, new - 1)]
                rows.append([start] + body + ([eos] if eos is not None and len(body) < new else []))
        width = max(len(r) for r in rows)
        out = []
        for r in rows:
            out.extend(r + [pad if pad is not None else 0] * (width - len(r)))
        n_ret = gen.get("num_return_sequences") or 1
        res = torch.Tensor._make(out, (b, width), torch.int64)
        if n_ret > 1:
            res = torch.cat([res[i : i + 1].repeat(n_ret, 1) for i in range(b)], dim=0)
        return res

    # -- persistence --
    def save_pretrained(self, save_directory, is_main_process=True, state_dict=None, save_function=None, push_to_hub=False, max_shard_size="5GB",
                        safe_serialization=True, variant=None, token=None, save_peft_format=True, **kwargs):
        if os.path.isfile(save_directory):
            _warn.log("Provided path (%s) should be a directory, not a file" % save_directory)
            return
        os.makedirs(save_directory, exist_ok=True)
        self.config.architectures = [type(self).__name__]
        self.config.save_pretrained(save_directory)
        if self.generation_config is not None:
            self.generation_config.save_pretrained(save_directory)
        sd = state_dict if state_dict is not None else self.state_dict()
        if safe_serialization:
            safetensors_io.save({k: (tuple(v.shape), list(map(float, v.data))) for k, v in sd.items()}, os.path.join(save_directory, "model.safetensors"), {"format": "pt"})
        else:
            torch.save(dict(sd), os.path.join(save_directory, "pytorch_model.bin"))

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, *model_args, config=None, cache_dir=None, ignore_mismatched_sizes=False, force_download=False,
                        local_files_only=False, token=None, revision="main", use_safetensors=None, weights_only=True, **kwargs):
        return _load_model(cls, cls._family, cls._head, pretrained_model_name_or_path, config, ignore_mismatched_sizes, kwargs)

    @classmethod
    def from_config(cls, config, **kwargs):
        return cls(config)

    @classmethod
    def _from_config(cls, config, **kwargs):
        return cls(config)


def _shift_right(labels, start, pad):
    b, t = labels.shape
    out = []
    for i in range(b):
        row = labels.data[i * t : (i + 1) * t]
        shifted = [start] + row[:-1]
        out.extend(pad if v == -100 else v for v in shifted)
    return torch.Tensor._make(out, (b, t), torch.int64)


class GenerationConfig:
    _FIELDS = {"max_length", "max_new_tokens", "min_length", "min_new_tokens", "do_sample", "num_beams", "temperature", "top_k", "top_p",
               "repetition_penalty", "no_repeat_ngram_size", "early_stopping", "length_penalty", "num_return_sequences", "pad_token_id",
               "eos_token_id", "bos_token_id", "decoder_start_token_id", "output_scores", "return_dict_in_generate", "penalty_alpha",
               "num_beam_groups", "diversity_penalty", "bad_words_ids", "forced_bos_token_id", "forced_eos_token_id", "use_cache", "typical_p"}

    def __init__(self, **kwargs):
        self.max_length = kwargs.pop("max_length", 20)
        for k in self._FIELDS:
            if k != "max_length":
                setattr(self, k, kwargs.pop(k, None))
        for k, v in kwargs.items():
            setattr(self, k, v)

    @classmethod
    def from_model_config(cls, config):
        return cls(pad_token_id=config.pad_token_id, eos_token_id=config.eos_token_id, bos_token_id=config.bos_token_id,
                   decoder_start_token_id=config.decoder_start_token_id)

    @classmethod
    def from_pretrained(cls, pretrained_model_name, **kwargs):
        return cls(**kwargs)

    def save_pretrained(self, save_directory, config_file_name=None, push_to_hub=False, **kwargs):
        os.makedirs(save_directory, exist_ok=True)
        with open(os.path.join(save_directory, config_file_name or "generation_config.json"), "w", encoding="utf-8") as f:
            json.dump({k: v for k, v in sorted(vars(self).items()) if v is not None}, f, indent=2)

    def to_dict(self):
        return {k: v for k, v in vars(self).items() if v is not None}

    def __repr__(self):
        return "GenerationConfig %s" % json.dumps(self.to_dict(), indent=2, sort_keys=True)


_MODEL_CLASSES = {}


def model_class(family, head):
    key = (family, head)
    if key not in _MODEL_CLASSES:
        name = _families.model_class_name(family, head)
        mod = family.replace("-", "_")
        _MODEL_CLASSES[key] = type(name, (PreTrainedModel,), {
            "_family": family, "_head": head, "config_class": config_class(family),
            "main_input_name": "pixel_values" if _families.FAMILIES[family]["style"] == "image" else "input_ids",
            "__module__": "transformers.models.%s.modeling_%s" % (mod, mod),
        })
    return _MODEL_CLASSES[key]


def _load_model(cls, family_hint, head, name, config, ignore_mismatched_sizes, kwargs):
    name = str(name)
    quant = {}
    for k in ("quantization_config", "load_in_8bit", "load_in_4bit"):
        if kwargs.get(k):
            try:
                import bitsandbytes  # noqa: F401  (the simulated one: quantization is recorded, weights stay float)
            except ImportError:
                raise ImportError("Using `bitsandbytes` 8-bit quantization requires the latest version of bitsandbytes: `pip install -U bitsandbytes`")
            if k == "load_in_8bit" and _v.changed("transformers-from-pretrained-load-in-8bit"):
                raise TypeError("%s.__init__() got an unexpected keyword argument 'load_in_8bit'" % "PreTrainedModel")
            quant[k] = kwargs[k]
        kwargs.pop(k, None)
    output_loading_info = kwargs.pop("output_loading_info", False)
    # Hub code (trust_remote_code=True) defines its own classes, which commonly take **kwargs.
    remote_code = bool(kwargs.get("trust_remote_code"))
    if config is None:
        cfg, extra = _load_config(name, kwargs)
    else:
        cfg, extra = config, {"saved": os.path.isdir(name)}
        if not os.path.isdir(name) and _families.resolve(name) is None:
            raise _not_found(name)
    family = cfg._family
    if family_hint is not None and family_hint != family:
        _warn.log("You are using a model of type %s to instantiate a model of type %s. This is not supported for all configurations of models and can yield errors." % (family, family_hint))
        family = family_hint
        cfg.__class__ = config_class(family)
    for k in list(kwargs):
        if k in _LOADING_KWARGS or k == "use_cache":
            if k == "use_cache":
                cfg.use_cache = kwargs[k]
            kwargs.pop(k)
    if kwargs and not remote_code:
        raise _warn.unexpected_kwarg(_families.model_class_name(family, head) + ".__init__", next(iter(kwargs)))
    target = model_class(family, head) if cls is None or cls._family is None else cls
    model = target(cfg)
    model.name_or_path = name
    if quant:
        qc = quant.get("quantization_config")
        model.is_loaded_in_8bit = bool(quant.get("load_in_8bit") or getattr(qc, "load_in_8bit", False))
        model.is_loaded_in_4bit = bool(quant.get("load_in_4bit") or getattr(qc, "load_in_4bit", False))
        model.is_quantized = True
        model.quantization_method = "bitsandbytes"
    new = list(model._sim_new_params)
    pretrained_labels = extra.get("labels") if extra else None
    pretrained_head = extra.get("head") if extra else None
    mismatched = []
    if os.path.isdir(name):
        path = os.path.join(name, "model.safetensors")
        loaded = {}
        if os.path.exists(path):
            loaded = safetensors_io.load(path)
        elif os.path.exists(os.path.join(name, "pytorch_model.bin")):
            loaded = {k: (tuple(v.shape), list(v.data)) for k, v in torch.load(os.path.join(name, "pytorch_model.bin")).items()}
        else:
            raise OSError("Error no file named model.safetensors, or pytorch_model.bin found in directory %s." % name)
        own = dict(model.named_parameters())
        for k, (shape, data) in loaded.items():
            if k in own:
                if tuple(own[k].shape) != tuple(shape):
                    mismatched.append((k, shape, tuple(own[k].shape)))
                    continue
                own[k].data[:] = data
                if k in new:
                    new.remove(k)
    elif pretrained_head == head and pretrained_labels:
        # The checkpoint ships this head: its shapes must match unless told otherwise.
        n_ckpt = len(pretrained_labels)
        if cfg.num_labels != n_ckpt:
            final = [k for k in new if k.endswith(".weight") or k.endswith(".bias")][-2:]
            for k in final:
                p = dict(model.named_parameters())[k]
                ck_shape = (n_ckpt, 768) if k.endswith("weight") else (n_ckpt,)
                mismatched.append((k, ck_shape, (cfg.num_labels, 768) if k.endswith("weight") else (cfg.num_labels,)))
            new = [k for k in new if k not in final]
            new = [k for k in new if False]
        else:
            new = []
    if mismatched and not ignore_mismatched_sizes:
        lines = "\n\t".join(
            "size mismatch for %s: copying a param with shape torch.Size(%s) from checkpoint, the shape in current model is torch.Size(%s)." % (k, list(a), list(b))
            for k, a, b in mismatched
        )
        raise RuntimeError(
            "Error(s) in loading state_dict for %s:\n\t%s\n\tYou may consider adding `ignore_mismatched_sizes=True` in the model `from_pretrained` method." % (type(model).__name__, lines)
        )
    if new and not os.path.isdir(name):
        _warn.log(
            "Some weights of %s were not initialized from the model checkpoint at %s and are newly initialized: %s\n"
            "You should probably TRAIN this model on a down-stream task to be able to use it for predictions and inference." % (type(model).__name__, name, sorted(new))
        )
    if mismatched:
        _warn.log(
            "Some weights of %s were not initialized from the model checkpoint at %s and are newly initialized because the shapes did not match:\n%s\n"
            "You should probably TRAIN this model on a down-stream task to be able to use it for predictions and inference."
            % (type(model).__name__, name, "\n".join("- %s: found shape torch.Size(%s) in the checkpoint and torch.Size(%s) in the model instantiated" % (k, list(a), list(b)) for k, a, b in mismatched))
        )
    model.eval()
    if output_loading_info:
        return model, {"missing_keys": sorted(new), "unexpected_keys": [], "mismatched_keys": mismatched, "error_msgs": []}
    return model


_AUTO_HEADS = {
    "AutoModel": "base",
    "AutoModelForSequenceClassification": "seqcls",
    "AutoModelForTokenClassification": "tokcls",
    "AutoModelForQuestionAnswering": "qa",
    "AutoModelForCausalLM": "causal",
    "AutoModelForSeq2SeqLM": "seq2seq",
    "AutoModelForMaskedLM": "mlm",
    "AutoModelForImageClassification": "imgcls",
    # Vision-language checkpoints: the simulated model is the family's causal LM.
    "AutoModelForImageTextToText": "causal",
    "AutoModelForVision2Seq": "causal",
}


class _BaseAuto:
    _head = None

    def __init__(self, *args, **kwargs):
        raise EnvironmentError(
            "%s is designed to be instantiated using the `%s.from_pretrained(pretrained_model_name_or_path)` or `%s.from_config(config)` methods."
            % (type(self).__name__, type(self).__name__, type(self).__name__)
        )

    @classmethod
    def _check(cls, family, config_cls):
        if cls._head not in _families.FAMILIES[family]["heads"]:
            ok = sorted(_families.FAMILIES[f]["prefix"] + "Config" for f in _families.FAMILIES if cls._head in _families.FAMILIES[f]["heads"])
            raise ValueError(
                "Unrecognized configuration class %s for this kind of AutoModel: %s.\nModel type should be one of %s."
                % (config_cls, cls.__name__, ", ".join(ok))
            )

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, *model_args, **kwargs):
        head = cls._pick_head(pretrained_model_name_or_path, kwargs)
        config = kwargs.pop("config", None)
        ignore = kwargs.pop("ignore_mismatched_sizes", False)
        name = str(pretrained_model_name_or_path)
        if config is None:
            probe_kwargs = {}
            cfg, _ = _load_config(name, probe_kwargs) if (os.path.isdir(name) or _families.resolve(name)) else (None, None)
            if cfg is None:
                raise _not_found(name)
            family = cfg._family
        else:
            family = config._family
        cls._check(family, config_class(family))
        return _load_model(None, None, head, name, config, ignore, kwargs)

    @classmethod
    def _pick_head(cls, name, kwargs):
        return cls._head

    @classmethod
    def from_config(cls, config, **kwargs):
        cls._check(config._family, type(config))
        return model_class(config._family, cls._head)(config)


AUTO_CLASSES = {n: type(n, (_BaseAuto,), {"_head": h, "__module__": "transformers.models.auto.modeling_auto"}) for n, h in _AUTO_HEADS.items()}


class _AutoModelWithLMHead(_BaseAuto):
    _head = "causal"

    @classmethod
    def _pick_head(cls, name, kwargs):
        _warn.future(
            "The class `AutoModelWithLMHead` is deprecated and will be removed in a future version. Please use `AutoModelForCausalLM` for causal "
            "language models, `AutoModelForMaskedLM` for masked language models and `AutoModelForSeq2SeqLM` for encoder-decoder models.",
            stacklevel=4,
        )
        return "causal"

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, *model_args, **kwargs):
        cls._pick_head(pretrained_model_name_or_path, kwargs)
        cfg, _ = _load_config(str(pretrained_model_name_or_path), {})
        heads = _families.FAMILIES[cfg._family]["heads"]
        head = "seq2seq" if "seq2seq" in heads else "causal" if "causal" in heads else "mlm"
        return _load_model(None, None, head, str(pretrained_model_name_or_path), kwargs.pop("config", None), kwargs.pop("ignore_mismatched_sizes", False), kwargs)


_AutoModelWithLMHead.__name__ = _AutoModelWithLMHead.__qualname__ = "AutoModelWithLMHead"
