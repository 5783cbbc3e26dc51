"""Speech recognition with CTC (wav2vec2): config, character tokenizer built from a vocab.json,
feature extractor, processor and a small CTC model. Audio is the datasets' {"array", "sampling_rate"}
dicts; the model downsamples by 320 like wav2vec2's convolutional front end. The loss follows the
simulation's curve (decreases as training moves the parameters); logits favour the labels' characters
for a share of frames that grows with training."""
import json
import math
import os

import torch
from torch import nn

from _forgeenv_sim import safetensors_io
from _forgeenv_sim.hashing import stable_hash

from .image_processing import BatchFeature
from .modeling import K_PROGRESS, ModelOutput, PretrainedConfig, _centred_linear
from .tokenization import BatchEncoding

CONV_STRIDE = 320
DEFAULT_VOCAB = ["<pad>", "<s>", "</s>", "<unk>", "|"] + list("etaoinshrdlcumwfgypbvkxjqz'")


def is_wav2vec2(name, kwargs=None):
    kwargs = kwargs or {}
    if kwargs.get("tokenizer_type") == "wav2vec2":
        return True
    name = str(name)
    if "wav2vec2" in name.lower() or "xlsr" in name.lower():
        return True
    for fname in ("config.json", "preprocessor_config.json", "tokenizer_config.json"):
        p = os.path.join(name, fname)
        if os.path.isfile(p):
            try:
                with open(p, encoding="utf-8") as f:
                    d = json.load(f)
            except ValueError:
                continue
            if d.get("model_type") == "wav2vec2" or "Wav2Vec2" in str(d.get("feature_extractor_type", "")) + str(d.get("tokenizer_class", "")):
                return True
    return False


def speech_samples(extractor, raw_speech, sampling_rate):
    """The examples of a speech feature extractor's input as lists of floats, after the real sampling-rate check
    (one example or a batch of lists/tensors, as transformers' extractors accept)."""
    if sampling_rate is not None and sampling_rate != extractor.sampling_rate:
        raise ValueError(
            "The model corresponding to this feature extractor: %s was trained using a sampling rate of %d. Please make sure that the "
            "provided `raw_speech` input was sampled with %d and not %d." % (extractor, extractor.sampling_rate, extractor.sampling_rate, sampling_rate)
        )
    batched = isinstance(raw_speech, (list, tuple)) and raw_speech and isinstance(raw_speech[0], (list, tuple, torch.Tensor))
    return [[float(v) for v in (x.tolist() if hasattr(x, "tolist") else x)] for x in (raw_speech if batched else [raw_speech])]


class Wav2Vec2Config(PretrainedConfig):
    model_type = "wav2vec2"
    _family = None

    def __init__(self, **kwargs):
        defaults = dict(vocab_size=32, hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                        feat_proj_dropout=0.0, attention_dropout=0.1, hidden_dropout=0.1, final_dropout=0.0, mask_time_prob=0.05, mask_time_length=10,
                        mask_feature_prob=0.0, mask_feature_length=10, layerdrop=0.1, ctc_loss_reduction="sum", ctc_zero_infinity=False,
                        activation_dropout=0.0, tokenizer_class=None, num_channels=1)
        defaults.update(kwargs)
        super().__init__(**defaults)

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, **kwargs):
        p = os.path.join(str(pretrained_model_name_or_path), "config.json")
        d = {}
        if os.path.isfile(p):
            with open(p, encoding="utf-8") as f:
                d = json.load(f)
        for k in ("model_type", "transformers_version", "sim_family", "_name_or_path", "id2label"):
            d.pop(k, None)
        for k in ("cache_dir", "force_download", "local_files_only", "token", "revision", "trust_remote_code", "use_auth_token"):
            kwargs.pop(k, None)
        d.update(kwargs)
        cfg = cls(**d)
        cfg.name_or_path = str(pretrained_model_name_or_path)
        return cfg


