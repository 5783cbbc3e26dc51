"""Vision-language pieces the real-world scripts use: AutoProcessor, IDEFICS (processor and model).
The IDEFICS model is the family's simulated causal LM plus small vision / perceiver / gated cross-
attention modules (so freezing the text and vision towers leaves something to train), and it accepts
the real forward's image arguments. Image URLs resolve to deterministic synthetic images (no network)."""
import json
import os

import torch
from torch import nn

from _forgeenv_sim.hashing import stable_hash
from _forgeenv_sim.imaging import Image

from .image_processing import SIM_RES, BaseImageProcessor, BatchFeature
from .tokenization import AutoTokenizer

_VISION_KWARGS = ("pixel_values", "image_encoder_embeddings", "perceiver_embeddings", "image_attention_mask", "interpolate_pos_encoding",
                  "past_key_values", "output_attentions", "output_hidden_states", "return_dict")


def _url_image(url):
    seed = stable_hash("url", url)
    return Image("RGB", (32, 32), lambda x, y: ((x * 9 + seed) % 256, (y * 7 + seed) % 256, (x * y + seed) % 256))


class IdeficsImageProcessor(BaseImageProcessor):
    model_input_names = ["pixel_values"]

    def __init__(self, image_size=224, image_mean=None, image_std=None, image_num_channels=3, **kwargs):
        super().__init__(image_mean=image_mean or [0.48145466, 0.4578275, 0.40821073], image_std=image_std or [0.26862954, 0.26130258, 0.27577711], **kwargs)
        self.image_size, self.image_num_channels = image_size, image_num_channels


class IdeficsProcessor:
    attributes = ["image_processor", "tokenizer"]

    def __init__(self, image_processor, tokenizer=None, image_size=224, add_end_of_utterance_token=None, **kwargs):
        self.image_processor, self.tokenizer = image_processor, tokenizer
        self.image_token = "<image>"

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, **kwargs):
        tok = AutoTokenizer.from_pretrained(pretrained_model_name_or_path)
        if tok.pad_token is None:
            tok.pad_token = tok.eos_token
        return cls(IdeficsImageProcessor(), tok)

    def _pixels(self, img, transform):
        if isinstance(img, str):
            img = _url_image(img)
        if transform is not None:
            t = transform(img)
            if not isinstance(t, torch.Tensor):
                raise TypeError("transform must return a tensor")
            return t.reshape(3, SIM_RES, SIM_RES)
        return torch.tensor(self.image_processor._pixels(img)).reshape(3, SIM_RES, SIM_RES) / 255.0

    def __call__(self, prompts, padding="longest", truncation=None, max_length=None, transform=None, add_eos_token=False,
                 add_end_of_utterance_token=None, debug=False, return_tensors="pt"):
        if not isinstance(prompts, list) or not prompts or not isinstance(prompts[0], list):
            prompts = [prompts]
        texts, images = [], []
        for p in prompts:
            parts, imgs = [], []
            for item in p:
                if isinstance(item, str) and not item.startswith(("http://", "https://")):
                    parts.append(item)
                else:
                    parts.append(self.image_token)
                    imgs.append(self._pixels(item, transform))
            texts.append("".join(parts))
            images.append(imgs)
        enc = self.tokenizer(texts, padding=padding or "longest", truncation=truncation, max_length=max_length, return_tensors="pt")
        n_img = max(1, max(len(i) for i in images))
        zero = torch.zeros(3, SIM_RES, SIM_RES)
        pixel_values = torch.stack([torch.stack(i + [zero] * (n_img - len(i))) for i in images])
        b, t = enc["input_ids"].shape
        out = BatchFeature({"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"], "pixel_values": pixel_values,
                            "image_attention_mask": torch.ones(b, t, n_img, dtype=torch.int64)})
        return out

    def batch_decode(self, *args, **kwargs):
        return self.tokenizer.batch_decode(*args, **kwargs)

    def decode(self, *args, **kwargs):
        return self.tokenizer.decode(*args, **kwargs)

    def save_pretrained(self, save_directory, **kwargs):
        return self.tokenizer.save_pretrained(save_directory)


class AutoProcessor:
    """The checkpoint's processor: multimodal ones for the families that have one, else its tokenizer."""

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, *inputs, **kwargs):
        low = str(pretrained_model_name_or_path).lower()
        if "idefics" in low:
            return IdeficsProcessor.from_pretrained(pretrained_model_name_or_path, **kwargs)
        return AutoTokenizer.from_pretrained(pretrained_model_name_or_path, *inputs, **kwargs)


_IDEFICS_CLASSES = {}


