"""Whisper (speech-to-text seq2seq) in the simulation: feature extractor (log-mel-like features,
80 bins x at most 16 frames instead of 80 x 3000), a tokenizer that wraps the GPT-2 style simulated
tokenizer with Whisper's special tokens and decoder prompt, the processor and a small encoder-decoder
model whose loss follows the simulation's curve. Quantised loading records hf_device_map (GPU 0 when
the run has the simulated CUDA device, else "cpu", which Whisper fine-tuning scripts refuse)."""
import json
import math
import os

import torch
from torch import nn

from _forgeenv_sim import hardware as _hw
from _forgeenv_sim import safetensors_io
from _forgeenv_sim.hashing import stable_hash

from .audio import CausalLMOutput, speech_samples
from .image_processing import BatchFeature
from .modeling import K_PROGRESS, ModelOutput, PretrainedConfig, _centred_linear
from .tokenization import AutoTokenizer, BatchEncoding

N_MELS, MAX_FRAMES, HOP = 80, 16, 160
EOT, SOT, TRANSLATE, TRANSCRIBE, NO_TIMESTAMPS = 50257, 50258, 50358, 50359, 50363
LANGS = ["en", "zh", "de", "es", "ru", "ko", "fr", "ja", "pt", "tr", "pl", "ca", "nl", "ar", "sv", "it", "id", "hi"]
LANG_NAMES = {"english": "en", "chinese": "zh", "german": "de", "spanish": "es", "russian": "ru", "korean": "ko", "french": "fr", "japanese": "ja",
              "portuguese": "pt", "turkish": "tr", "polish": "pl", "catalan": "ca", "dutch": "nl", "arabic": "ar", "swedish": "sv", "italian": "it",
              "indonesian": "id", "hindi": "hi"}
VOCAB = 51865


def _lang_id(language):
    if language is None:
        return None
    code = LANG_NAMES.get(str(language).lower(), str(language).lower())
    if code not in LANGS:
        raise ValueError("Unsupported language: %s. Language should be one of: %s." % (language, sorted(LANG_NAMES)))
    return SOT + 1 + LANGS.index(code)


class WhisperConfig(PretrainedConfig):
    model_type = "whisper"
    _family = None

    def __init__(self, **kwargs):
        d = dict(vocab_size=VOCAB, num_mel_bins=N_MELS, d_model=768, encoder_layers=12, decoder_layers=12, pad_token_id=EOT, bos_token_id=EOT,
                 eos_token_id=EOT, decoder_start_token_id=SOT, forced_decoder_ids=None, suppress_tokens=None, is_encoder_decoder=True, max_length=448)
        d.update(kwargs)
        super().__init__(**d)