class Wav2Vec2CTCTokenizer:
    model_input_names = ["input_ids", "attention_mask"]
    is_fast = False

    def __init__(self, vocab_file=None, bos_token="<s>", eos_token="</s>", unk_token="<unk>", pad_token="<pad>", word_delimiter_token="|",
                 replace_word_delimiter_char=" ", do_lower_case=False, target_lang=None, vocab=None, **kwargs):
        if vocab is None:
            if vocab_file is not None:
                with open(vocab_file, encoding="utf-8") as f:
                    vocab = json.load(f)
            else:
                vocab = {t: i for i, t in enumerate(DEFAULT_VOCAB)}
        self.encoder = dict(vocab)
        for tok in (unk_token, pad_token, bos_token, eos_token):
            if tok is not None and tok not in self.encoder:
                self.encoder[tok] = len(self.encoder)
        self.decoder = {v: k for k, v in self.encoder.items()}
        self.bos_token, self.eos_token, self.unk_token, self.pad_token = bos_token, eos_token, unk_token, pad_token
        self.word_delimiter_token, self.do_lower_case = word_delimiter_token, do_lower_case
        self.padding_side = "right"
        self.name_or_path = ""

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, *inputs, **kwargs):
        for k in ("config", "tokenizer_type", "cache_dir", "token", "use_auth_token", "revision", "trust_remote_code", "force_download"):
            kwargs.pop(k, None)
        folder = str(pretrained_model_name_or_path)
        vocab_file = os.path.join(folder, "vocab.json")
        cfg_file = os.path.join(folder, "tokenizer_config.json")
        saved = {}
        if os.path.isfile(cfg_file):
            with open(cfg_file, encoding="utf-8") as f:
                saved = {k: v for k, v in json.load(f).items() if k in ("bos_token", "eos_token", "unk_token", "pad_token", "word_delimiter_token", "do_lower_case")}
        saved.update(kwargs)
        tok = cls(vocab_file if os.path.isfile(vocab_file) else None, **saved)
        tok.name_or_path = folder
        return tok

    def __len__(self):
        return len(self.encoder)

    @property
    def vocab_size(self):
        return len(self.encoder)

    def get_vocab(self):
        return dict(self.encoder)

    @property
    def pad_token_id(self):
        return self.encoder.get(self.pad_token)

    @property
    def unk_token_id(self):
        return self.encoder.get(self.unk_token)

    @property
    def word_delimiter_token_id(self):
        return self.encoder.get(self.word_delimiter_token)

    def convert_tokens_to_ids(self, tokens):
        if isinstance(tokens, str):
            return self.encoder.get(tokens, self.unk_token_id)
        return [self.encoder.get(t, self.unk_token_id) for t in tokens]

    def _encode(self, text):
        if self.do_lower_case:
            text = text.upper()
        chars = [self.word_delimiter_token if c == " " else c for c in text.strip()]
        return [self.encoder.get(c, self.unk_token_id) for c in chars]

    def __call__(self, text=None, text_target=None, padding=False, truncation=False, max_length=None, return_tensors=None, **kwargs):
        text = text if text is not None else text_target
        if isinstance(text, str):
            ids = self._encode(text)
            return BatchEncoding({"input_ids": ids, "attention_mask": [1] * len(ids)}, _batched=False)
        ids = [self._encode(t) for t in text]
        enc = {"input_ids": ids, "attention_mask": [[1] * len(i) for i in ids]}
        return self.pad(enc, padding=padding, return_tensors=return_tensors) if padding or return_tensors else BatchEncoding(enc)

    def pad(self, encoded_inputs, padding=True, max_length=None, pad_to_multiple_of=None, return_attention_mask=True, return_tensors=None, **kwargs):
        if isinstance(encoded_inputs, list):
            encoded_inputs = {k: [e[k] for e in encoded_inputs] for k in encoded_inputs[0]}
        ids = [list(x.tolist() if hasattr(x, "tolist") else x) for x in encoded_inputs["input_ids"]]
        width = max((len(i) for i in ids), default=0)
        if max_length and padding == "max_length":
            width = max_length
        if pad_to_multiple_of:
            width = -(-width // pad_to_multiple_of) * pad_to_multiple_of
        pad = self.pad_token_id
        out = {"input_ids": [i + [pad] * (width - len(i)) for i in ids], "attention_mask": [[1] * len(i) + [0] * (width - len(i)) for i in ids]}
        if return_tensors == "pt":
            out = {k: torch.tensor(v) for k, v in out.items()}
        return BatchEncoding(out)

    def decode(self, token_ids, skip_special_tokens=False, clean_up_tokenization_spaces=None, group_tokens=True, **kwargs):
        ids = token_ids.tolist() if hasattr(token_ids, "tolist") else list(token_ids)
        toks = [self.decoder.get(int(i), self.unk_token) for i in ids]
        if group_tokens:
            grouped = []
            for t in toks:
                if not grouped or grouped[-1] != t:
                    grouped.append(t)
            toks = [t for t in grouped if t != self.pad_token]
        specials = {self.bos_token, self.eos_token, self.pad_token} | ({self.unk_token} if skip_special_tokens else set())
        text = "".join(" " if t == self.word_delimiter_token else t for t in toks if t not in specials)
        return " ".join(text.split())

    def batch_decode(self, sequences, skip_special_tokens=False, clean_up_tokenization_spaces=None, **kwargs):
        if hasattr(sequences, "tolist"):
            sequences = sequences.tolist()
        return [self.decode(s, skip_special_tokens=skip_special_tokens, **kwargs) for s in sequences]

    def save_pretrained(self, save_directory, **kwargs):
        os.makedirs(save_directory, exist_ok=True)
        with open(os.path.join(save_directory, "vocab.json"), "w", encoding="utf-8") as f:
            json.dump(self.encoder, f, ensure_ascii=False)
        with open(os.path.join(save_directory, "tokenizer_config.json"), "w", encoding="utf-8") as f:
            json.dump({"tokenizer_class": "Wav2Vec2CTCTokenizer", "bos_token": self.bos_token, "eos_token": self.eos_token, "unk_token": self.unk_token,
                       "pad_token": self.pad_token, "word_delimiter_token": self.word_delimiter_token, "do_lower_case": self.do_lower_case}, f, indent=2)
        return (os.path.join(save_directory, "vocab.json"),)


class Wav2Vec2FeatureExtractor:
    model_input_names = ["input_values", "attention_mask"]

    def __init__(self, feature_size=1, sampling_rate=16000, padding_value=0.0, return_attention_mask=True, do_normalize=True, **kwargs):
        self.feature_size, self.sampling_rate, self.padding_value = feature_size, sampling_rate, padding_value
        self.return_attention_mask, self.do_normalize = return_attention_mask, do_normalize
        self.padding_side = "right"

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, **kwargs):
        p = os.path.join(str(pretrained_model_name_or_path), "preprocessor_config.json")
        d = {}
        if os.path.isfile(p):
            with open(p, encoding="utf-8") as f:
                d = {k: v for k, v in json.load(f).items() if k in ("feature_size", "sampling_rate", "padding_value", "return_attention_mask", "do_normalize")}
        return cls(**d)

    def __call__(self, raw_speech, padding=False, max_length=None, truncation=False, pad_to_multiple_of=None, return_attention_mask=None,
                 return_tensors=None, sampling_rate=None, **kwargs):
        values = []
        for x in speech_samples(self, raw_speech, sampling_rate):
            if self.do_normalize and x:
                m = sum(x) / len(x)
                sd = math.sqrt(sum((v - m) ** 2 for v in x) / len(x) + 1e-7)
                x = [(v - m) / sd for v in x]
            values.append(x)
        feats = {"input_values": values}
        if padding or return_tensors:
            return self.pad(feats, padding=padding or True, return_tensors=return_tensors)
        return BatchFeature(feats)

    def pad(self, processed_features, padding=True, max_length=None, truncation=False, pad_to_multiple_of=None, return_attention_mask=None, return_tensors=None):
        if isinstance(processed_features, list):
            processed_features = {k: [f[k] for f in processed_features] for k in processed_features[0]}
        vals = [list(v.tolist() if hasattr(v, "tolist") else v) for v in processed_features["input_values"]]
        width = max((len(v) for v in vals), default=0)
        if pad_to_multiple_of:
            width = -(-width // pad_to_multiple_of) * pad_to_multiple_of
        out = {"input_values": [v + [self.padding_value] * (width - len(v)) for v in vals]}
        if self.return_attention_mask if return_attention_mask is None else return_attention_mask:
            out["attention_mask"] = [[1] * len(v) + [0] * (width - len(v)) for v in vals]
        if return_tensors == "pt":
            out = {k: torch.tensor(v) for k, v in out.items()}
        return BatchFeature(out)

    def save_pretrained(self, save_directory, **kwargs):
        os.makedirs(save_directory, exist_ok=True)
        with open(os.path.join(save_directory, "preprocessor_config.json"), "w", encoding="utf-8") as f:
            json.dump({"feature_extractor_type": "Wav2Vec2FeatureExtractor", "feature_size": self.feature_size, "sampling_rate": self.sampling_rate,
                       "padding_value": self.padding_value, "return_attention_mask": self.return_attention_mask, "do_normalize": self.do_normalize,
                       "padding_side": "right"}, f, indent=2)
        return [os.path.join(save_directory, "preprocessor_config.json")]

    def __repr__(self):
        return "Wav2Vec2FeatureExtractor {sampling_rate: %d}" % self.sampling_rate


class Wav2Vec2Processor:
    attributes = ["feature_extractor", "tokenizer"]

    def __init__(self, feature_extractor, tokenizer):
        self.feature_extractor, self.tokenizer = feature_extractor, tokenizer
        self.current_processor = feature_extractor

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, **kwargs):
        return cls(Wav2Vec2FeatureExtractor.from_pretrained(pretrained_model_name_or_path), Wav2Vec2CTCTokenizer.from_pretrained(pretrained_model_name_or_path))

    def __call__(self, audio=None, text=None, sampling_rate=None, **kwargs):
        out = self.feature_extractor(audio, sampling_rate=sampling_rate, **kwargs) if audio is not None else None
        if text is not None:
            labels = self.tokenizer(text, **{k: v for k, v in kwargs.items() if k in ("padding", "return_tensors")})
            if out is None:
                return labels
            out["labels"] = labels["input_ids"]
        return out

    def pad(self, *args, **kwargs):
        input_features = kwargs.pop("input_features", None)
        labels = kwargs.pop("labels", None)
        if len(args) > 0:
            input_features, args = args[0], args[1:]
        if input_features is not None:
            feats = self.feature_extractor.pad(input_features, *args, **kwargs)
        if labels is not None:
            lab = self.tokenizer.pad(labels, **kwargs)
            if input_features is None:
                return lab
            feats["labels"] = lab["input_ids"]
        return feats

    def batch_decode(self, *args, **kwargs):
        return self.tokenizer.batch_decode(*args, **kwargs)

    def decode(self, *args, **kwargs):
        return self.tokenizer.decode(*args, **kwargs)

    def save_pretrained(self, save_directory, **kwargs):
        self.feature_extractor.save_pretrained(save_directory)
        return self.tokenizer.save_pretrained(save_directory)