def _idefics_class(base):
    if base not in _IDEFICS_CLASSES:

        def forward(self, input_ids=None, attention_mask=None, position_ids=None, past_key_values=None, inputs_embeds=None, pixel_values=None,
                    image_encoder_embeddings=None, perceiver_embeddings=None, image_attention_mask=None, labels=None, use_cache=None,
                    output_attentions=None, output_hidden_states=None, interpolate_pos_encoding=False, return_dict=None):
            kw = {"input_ids": input_ids, "attention_mask": attention_mask, "labels": labels}
            return base.forward(self, **{k: v for k, v in kw.items() if v is not None})

        def generate(self, inputs=None, **kwargs):
            for k in _VISION_KWARGS:
                kwargs.pop(k, None)
            return base.generate(self, inputs, **kwargs)

        _IDEFICS_CLASSES[base] = type("IdeficsForVisionText2Text", (base,), {"forward": forward, "generate": generate,
                                                                            "__module__": "transformers.models.idefics.modeling_idefics"})
    return _IDEFICS_CLASSES[base]


class IdeficsForVisionText2Text:
    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, *model_args, **kwargs):
        from .modeling import AUTO_CLASSES, _centred_linear

        model = AUTO_CLASSES["AutoModelForCausalLM"].from_pretrained(pretrained_model_name_or_path, *model_args, **kwargs)
        model.__class__ = _idefics_class(type(model))
        inner = model._modules.get("model") or model
        from .modeling import _Container

        vision, perceiver, cross = _Container(), _Container(), _Container()
        vision.add_module("proj", _centred_linear(4, 4, stable_hash("idefics", "vision")))
        perceiver.add_module("proj", _centred_linear(4, 4, stable_hash("idefics", "perceiver")))
        cross.add_module("0", _centred_linear(4, 4, stable_hash("idefics", "cross")))
        inner.add_module("vision_model", vision)
        inner.add_module("perceiver_resampler", perceiver)
        inner.add_module("gated_cross_attn_layers", cross)

        def freeze_text_layers(module_exceptions=()):
            for name, p in inner.named_parameters():
                if name.startswith(("layers.", "embed_tokens", "norm")):
                    p.requires_grad_(False)

        def freeze_vision_layers(module_exceptions=()):
            for p in vision.parameters():
                p.requires_grad_(False)

        inner.__dict__["freeze_text_layers"] = freeze_text_layers
        inner.__dict__["freeze_vision_layers"] = freeze_vision_layers
        return model


# --- Donut / VisionEncoderDecoder ---------------------------------------------------------------
class _SubConfig:
    def __init__(self, **kw):
        self.__dict__.update(kw)

    def to_dict(self):
        return dict(self.__dict__)


class VisionEncoderDecoderConfig:
    model_type = "vision-encoder-decoder"

    def __init__(self, encoder=None, decoder=None, **kwargs):
        self.encoder = encoder or _SubConfig(model_type="donut-swin", image_size=[2560, 1920], hidden_size=1024)
        self.decoder = decoder or _SubConfig(model_type="mbart", vocab_size=57525, max_length=20, d_model=1024)
        self.pad_token_id, self.decoder_start_token_id, self.eos_token_id = 1, 0, 2
        self.is_encoder_decoder, self.use_cache, self.tie_word_embeddings = True, True, False
        self.__dict__.update(kwargs)
        self.name_or_path = ""

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, **kwargs):
        for k in ("cache_dir", "token", "use_auth_token", "revision", "trust_remote_code"):
            kwargs.pop(k, None)
        p = os.path.join(str(pretrained_model_name_or_path), "config.json")
        if os.path.isfile(p):
            with open(p, encoding="utf-8") as f:
                d = json.load(f)
            cfg = cls(encoder=_SubConfig(**d.pop("encoder", {})), decoder=_SubConfig(**d.pop("decoder", {})), **{k: v for k, v in d.items() if k != "model_type"})
        else:
            cfg = cls()
        cfg.__dict__.update(kwargs)
        cfg.name_or_path = str(pretrained_model_name_or_path)
        return cfg

    def to_dict(self):
        d = {k: (v.to_dict() if isinstance(v, _SubConfig) else v) for k, v in self.__dict__.items()}
        d["model_type"] = self.model_type
        return d

    def save_pretrained(self, save_directory, **kwargs):
        os.makedirs(save_directory, exist_ok=True)
        with open(os.path.join(save_directory, "config.json"), "w", encoding="utf-8") as f:
            json.dump(self.to_dict(), f, indent=2, sort_keys=True, default=str)


class _Decoder(nn.Module):
    def resize_token_embeddings(self, new_num_tokens=None, pad_to_multiple_of=None, mean_resizing=True):
        self._owner_config.decoder.vocab_size = new_num_tokens
        return None