class WhisperFeatureExtractor:
    model_input_names = ["input_features"]

    def __init__(self, feature_size=N_MELS, sampling_rate=16000, hop_length=HOP, chunk_length=30, n_fft=400, padding_value=0.0, return_attention_mask=False, **kwargs):
        self.feature_size, self.sampling_rate, self.hop_length, self.padding_value = feature_size, sampling_rate, hop_length, padding_value

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, **kwargs):
        return cls()

    def __call__(self, raw_speech, truncation=True, pad_to_multiple_of=None, return_tensors=None, return_attention_mask=None, padding="max_length",
                 max_length=None, sampling_rate=None, do_normalize=None, **kwargs):
        feats = []
        for x in speech_samples(self, raw_speech, sampling_rate):
            frames = max(1, min(MAX_FRAMES, len(x) // self.hop_length))
            energies = []
            for f in range(frames):
                seg = x[f * self.hop_length : (f + 1) * self.hop_length : 8] or [0.0]
                energies.append(math.log10(max(sum(v * v for v in seg) / len(seg), 1e-10)) / 4.0)
            feats.append([[e + 0.001 * m for e in energies] for m in range(self.feature_size)])
        out = BatchFeature({"input_features": feats})
        if return_tensors == "pt":
            return self.pad(out, return_tensors="pt")
        return out

    def pad(self, processed_features, return_tensors=None, **kwargs):
        if isinstance(processed_features, list):
            processed_features = {k: [f[k] for f in processed_features] for k in processed_features[0]}
        feats = [f.tolist() if hasattr(f, "tolist") else f for f in processed_features["input_features"]]
        width = max(len(f[0]) for f in feats)
        feats = [[row + [self.padding_value] * (width - len(row)) for row in f] for f in feats]
        return BatchFeature({"input_features": torch.tensor(feats) if return_tensors == "pt" else feats})

    def save_pretrained(self, save_directory, **kwargs):
        os.makedirs(save_directory, exist_ok=True)
        with open(os.path.join(save_directory, "preprocessor_config.json"), "w", encoding="utf-8") as f:
            json.dump({"feature_extractor_type": "WhisperFeatureExtractor", "feature_size": self.feature_size, "sampling_rate": self.sampling_rate}, f, indent=2)


class WhisperTokenizer:
    """Whisper's tokenizer: GPT-2 style byte pairs (the simulated gpt2 tokenizer) plus Whisper's special tokens."""

    model_input_names = ["input_ids", "attention_mask"]

    def __init__(self, base, language=None, task=None, predict_timestamps=False):
        self._base = base
        self.language, self.task, self.predict_timestamps = language, task, predict_timestamps
        self.bos_token, self.eos_token, self.pad_token, self.unk_token = "<|endoftext|>", "<|endoftext|>", "<|endoftext|>", "<|endoftext|>"
        self.bos_token_id = self.eos_token_id = self.pad_token_id = self.unk_token_id = EOT
        self.padding_side = "right"
        self.name_or_path = getattr(base, "name_or_path", "")

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, language=None, task=None, predict_timestamps=False, **kwargs):
        base = AutoTokenizer.from_pretrained("gpt2")
        return cls(base, language=language, task=task, predict_timestamps=predict_timestamps)

    def __len__(self):
        return VOCAB

    @property
    def vocab_size(self):
        return EOT

    def set_prefix_tokens(self, language=None, task=None, predict_timestamps=None):
        self.language = language if language is not None else self.language
        self.task = task if task is not None else self.task

    @property
    def prefix_tokens(self):
        out = [SOT]
        lid = _lang_id(self.language)
        if lid is not None:
            out.append(lid)
        if self.task is not None:
            out.append(TRANSCRIBE if self.task == "transcribe" else TRANSLATE)
        if not self.predict_timestamps:
            out.append(NO_TIMESTAMPS)
        return out

    def _encode(self, text):
        return self.prefix_tokens + self._base(text, add_special_tokens=False)["input_ids"] + [EOT]

    def __call__(self, text=None, text_target=None, return_tensors=None, padding=False, **kwargs):
        text = text if text is not None else text_target
        if isinstance(text, str):
            ids = self._encode(text)
            return BatchEncoding({"input_ids": ids, "attention_mask": [1] * len(ids)}, _batched=False)
        ids = [self._encode(t) for t in text]
        return self.pad({"input_ids": ids}, return_tensors=return_tensors) if padding or return_tensors else BatchEncoding({"input_ids": ids, "attention_mask": [[1] * len(i) for i in ids]})

    def pad(self, encoded_inputs, padding=True, max_length=None, pad_to_multiple_of=None, return_attention_mask=True, return_tensors=None, **kwargs):
        if isinstance(encoded_inputs, list):
            encoded_inputs = {k: [e[k] for e in encoded_inputs] for k in encoded_inputs[0]}
        ids = [list(x.tolist() if hasattr(x, "tolist") else x) for x in encoded_inputs["input_ids"]]
        width = max(len(i) for i in ids)
        out = {"input_ids": [i + [EOT] * (width - len(i)) for i in ids], "attention_mask": [[1] * len(i) + [0] * (width - len(i)) for i in ids]}
        if return_tensors == "pt":
            out = {k: torch.tensor(v) for k, v in out.items()}
        return BatchEncoding(out)

    def decode(self, token_ids, skip_special_tokens=False, **kwargs):
        ids = [int(i) for i in (token_ids.tolist() if hasattr(token_ids, "tolist") else token_ids)]
        text_ids = [i for i in ids if i < EOT]
        text = self._base.decode(text_ids, skip_special_tokens=True)
        if skip_special_tokens:
            return text
        return "".join("<|endoftext|>" if i == EOT else "<|startoftranscript|>" if i == SOT else "" for i in ids if i >= EOT) + text

    def batch_decode(self, sequences, skip_special_tokens=False, **kwargs):
        if hasattr(sequences, "tolist"):
            sequences = sequences.tolist()
        return [self.decode(s, skip_special_tokens=skip_special_tokens) for s in sequences]

    def get_decoder_prompt_ids(self, task=None, language=None, no_timestamps=True):
        self.set_prefix_tokens(task=task, language=language)
        forced = self.prefix_tokens[1:]
        return [(rank + 1, token) for rank, token in enumerate(forced)]

    def save_pretrained(self, save_directory, **kwargs):
        os.makedirs(save_directory, exist_ok=True)
        with open(os.path.join(save_directory, "tokenizer_config.json"), "w", encoding="utf-8") as f:
            json.dump({"tokenizer_class": "WhisperTokenizer", "language": self.language, "task": self.task}, f, indent=2)


class WhisperProcessor:
    attributes = ["feature_extractor", "tokenizer"]

    def __init__(self, feature_extractor, tokenizer):
        self.feature_extractor, self.tokenizer = feature_extractor, tokenizer

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, language=None, task=None, **kwargs):
        return cls(WhisperFeatureExtractor.from_pretrained(pretrained_model_name_or_path),
                   WhisperTokenizer.from_pretrained(pretrained_model_name_or_path, language=language, task=task))

    def __call__(self, audio=None, sampling_rate=None, text=None, **kwargs):
        out = self.feature_extractor(audio, sampling_rate=sampling_rate, **kwargs) if audio is not None else None
        if text is not None:
            labels = self.tokenizer(text)
            if out is None:
                return labels
            out["labels"] = labels["input_ids"]
        return out

    def get_decoder_prompt_ids(self, task=None, language=None, no_timestamps=True):
        return self.tokenizer.get_decoder_prompt_ids(task=task, language=language, no_timestamps=no_timestamps)

    def batch_decode(self, *args, **kwargs):
        return self.tokenizer.batch_decode(*args, **kwargs)

    def decode(self, *args, **kwargs):
        return self.tokenizer.decode(*args, **kwargs)

    def save_pretrained(self, save_directory, **kwargs):
        self.feature_extractor.save_pretrained(save_directory)
        self.tokenizer.save_pretrained(save_directory)