class CausalLMOutput(ModelOutput):
    _fields = ("loss", "logits", "hidden_states", "attentions")


class Wav2Vec2ForCTC(nn.Module):
    config_class = Wav2Vec2Config
    main_input_name = "input_values"
    L0, FLOOR, TARGET = 4.0, 0.4, 0.8

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.name_or_path = getattr(config, "name_or_path", "")
        w = nn.Module()
        fe = nn.Module()
        fe.add_module("conv", _centred_linear(4, 4, stable_hash("w2v", "conv")))
        w.add_module("feature_extractor", fe)
        enc = nn.Module()
        for i in range(2):
            layer = nn.Module()
            att = nn.Module()
            for n in ("q_proj", "k_proj", "v_proj", "out_proj"):
                att.add_module(n, _centred_linear(4, 4, stable_hash("w2v", i, n)))
            layer.add_module("attention", att)
            enc.add_module(str(i), layer)
        layers = nn.Module()
        layers.add_module("layers", enc)
        w.add_module("encoder", layers)
        self.add_module("wav2vec2", w)
        self.add_module("lm_head", _centred_linear(4, 4, stable_hash("w2v", "lm_head")))
        self._sim_scale = K_PROGRESS / max(1, sum(1 for _ in self.parameters()))

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, *model_args, config=None, **kwargs):
        for k in ("cache_dir", "token", "use_auth_token", "revision", "trust_remote_code", "torch_dtype", "device_map", "ignore_mismatched_sizes"):
            kwargs.pop(k, None)
        if kwargs:
            raise TypeError("Wav2Vec2ForCTC.__init__() got an unexpected keyword argument '%s'" % next(iter(kwargs)))
        config = config or Wav2Vec2Config.from_pretrained(pretrained_model_name_or_path)
        model = cls(config)
        model.name_or_path = str(pretrained_model_name_or_path)
        path = os.path.join(str(pretrained_model_name_or_path), "model.safetensors")
        if os.path.isfile(path):
            own = dict(model.named_parameters())
            for k, (shape, data) in safetensors_io.load(path).items():
                if k in own and len(own[k].data) == len(data):
                    own[k].data[:] = data
        return model

    def save_pretrained(self, save_directory, **kwargs):
        os.makedirs(save_directory, exist_ok=True)
        self.config.save_pretrained(save_directory)
        sd = self.state_dict()
        safetensors_io.save({k: (tuple(v.shape), list(map(float, v.data))) for k, v in sd.items()}, os.path.join(save_directory, "model.safetensors"), {"format": "pt"})

    def freeze_feature_encoder(self):
        for p in self.wav2vec2.feature_extractor.parameters():
            p.requires_grad_(False)

    freeze_feature_extractor = freeze_feature_encoder

    def gradient_checkpointing_enable(self, gradient_checkpointing_kwargs=None):
        pass

    def num_parameters(self, only_trainable=False, exclude_embeddings=False):
        return sum(p.numel() for p in self.parameters() if p.requires_grad or not only_trainable)

    def _progress(self):
        const, total = 0.0, None
        for p in self.parameters():
            if p.requires_grad and torch.is_grad_enabled():
                m = p.mean()
                total = m if total is None else total + m
            else:
                const += sum(p.data) / len(p.data)
        q = total + const if total is not None else torch.tensor(const)
        return q * self._sim_scale

    def forward(self, input_values, attention_mask=None, output_attentions=None, output_hidden_states=None, return_dict=None, labels=None):
        if not isinstance(input_values, torch.Tensor) or input_values.dim() != 2:
            raise ValueError("input_values must be a 2-D tensor (batch, samples)")
        b, n = input_values.shape
        frames = max(1, n // CONV_STRIDE)
        v = self.config.vocab_size
        q = self._progress()
        qv = q.item()
        loss = None
        if labels is not None:
            if max(labels.data) >= v:
                raise ValueError("Label values must be <= vocab_size: %d" % v)
            loss = (1.0 / (1.0 + q)) * (self.L0 - self.FLOOR) + self.FLOOR if qv >= 0 else (1.0 - q) * (self.L0 - self.FLOOR) + self.FLOOR
        share = self.TARGET * (1.0 - math.exp(-1.5 * max(qv, 0.0)))
        data = []
        for i in range(b):
            row = [int(x) for x in labels.data[i * labels.shape[1] : (i + 1) * labels.shape[1]] if x >= 0] if labels is not None else []
            key = stable_hash("w2v", tuple(round(x, 3) for x in input_values.data[i * n : i * n + 16]))
            for f in range(frames):
                h = stable_hash(key, f)
                if row and (h % 1000) / 1000.0 < share:
                    pred = row[f * len(row) // frames]
                else:
                    pred = h % v
                data.extend([2.0 if c == pred else -1.0 for c in range(v)])
        logits = torch.Tensor._make(data, (b, frames, v), torch.float32)
        if isinstance(q, torch.Tensor) and q.requires_grad:
            logits = logits * (q * 0.05 + 1.0)
        return CausalLMOutput(loss=loss, logits=logits)

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)


class AutoModelForCTC:
    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, *model_args, **kwargs):
        if not is_wav2vec2(pretrained_model_name_or_path, {}) and not isinstance(kwargs.get("config"), Wav2Vec2Config):
            raise ValueError("Unrecognized configuration class for this kind of AutoModel: AutoModelForCTC.")
        return Wav2Vec2ForCTC.from_pretrained(pretrained_model_name_or_path, *model_args, **kwargs)