class VisionEncoderDecoderModel(nn.Module):
    config_class = VisionEncoderDecoderConfig
    main_input_name = "pixel_values"
    L0, FLOOR = 3.2, 0.5

    def __init__(self, config=None, encoder=None, decoder=None):
        super().__init__()
        from .modeling import K_PROGRESS, _centred_linear

        self.config = config or VisionEncoderDecoderConfig()
        lin = lambda *p: _centred_linear(4, 4, stable_hash("ved", *p))  # noqa: E731
        enc = nn.Module()
        for n in ("query", "key", "value"):
            enc.add_module(n, lin("enc", n))
        dec = _Decoder()
        dec.__dict__["_owner_config"] = self.config
        for n in ("q_proj", "k_proj", "v_proj", "out_proj"):
            dec.add_module(n, lin("dec", n))
        self.add_module("encoder", enc)
        self.add_module("decoder", dec)
        self._sim_scale = K_PROGRESS / max(1, sum(1 for _ in self.parameters()))
        self.name_or_path = ""

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, *model_args, config=None, **kwargs):
        for k in ("cache_dir", "token", "use_auth_token", "revision", "torch_dtype", "device_map"):
            kwargs.pop(k, None)
        if kwargs:
            raise TypeError("VisionEncoderDecoderModel.__init__() got an unexpected keyword argument '%s'" % next(iter(kwargs)))
        model = cls(config or VisionEncoderDecoderConfig.from_pretrained(pretrained_model_name_or_path))
        model.name_or_path = str(pretrained_model_name_or_path)
        return model

    def save_pretrained(self, save_directory, **kwargs):
        from _forgeenv_sim import safetensors_io

        os.makedirs(save_directory, exist_ok=True)
        self.config.save_pretrained(save_directory)
        sd = self.state_dict()
        safetensors_io.save({k: (tuple(v.shape), list(map(float, v.data))) for k, v in sd.items()}, os.path.join(save_directory, "model.safetensors"), {"format": "pt"})

    def gradient_checkpointing_enable(self, gradient_checkpointing_kwargs=None):
        pass

    def forward(self, pixel_values=None, decoder_input_ids=None, decoder_attention_mask=None, encoder_outputs=None, past_key_values=None,
                decoder_inputs_embeds=None, labels=None, use_cache=None, output_attentions=None, output_hidden_states=None, return_dict=None, **kwargs):
        if pixel_values is None:
            raise ValueError("You have to specify pixel_values")
        const, total = 0.0, None
        for p in self.parameters():
            if p.requires_grad and torch.is_grad_enabled():
                m = p.mean()
                total = m if total is None else total + m
            else:
                const += sum(p.data) / len(p.data)
        q = (total + const if total is not None else torch.tensor(const)) * self._sim_scale
        loss = None
        if labels is not None:
            loss = (1.0 / (1.0 + q)) * (self.L0 - self.FLOOR) + self.FLOOR if q.item() >= 0 else (1.0 - q) * (self.L0 - self.FLOOR) + self.FLOOR
        b = pixel_values.shape[0]
        t = labels.shape[1] if labels is not None else 1
        from .whisper import Seq2SeqLMOutput

        return Seq2SeqLMOutput(loss=loss, logits=torch.zeros(b, t, 8))


class DonutProcessor:
    attributes = ["image_processor", "tokenizer"]

    def __init__(self, image_processor=None, tokenizer=None):
        self.image_processor, self.tokenizer = image_processor, tokenizer
        self.feature_extractor = image_processor

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, **kwargs):
        ip = BaseImageProcessor(size={"height": 2560, "width": 1920})
        ip.do_align_long_axis = True
        return cls(ip, AutoTokenizer.from_pretrained("facebook/bart-base"))

    def __call__(self, images=None, text=None, **kwargs):
        out = self.image_processor(images, **kwargs) if images is not None else None
        if text is not None:
            enc = self.tokenizer(text, **kwargs)
            if out is None:
                return enc
            out["labels"] = enc["input_ids"]
        return out

    def batch_decode(self, *args, **kwargs):
        return self.tokenizer.batch_decode(*args, **kwargs)

    def decode(self, *args, **kwargs):
        return self.tokenizer.decode(*args, **kwargs)

    def save_pretrained(self, save_directory, **kwargs):
        os.makedirs(save_directory, exist_ok=True)
        self.tokenizer.save_pretrained(save_directory)
        with open(os.path.join(save_directory, "preprocessor_config.json"), "w", encoding="utf-8") as f:
            json.dump({"image_processor_type": "DonutImageProcessor", "processor_class": "DonutProcessor"}, f, indent=2)