class Seq2SeqLMOutput(ModelOutput):
    _fields = ("loss", "logits", "past_key_values", "encoder_last_hidden_state")


def _module(**children):
    m = nn.Module()
    for k, v in children.items():
        m.add_module(k, v)
    return m


class WhisperForConditionalGeneration(nn.Module):
    config_class = WhisperConfig
    main_input_name = "input_features"
    L0, FLOOR = 3.2, 0.5

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.name_or_path = ""
        lin = lambda *p: _centred_linear(4, 4, stable_hash("whisper", *p))  # noqa: E731

        def layer(side, i):
            att = _module(q_proj=lin(side, i, "q"), k_proj=lin(side, i, "k"), v_proj=lin(side, i, "v"), out_proj=lin(side, i, "o"))
            return _module(self_attn=att, fc1=lin(side, i, "fc1"), fc2=lin(side, i, "fc2"))

        encoder = _module(conv1=lin("conv1"), conv2=lin("conv2"), layers=_module(**{"0": layer("enc", 0), "1": layer("enc", 1)}))
        decoder = _module(embed_tokens=lin("embed"), layers=_module(**{"0": layer("dec", 0), "1": layer("dec", 1)}))
        self.add_module("model", _module(encoder=encoder, decoder=decoder))
        self.add_module("proj_out", lin("proj_out"))
        self._sim_scale = K_PROGRESS / max(1, sum(1 for _ in self.parameters()))
        self.generation_config = None
        self.hf_device_map = {"": 0 if _hw.SIM_CUDA else "cpu"}
        self.is_loaded_in_8bit = False

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, *model_args, config=None, **kwargs):
        load_8bit = kwargs.pop("load_in_8bit", False)
        device_map = kwargs.pop("device_map", None)
        for k in ("cache_dir", "token", "use_auth_token", "revision", "torch_dtype", "low_cpu_mem_usage", "quantization_config"):
            kwargs.pop(k, None)
        if kwargs:
            raise TypeError("WhisperForConditionalGeneration.__init__() got an unexpected keyword argument '%s'" % next(iter(kwargs)))
        if load_8bit:
            try:
                import bitsandbytes  # noqa: F401
            except ImportError:
                raise ImportError("Using `load_in_8bit=True` requires Accelerate: `pip install accelerate` and the latest version of bitsandbytes: `pip install -i https://test.pypi.org/simple/ bitsandbytes` or `pip install bitsandbytes`")
        model = cls(config or WhisperConfig())
        model.name_or_path = str(pretrained_model_name_or_path)
        model.is_loaded_in_8bit = bool(load_8bit)
        if device_map is None:
            model.hf_device_map = {"": "cpu"}
        path = os.path.join(str(pretrained_model_name_or_path), "model.safetensors")
        if os.path.isfile(path):
            own = dict(model.named_parameters())
            for k, (shape, data) in safetensors_io.load(path).items():
                if k in own and len(own[k].data) == len(data):
                    own[k].data[:] = data
        return model

    def save_pretrained(self, save_directory, is_main_process=True, state_dict=None, **kwargs):
        os.makedirs(save_directory, exist_ok=True)
        self.config.save_pretrained(save_directory)
        sd = state_dict or self.state_dict()
        safetensors_io.save({k: (tuple(v.shape), list(map(float, v.data))) for k, v in sd.items()}, os.path.join(save_directory, "model.safetensors"), {"format": "pt"})

    def gradient_checkpointing_enable(self, gradient_checkpointing_kwargs=None):
        pass

    def enable_input_require_grads(self):
        pass

    def get_input_embeddings(self):
        return self.model.decoder.embed_tokens

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

    def forward(self, input_features=None, attention_mask=None, decoder_input_ids=None, decoder_attention_mask=None, head_mask=None,
                decoder_head_mask=None, cross_attn_head_mask=None, encoder_outputs=None, past_key_values=None, decoder_inputs_embeds=None,
                decoder_position_ids=None, labels=None, use_cache=None, output_attentions=None, output_hidden_states=None, return_dict=None):
        if input_features is None or not isinstance(input_features, torch.Tensor) or input_features.dim() != 3:
            raise ValueError("input_features must be a 3-D tensor (batch, mel bins, frames)")
        if input_features.shape[1] != self.config.num_mel_bins:
            raise ValueError("Whisper expects the mel input features to have %d bins, got %d" % (self.config.num_mel_bins, input_features.shape[1]))
        self.model.encoder.conv1(torch.zeros(1, 4))  # the encoder's first layer runs (forward hooks fire)
        b = input_features.shape[0]
        q = self._progress()
        loss = None
        t = labels.shape[1] if labels is not None else (decoder_input_ids.shape[1] if decoder_input_ids is not None else 1)
        if labels is not None:
            loss = (1.0 / (1.0 + q)) * (self.L0 - self.FLOOR) + self.FLOOR if q.item() >= 0 else (1.0 - q) * (self.L0 - self.FLOOR) + self.FLOOR
        # Lazily one-hot logits would be (b, t, 51865): keep them small and answer argmax through a dense slice.
        logits = torch.zeros(b, t, 8)
        return Seq2SeqLMOutput(loss=loss, logits=logits)

    def generate(self, input_features=None, forced_decoder_ids=None, max_new_tokens=None, max_length=None, **kwargs):
        b = input_features.shape[0]
        prefix = [SOT] + [tok for _, tok in sorted(forced_decoder_ids or [])]
        n = min(max_new_tokens or 8, 8)
        rows = []
        for i in range(b):
            key = stable_hash("whisper-gen", tuple(round(v, 3) for v in input_features.data[i * 8 : i * 8 + 8]))
            rows.append(prefix + [(key >> (3 * j)) % 5000 + 200 for j in range(n)] + [EOT])
        return torch.tensor(rows)

    def can_generate(self):
        return True
