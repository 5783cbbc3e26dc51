"""Writes single local-hub items (any model id, any dataset id) for ForgeEnv's `real` mode.

The sibling of make_hub.py (which writes the corpus's fixed base hub): it runs INSIDE the snapshot's
interpreter, so every file is written by that era's own transformers/tokenizers/datasets. Each item
goes into its own folder laid out like an HF_HOME (`hub/models--org--name/...` or `datasets/...`);
ForgeEnv composes a run's HF_HOME from the base hub plus exactly the items the task needs.

Input: a JSON spec (src/env/hub/ensure.ts writes it):
  {"items": [{"kind": "model", "out": DIR, "id": "Qwen/Qwen2-0.5B", "model_type": "qwen2",
              "head": "causal_lm", "tokenizer": "qwen", "chat_template": "chatml" | null,
              "config": {...} | null},
             {"kind": "dataset", "out": DIR, "path": "org/name", "config": null,
              "splits": ["train", "test"], "columns": {"text": "string", "label": "label"},
              "labels": {"label": ["neg", "pos"]}},
             {"kind": "metric", "out": DIR, "name": "glue"}]}
Output: one `[hub-item] {json}` line per item: {"index": i, "ok": true} or {"index": i, "ok": false,
"reason": "..."}. A failing item never stops the others. Exit 0 unless the spec itself is unreadable.

Models are random (seed 0), 2 layers of width 32, from `AutoConfig.for_model(model_type)` with every
size attribute it has shrunk (sub-configs too); tokenizers are trained on synthetic text with the
family's real special tokens and, for chat models, the family's real chat template.
"""
import argparse
import hashlib
import json
import os
import random
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_hub  # noqa: E402  (the base generator: tokenizer trainers, offline env, PNG writer)

VOCAB_SIZE = 600

# Size attributes of transformers configs -> the tiny value. Applied wherever the key exists,
# recursively into sub-configs (text_config, vision_config, encoder, decoder, ...).
SMALL = {
    "hidden_size": 32, "d_model": 32, "n_embd": 32, "dim": 32, "embed_dim": 32, "projection_dim": 32,
    "num_hidden_layers": 2, "n_layer": 2, "num_layers": 2, "n_layers": 2, "encoder_layers": 2, "decoder_layers": 2,
    "num_decoder_layers": 2,
    "num_attention_heads": 2, "n_head": 2, "num_heads": 2, "n_heads": 2, "encoder_attention_heads": 2,
    "decoder_attention_heads": 2, "num_key_value_heads": 1,
    "intermediate_size": 37, "d_ff": 37, "n_inner": 37, "hidden_dim": 37, "ffn_dim": 37, "encoder_ffn_dim": 37,
    "decoder_ffn_dim": 37, "moe_intermediate_size": 16, "shared_expert_intermediate_size": 16,
    "head_dim": 16, "d_kv": 16, "embedding_size": 32, "num_local_experts": 4, "num_experts": 4,
    "num_experts_per_tok": 2, "image_size": 32, "patch_size": 8, "max_position_embeddings": 256,
    "max_target_positions": 256, "conv_dim": [32, 32], "conv_stride": [5, 2], "conv_kernel": [10, 3],
    "num_conv_pos_embeddings": 16, "num_conv_pos_embedding_groups": 2, "codevector_dim": 32,
    "proj_codevector_dim": 32, "tdnn_dim": [32, 32], "tdnn_kernel": [5, 3], "tdnn_dilation": [1, 2], "xvector_output_dim": 32,
    "entity_emb_size": 16, "entity_vocab_size": 16, "relative_attention_num_buckets": 8,
}
LAYER_LISTS = ("layer_types", "mlp_only_layers", "block_types")

# Chat templates: the families' real ones, copied from each model repo's tokenizer_config.json.
CHAT_TEMPLATES = {
    # meta-llama/Meta-Llama-3-8B-Instruct (tokenizer_config.json, "chat_template")
    "llama3": (
        "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = '<|start_header_id|>' + "
        "message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}"
        "{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}{% if add_generation_prompt %}"
        "{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}"
    ),
    # meta-llama/Llama-2-7b-chat-hf (tokenizer_config.json, "chat_template")
    "llama2": (
        "{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}{% set system_message = messages[0]['content'] %}"
        "{% else %}{% set loop_messages = messages %}{% set system_message = false %}{% endif %}{% for message in loop_messages %}"
        "{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate "
        "user/assistant/user/assistant/...') }}{% endif %}{% if loop.index0 == 0 and system_message != false %}{% set content = "
        "'<<SYS>>\\n' + system_message + '\\n<</SYS>>\\n\\n' + message['content'] %}{% else %}{% set content = message['content'] %}"
        "{% endif %}{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}"
        "{% elif message['role'] == 'assistant' %}{{ ' '  + content.strip() + ' ' + eos_token }}{% endif %}{% endfor %}"
    ),
    # Qwen/Qwen2-0.5B-Instruct (tokenizer_config.json, "chat_template"): ChatML
    "chatml": (
        "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\n"
        "You are a helpful assistant.<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + "
        "'<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
    ),
    # HuggingFaceTB/SmolLM2-135M-Instruct (tokenizer_config.json, "chat_template"): ChatML
    "chatml-smollm": (
        "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\n"
        "You are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + "
        "message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}"
        "{{ '<|im_start|>assistant\n' }}{% endif %}"
    ),
    # mistralai/Mistral-7B-Instruct-v0.1 (tokenizer_config.json, "chat_template")
    "mistral": (
        "{{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
        "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
        "{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}{% elif message['role'] == 'assistant' %}"
        "{{ message['content'] + eos_token}}{% else %}{{ raise_exception('Only user and assistant roles are supported!') }}{% endif %}{% endfor %}"
    ),
    # google/gemma-2b-it (tokenizer_config.json, "chat_template")
    "gemma": (
        "{{ bos_token }}{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}"
        "{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation "
        "roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if (message['role'] == 'assistant') %}"
        "{% set role = 'model' %}{% else %}{% set role = message['role'] %}{% endif %}{{ '<start_of_turn>' + role + '\n' + "
        "message['content'] | trim + '<end_of_turn>\n' }}{% endfor %}{% if add_generation_prompt %}{{'<start_of_turn>model\n'}}{% endif %}"
    ),
    # TinyLlama/TinyLlama-1.1B-Chat-v1.0 and HuggingFaceH4/zephyr-7b-beta (tokenizer_config.json, "chat_template"):
    # Zephyr's <|user|>/<|assistant|> turns as plain text, each ended by eos; a system turn is allowed
    "zephyr": (
        "{% for message in messages %}\n{% if message['role'] == 'user' %}\n{{ '<|user|>\n' + message['content'] + eos_token }}\n"
        "{% elif message['role'] == 'system' %}\n{{ '<|system|>\n' + message['content'] + eos_token }}\n"
        "{% elif message['role'] == 'assistant' %}\n{{ '<|assistant|>\n'  + message['content'] + eos_token }}\n{% endif %}\n"
        "{% if loop.last and add_generation_prompt %}\n{{ '<|assistant|>' }}\n{% endif %}\n{% endfor %}"
    ),
    # microsoft/Phi-3-mini-4k-instruct (tokenizer_config.json, "chat_template")
    "phi3": (
        "{% for message in messages %}{% if message['role'] == 'system' %}{{'<|system|>\n' + message['content'] + '<|end|>\n'}}"
        "{% elif message['role'] == 'user' %}{{'<|user|>\n' + message['content'] + '<|end|>\n'}}{% elif message['role'] == 'assistant' %}"
        "{{'<|assistant|>\n' + message['content'] + '<|end|>\n'}}{% endif %}{% endfor %}{% if add_generation_prompt %}"
        "{{ '<|assistant|>\n' }}{% else %}{{ eos_token }}{% endif %}"
    ),
}

# Families whose original templates TRL ships (trl/chat_templates/<name>.jinja, from trl 1.x; TRL recognises a
# template by exact comparison, for tool calling and assistant-only loss): read from the snapshot's own trl
# when it has them; an older trl compares nothing, and the family's ChatML turns (Qwen2's) stand in.
TRL_TEMPLATE_FILES = {"qwen2_5": "qwen2_5.jinja", "qwen3": "qwen3.jinja"}


def chat_template_text(name):
    if name not in TRL_TEMPLATE_FILES:
        return CHAT_TEMPLATES[name]
    import importlib.util

    spec = importlib.util.find_spec("trl")  # locates trl without importing it
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = os.path.join(folder, "chat_templates", TRL_TEMPLATE_FILES[name])
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as f:
                return f.read()
    return CHAT_TEMPLATES["chatml"]


# Byte-level BPE families: their real special tokens (from each family's special_tokens_map.json).
# bos is prepended by the post-processor when add_bos is set, as the real tokenizers do.
BYTE_LEVEL = {
    "llama2": dict(bos="<s>", eos="</s>", unk="<unk>", pad=None, extra=[], add_bos=True),
    "mistral": dict(bos="<s>", eos="</s>", unk="<unk>", pad=None, extra=["[INST]", "[/INST]"], add_bos=True),
    "llama3": dict(bos="<|begin_of_text|>", eos="<|end_of_text|>", unk=None, pad=None,
                   extra=["<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"], add_bos=True),
    "llama3-instruct": dict(bos="<|begin_of_text|>", eos="<|eot_id|>", unk=None, pad=None,
                            extra=["<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>"], add_bos=True),
    "qwen": dict(bos=None, eos="<|endoftext|>", unk=None, pad="<|endoftext|>", extra=["<|im_start|>", "<|im_end|>"], add_bos=False),
    "qwen-instruct": dict(bos=None, eos="<|im_end|>", unk=None, pad="<|endoftext|>", extra=["<|endoftext|>", "<|im_start|>"], add_bos=False),
    "smollm": dict(bos="<|endoftext|>", eos="<|endoftext|>", unk="<|endoftext|>", pad=None, extra=["<|im_start|>", "<|im_end|>"], add_bos=False),
    "smollm-instruct": dict(bos="<|im_start|>", eos="<|im_end|>", unk="<|endoftext|>", pad="<|im_end|>", extra=["<|endoftext|>"], add_bos=False),
    "gemma": dict(bos="<bos>", eos="<eos>", unk="<unk>", pad="<pad>", extra=["<start_of_turn>", "<end_of_turn>"], add_bos=True),
    "phi3": dict(bos="<s>", eos="<|endoftext|>", unk="<unk>", pad="<|endoftext|>",
                 extra=["<|system|>", "<|user|>", "<|assistant|>", "<|end|>"], add_bos=False),
    "phi": dict(bos="<|endoftext|>", eos="<|endoftext|>", unk="<|endoftext|>", pad=None, extra=[], add_bos=False),
    "opt": dict(bos="</s>", eos="</s>", unk="</s>", pad="<pad>", extra=[], add_bos=True),
    "neox": dict(bos="<|endoftext|>", eos="<|endoftext|>", unk="<|endoftext|>", pad=None, extra=[], add_bos=False),
    "falcon": dict(bos=None, eos="<|endoftext|>", unk=None, pad=None, extra=[">>TITLE<<", ">>ABSTRACT<<"], add_bos=False),
    "bloom": dict(bos="<s>", eos="</s>", unk="<unk>", pad="<pad>", extra=[], add_bos=False),
    "bart": dict(bos="<s>", eos="</s>", unk="<unk>", pad="<pad>", extra=["<mask>"], add_bos=True, cls="<s>", sep="</s>", mask="<mask>"),
    "whisper": dict(bos="<|endoftext|>", eos="<|endoftext|>", unk="<|endoftext|>", pad="<|endoftext|>",
                    extra=["<|startoftranscript|>", "<|en|>", "<|transcribe|>", "<|translate|>", "<|notimestamps|>"], add_bos=False),
    "idefics": dict(bos="<s>", eos="</s>", unk="<unk>", pad="<unk>", extra=["<fake_token_around_image>", "<image>", "<end_of_utterance>"], add_bos=True),
    "llava": dict(bos="<s>", eos="</s>", unk="<unk>", pad="<pad>", extra=["<image>"], add_bos=True),
    "clip": dict(bos="<|startoftext|>", eos="<|endoftext|>", unk="<|endoftext|>", pad="<|endoftext|>", extra=[], add_bos=True),
}
# The base generator's families (WordPiece, byte-level RoBERTa/GPT-2, Unigram T5/ALBERT).
BASE_FAMILIES = ("bert-cased", "bert-uncased", "roberta", "gpt2", "t5", "albert")

HEADS = {
    "causal_lm": ["AutoModelForCausalLM"],
    "seq2seq_lm": ["AutoModelForSeq2SeqLM"],
    "masked_lm": ["AutoModelForMaskedLM"],
    "image_classification": ["AutoModelForImageClassification"],
    "speech_seq2seq": ["AutoModelForSpeechSeq2Seq"],
    "ctc": ["AutoModelForCTC"],
    "vision2seq": ["AutoModelForImageTextToText", "AutoModelForVision2Seq"],
    "base": [],
}


def result(index, ok, reason=None, note=None):
    extra = {}
    if reason:
        extra["reason"] = reason
    if note:
        extra["note"] = note
    print("[hub-item] " + json.dumps(dict({"index": index, "ok": ok}, **extra)), flush=True)


def pillow_note(model_type):
    """Image processors load only with Pillow: say so instead of letting the script find out."""
    import importlib.util

    if importlib.util.find_spec("PIL") is None:
        return "image processor written, but this interpreter has no Pillow, so loading it raises transformers' PIL ImportError"
    return None


class Refused(Exception):
    """An item this snapshot cannot provide; the message is the reason shown to the user."""


def shrink(d):
    for k, v in list(d.items()):
        if isinstance(v, dict):
            shrink(v)
        elif k in SMALL and (isinstance(v, (int, float)) and not isinstance(v, bool) or isinstance(v, list)) and v is not None:
            d[k] = SMALL[k]
        elif k in LAYER_LISTS and isinstance(v, list):
            d[k] = v[:2]
    # Swin-like stages: one stage per depth entry.
    if isinstance(d.get("depths"), list):
        d["depths"] = [1, 1]
        if isinstance(d.get("num_heads"), list) or "num_heads" in d:
            d["num_heads"] = [2, 2]
        d["embed_dim"] = 16
        d["window_size"] = 2
        d.pop("out_features", None)
        d.pop("out_indices", None)
        d.pop("stage_names", None)
    return d


def tiny_config(tr, model_type, user_config):
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    if model_type == "vision-encoder-decoder":
        return tiny_vision_encoder_decoder(tr, user_config)
    if model_type not in CONFIG_MAPPING:
        raise Refused("transformers %s does not know model type %r (added in a later release)" % (tr.__version__, model_type))
    cls = CONFIG_MAPPING[model_type]
    base = dict(user_config or {})
    base.pop("architectures", None)
    base.pop("_name_or_path", None)
    try:
        default = cls(**{k: v for k, v in base.items() if k != "model_type"}) if base else cls()
    except Exception as e:  # composite configs without defaults (vision-encoder-decoder)
        raise Refused("transformers %s cannot build a default %s config: %s" % (tr.__version__, model_type, str(e).splitlines()[0]))
    d = shrink(default.to_dict())
    return cls.from_dict(d)


def tiny_vision_encoder_decoder(tr, user_config):
    """Donut-style: a tiny image encoder (the user's encoder type, else donut-swin) and a tiny text decoder with cross-attention."""
    user_config = user_config or {}
    enc_type = (user_config.get("encoder") or {}).get("model_type") or "donut-swin"
    dec_type = (user_config.get("decoder") or {}).get("model_type") or "mbart"
    enc = tiny_config(tr, enc_type, None)
    dec = tiny_config(tr, dec_type, None)
    dec.is_decoder = True
    dec.add_cross_attention = True
    return tr.VisionEncoderDecoderConfig.from_encoder_decoder_configs(enc, dec)


def vocab_attr(config):
    for c in (config, getattr(config, "text_config", None), getattr(config, "decoder", None)):
        if c is not None and hasattr(c, "vocab_size"):
            yield c


def train_byte_level(spec, text):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    specials = [t for t in [spec.get("pad"), spec.get("bos"), spec.get("eos"), spec.get("unk")] + spec["extra"] if t]
    specials = list(dict.fromkeys(specials))
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=VOCAB_SIZE, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(text, trainer)
    if spec["add_bos"] and spec.get("bos"):
        bos = spec["bos"]
        tok.post_processor = processors.TemplateProcessing(
            single="%s:0 $A:0" % bos, pair="%s:0 $A:0 %s:1 $B:1" % (bos, bos), special_tokens=[(bos, tok.token_to_id(bos))]
        )
    else:
        tok.post_processor = processors.ByteLevel(trim_offsets=False)
    return tok


def write_tokenizer(family, model_type, template, text, dest):
    """Returns (tokenizer object, {role: id}) after writing the tokenizer files into dest."""
    if family in BASE_FAMILIES:
        tok, _ = make_hub.train_tokenizer(family, text)
        make_hub.TOKENIZER_CLASS.setdefault(model_type, "PreTrainedTokenizerFast")
        make_hub.tokenizer_files(model_type, family, tok, dest)
        ids = {}
        with open(os.path.join(dest, "special_tokens_map.json"), encoding="utf-8") as f:
            for role, t in json.load(f).items():
                if isinstance(t, str):  # `pad_token` -> `pad`, the roles the byte-level branch returns
                    ids[role[: -len("_token")] if role.endswith("_token") else role] = tok.token_to_id(t)
        if template:
            add_chat_template(dest, template)
        return tok, ids
    if family not in BYTE_LEVEL:
        raise Refused("no tokenizer recipe for family %r" % family)
    spec = BYTE_LEVEL[family]
    tok = train_byte_level(spec, text)
    tok.save(os.path.join(dest, "tokenizer.json"))
    # The slow tokenizer's files too (vocab.json, merges.txt): a class that loads only the slow one
    # (WhisperProcessor's WhisperTokenizer in transformers < 4.40, GPT2Tokenizer) opens them.
    if type(tok.model).__name__ == "BPE":
        tok.model.save(dest)
    special = {}
    for role in ("bos", "eos", "unk", "pad", "cls", "sep", "mask"):
        if spec.get(role):
            special[role + "_token"] = spec[role]
    extra = [t for t in spec["extra"] if t not in special.values()]
    if extra:
        special["additional_special_tokens"] = extra
    cfg = dict(special, tokenizer_class="PreTrainedTokenizerFast", model_max_length=2048, clean_up_tokenization_spaces=False)
    # The real tokenizers of these families (LlamaTokenizerFast, Qwen2TokenizerFast, BartTokenizerFast, ...) give
    # no token_type_ids, which their models' forward() does not take: `model(**tokenizer(text))` must run.
    cfg["model_input_names"] = ["input_ids", "attention_mask"]
    if spec["add_bos"]:
        cfg["add_bos_token"] = True
    with open(os.path.join(dest, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)
    with open(os.path.join(dest, "special_tokens_map.json"), "w", encoding="utf-8") as f:
        json.dump(special, f, indent=2, sort_keys=True)
    if template:
        add_chat_template(dest, template)
    ids = {k[: -len("_token")]: tok.token_to_id(v) for k, v in special.items() if isinstance(v, str)}
    return tok, ids


# Position tables offset by the padding index (RoBERTa-style): two fewer usable positions.
OFFSET_POSITIONS = {"roberta", "xlm-roberta", "camembert", "luke", "layoutlmv3", "longformer"}


def limit_tokenizer_length(dest, config, model_type):
    """The tokenizer's model_max_length is the tiny model's own position count: a tokenizer that says 2048
    over a 256-position table lets `truncation=True` pass sequences that overrun the model's position
    embeddings (IndexError: index out of range in self)."""
    positions = None
    for c in vocab_attr(config):
        for attr in ("max_position_embeddings", "n_positions", "max_target_positions"):
            v = getattr(c, attr, None)
            if isinstance(v, int) and v > 0:
                positions = v if positions is None else min(positions, v)
                break
    if positions is None:
        return
    if model_type in OFFSET_POSITIONS:
        positions -= 2
    path = os.path.join(dest, "tokenizer_config.json")
    with open(path, encoding="utf-8") as f:
        cfg = json.load(f)
    if not isinstance(cfg.get("model_max_length"), int) or cfg["model_max_length"] > positions:
        cfg["model_max_length"] = positions
    with open(path, "w", encoding="utf-8") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)


def add_chat_template(dest, name):
    path = os.path.join(dest, "tokenizer_config.json")
    with open(path, encoding="utf-8") as f:
        cfg = json.load(f)
    cfg["chat_template"] = chat_template_text(name)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)


# Image processor classes of the vision families (as their hub repos name them). A static table:
# transformers' own mapping needs Pillow to be imported, which the snapshots do not install.
IMAGE_PROCESSORS = {
    "vit": "ViTImageProcessor", "deit": "DeiTImageProcessor", "swin": "ViTImageProcessor", "beit": "BeitImageProcessor",
    "convnext": "ConvNextImageProcessor", "resnet": "ConvNextImageProcessor", "clip": "CLIPImageProcessor",
    "siglip": "SiglipImageProcessor", "dinov2": "BitImageProcessor", "donut-swin": "DonutImageProcessor",
    "mobilevit": "MobileViTImageProcessor", "segformer": "SegformerImageProcessor",
}


def image_processor(dest, model_type):
    """preprocessor_config.json of a 32x32 image processor (written as JSON: no Pillow needed to write it)."""
    name = IMAGE_PROCESSORS.get(model_type)
    if not name:
        raise Refused("no image processor recipe for model type %r" % model_type)
    cfg = {
        "do_normalize": True, "do_rescale": True, "do_resize": True, "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5],
        "image_processor_type": name, "resample": 2, "rescale_factor": 1 / 255, "size": {"height": 32, "width": 32},
    }
    if model_type == "clip":
        cfg.update(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}, do_center_crop=True)
    if model_type == "donut-swin":
        cfg.update(processor_class="DonutProcessor", do_align_long_axis=False, do_thumbnail=True, do_pad=True)
    with open(os.path.join(dest, "preprocessor_config.json"), "w", encoding="utf-8") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)


def audio_feature_extractor(tr, dest, model_type):
    if model_type == "whisper":
        tr.WhisperFeatureExtractor(feature_size=80).save_pretrained(dest)
    elif model_type in ("wav2vec2", "hubert", "wavlm"):
        tr.Wav2Vec2FeatureExtractor(feature_size=1, sampling_rate=16000, padding_value=0.0, do_normalize=True, return_attention_mask=True).save_pretrained(dest)
    else:
        raise Refused("no feature extractor recipe for audio model type %r" % model_type)


VISION_TYPES = {"vit", "swin", "deit", "beit", "convnext", "resnet", "clip", "siglip", "dinov2", "mobilevit", "segformer"}
AUDIO_TYPES = {"whisper", "wav2vec2", "hubert", "wavlm"}


PEFT_TASK_TYPES = {"causal_lm": "CAUSAL_LM", "seq2seq_lm": "SEQ_2_SEQ_LM"}


def save_lora_adapter(model, dest, item):
    """A LoRA adapter of the tiny model of `adapter_of` (the same recipe, so the same shapes as the base the
    hub serves under that id), made by the interpreter's own peft: what `AutoPeftModelFor*.from_pretrained`
    and `PeftModel.from_pretrained` load (adapter_config.json pointing at the base, adapter weights)."""
    try:
        import peft
    except ImportError:
        raise Refused("this snapshot has no peft to write a LoRA adapter with")
    task = PEFT_TASK_TYPES.get(item["head"])
    try:
        wrapped = peft.get_peft_model(model, peft.LoraConfig(r=4, lora_alpha=8, task_type=task))
    except ValueError:  # a model type peft has no default target modules for
        wrapped = peft.get_peft_model(model, peft.LoraConfig(r=4, lora_alpha=8, task_type=task, target_modules="all-linear"))
    wrapped.save_pretrained(dest)
    path = os.path.join(dest, "adapter_config.json")
    with open(path, encoding="utf-8") as f:
        cfg = json.load(f)
    cfg["base_model_name_or_path"] = item["adapter_of"]
    with open(path, "w", encoding="utf-8") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)


# The token an encoder-decoder family starts decoding with, as its real checkpoints' config.json says (a role of
# the tokenizer's special tokens, or a token). The transformers config classes leave it None for some families
# (T5Config), which the real checkpoints set: generation and `DataCollatorForSeq2Seq(model=...)` need it.
DECODER_START = {
    # google-t5/t5-small, google/flan-t5-base, google/mt5-small, google/umt5-small, google/long-t5-tglobal-base
    # config.json: "decoder_start_token_id": 0, the pad token's id ("pad_token_id": 0)
    "t5": "pad", "mt5": "pad", "umt5": "pad", "longt5": "pad",
    # google/pegasus-xsum config.json: "decoder_start_token_id": 0 = "pad_token_id": 0
    "pegasus": "pad",
    # facebook/bart-base, facebook/bart-large-cnn config.json: "decoder_start_token_id": 2 = "eos_token_id": 2
    "bart": "eos",
    # openai/whisper-tiny config.json: "decoder_start_token_id": 50258, the id of <|startoftranscript|>
    "whisper": "<|startoftranscript|>",
}


def decoder_start_id(model_type, tok, ids):
    """The id DECODER_START names for this family in the tokenizer written, else None (not a family of the table)."""
    start = DECODER_START.get(model_type)
    if start is None:
        return None
    if start in ("pad", "eos", "bos"):
        return ids.get(start)
    return tok.token_to_id(start)


def write_model(item, text):
    """Writes the model repo; returns a note for the user or None."""
    import torch
    import transformers as tr

    repo = os.path.join(item["out"], "hub", "models--" + item["id"].replace("/", "--"))
    commit = make_hub.commit_of(item["id"])
    snap = os.path.join(repo, "snapshots", commit)
    os.makedirs(snap, exist_ok=True)
    os.makedirs(os.path.join(repo, "refs"), exist_ok=True)
    model_type = item["model_type"]
    config = tiny_config(tr, model_type, item.get("config"))
    ids = {}
    if item.get("tokenizer"):
        tok, ids = write_tokenizer(item["tokenizer"], model_type, item.get("chat_template"), text, snap)
        size = tok.get_vocab_size(with_added_tokens=True)
        for c in vocab_attr(config):
            c.vocab_size = size
            for role in ("bos", "eos", "pad"):
                if ids.get(role) is not None and hasattr(c, role + "_token_id"):
                    setattr(c, role + "_token_id", ids[role])
            start = decoder_start_id(model_type, tok, ids)
            if start is not None and hasattr(c, "decoder_start_token_id"):
                c.decoder_start_token_id = start
            # A family outside the table: an encoder-decoder's checkpoints still name a decoder start token
            # (the config class may default it to None), which generate() and the shift of labels need.
            elif hasattr(c, "decoder_start_token_id") and (getattr(c, "decoder_start_token_id", None) is not None or getattr(c, "is_encoder_decoder", False)):
                c.decoder_start_token_id = ids.get("pad", ids.get("bos", 0)) if model_type != "whisper" else ids.get("bos", 0)
    if item.get("tokenizer"):
        limit_tokenizer_length(snap, config, model_type)
    if model_type == "vision-encoder-decoder":
        image_processor(snap, config.encoder.model_type)
        config.decoder_start_token_id = ids.get("bos", 0)
        config.pad_token_id = ids.get("pad", 0)
        config.eos_token_id = ids.get("eos", 0)
    elif model_type in VISION_TYPES:
        image_processor(snap, model_type)
    if model_type in AUDIO_TYPES:
        audio_feature_extractor(tr, snap, model_type)
    if model_type in PROCESSOR_FAMILIES and item.get("tokenizer"):
        write_processor(tr, snap, model_type, config)
    torch.manual_seed(0)
    model = None
    for auto_name in HEADS[item["head"]] + ["AutoModel"]:
        auto = getattr(tr, auto_name, None)
        if auto is None:
            continue
        try:
            model = auto.from_config(config)
            break
        except ValueError:  # this config class has no such head in this release
            continue
    if model is None and model_type == "vision-encoder-decoder":
        model = tr.VisionEncoderDecoderModel(config=config)
    if model is None:
        raise Refused("transformers %s has no model class for %r" % (tr.__version__, model_type))
    if item.get("adapter_of"):
        save_lora_adapter(model, snap, item)
    else:
        model.save_pretrained(snap)
    with open(os.path.join(repo, "refs", "main"), "w") as f:
        f.write(commit)
    if model_type in VISION_TYPES or model_type == "vision-encoder-decoder":
        return pillow_note(model_type)
    return None


# ---------------------------------------------------------------- multimodal processors

# Chat templates of the vision-language families, whose messages carry content lists
# ({"type": "image"} / {"type": "text", "text": ...}); modelled on the chat_template.json of
# HuggingFaceTB/SmolVLM-Instruct and llava-hf/llava-1.5-7b-hf.
VLM_TEMPLATES = {
    "idefics3": (
        "<|im_start|>{% for message in messages %}{{message['role'] | capitalize}}{% if message['content'][0]['type'] == 'image' %}"
        "{{':'}}{% else %}{{': '}}{% endif %}{% for line in message['content'] %}{% if line['type'] == 'text' %}{{line['text']}}"
        "{% elif line['type'] == 'image' %}{{ '<image>' }}{% endif %}{% endfor %}<end_of_utterance>\n{% endfor %}"
        "{% if add_generation_prompt %}{{ 'Assistant:' }}{% endif %}"
    ),
    "llava": (
        "{% for message in messages %}{% if message['role'] != 'system' %}{{ message['role'].upper() + ': '}}{% endif %}"
        "{% for content in message['content'] | selectattr('type', 'equalto', 'image') %}{{ '<image>\n' }}{% endfor %}"
        "{% for content in message['content'] | selectattr('type', 'equalto', 'text') %}{{ content['text'] + ' '}}{% endfor %}"
        "{% endfor %}{% if add_generation_prompt %}{{ 'ASSISTANT:' }}{% endif %}"
    ),
}
PROCESSOR_FAMILIES = {"idefics", "idefics3", "llava"}


def _accepted(fn, kwargs):
    import inspect

    params = inspect.signature(fn).parameters
    if any(p.kind == p.VAR_KEYWORD for p in params.values()):
        return kwargs
    return {k: v for k, v in kwargs.items() if k in params}


def write_processor(tr, snap, model_type, config):
    """The family's multimodal processor (image processor + the tokenizer written above, image tokens,
    chat template) built by the snapshot's own Processor class, then the config's vocabulary and image
    token ids made to agree with the tokenizer the processor saved."""
    tok = tr.AutoTokenizer.from_pretrained(snap)
    if model_type in ("idefics", "llava"):
        # Their processors take only their checkpoints' tokenizer class (LlamaTokenizerFast): the same
        # trained tokenizer, wrapped in it.
        tok = tr.LlamaTokenizerFast(tokenizer_object=tok.backend_tokenizer, **tok.special_tokens_map)
    norm = dict(image_mean=[0.5, 0.5, 0.5], image_std=[0.5, 0.5, 0.5])
    vc = config.vision_config
    if model_type == "idefics3":
        cls = getattr(tr, "Idefics3Processor", None)
        if cls is None:
            raise Refused("transformers %s has no Idefics3Processor (SmolVLM needs 4.46 or later)" % tr.__version__)
        ip = tr.Idefics3ImageProcessor(**_accepted(tr.Idefics3ImageProcessor.__init__, dict(norm, do_image_splitting=False, size={"longest_edge": vc.image_size}, max_image_size={"longest_edge": vc.image_size})))
        seq = int((vc.image_size // vc.patch_size) ** 2 // (config.scale_factor ** 2))
        proc = cls(**_accepted(cls.__init__, dict(image_processor=ip, tokenizer=tok, image_seq_len=seq, chat_template=VLM_TEMPLATES["idefics3"])))
    elif model_type == "idefics":
        ip = tr.IdeficsImageProcessor(image_size=vc.image_size, **norm)
        proc = tr.IdeficsProcessor(**_accepted(tr.IdeficsProcessor.__init__, dict(image_processor=ip, tokenizer=tok, image_size=vc.image_size)))
    else:  # llava
        ip = tr.CLIPImageProcessor(size={"shortest_edge": vc.image_size}, crop_size={"height": vc.image_size, "width": vc.image_size}, **norm)
        strategy = getattr(config, "vision_feature_select_strategy", "default")
        proc = tr.LlavaProcessor(**_accepted(tr.LlavaProcessor.__init__, dict(image_processor=ip, tokenizer=tok, patch_size=vc.patch_size, vision_feature_select_strategy=strategy, chat_template=VLM_TEMPLATES["llava"], num_additional_image_tokens=1)))
    proc.save_pretrained(snap)
    tok = proc.tokenizer
    size = len(tok)
    for c in vocab_attr(config):
        c.vocab_size = size
    image_id = tok.convert_tokens_to_ids("<image>")
    for attr in ("image_token_id", "image_token_index"):
        if hasattr(config, attr):
            setattr(config, attr, image_id)
    if tok.pad_token_id is not None:
        for c in (config, getattr(config, "text_config", None)):
            if c is not None and hasattr(c, "pad_token_id"):
                c.pad_token_id = tok.pad_token_id


# ---------------------------------------------------------------- metrics

METRICS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "metrics")
METRIC_LIB_LINE = "import evaluate as metric_lib"


def write_metric(item):
    """ForgeEnv's script of the metric (metrics/<name>.py) where each loader looks for it offline:
    evaluate.load's cache (evaluate_modules/metrics/evaluate-metric--<name>/<hash>/) and datasets<3's
    load_metric cache (datasets_modules/metrics/<name>/<hash>/), the latter subclassing datasets.Metric."""
    name = item["name"]
    path = os.path.join(METRICS_DIR, name + ".py")
    if not name.replace("_", "").isalnum() or not os.path.isfile(path):
        raise Refused("ForgeEnv has no offline script of the metric %r (it has: %s)" % (name, ", ".join(sorted(f[:-3] for f in os.listdir(METRICS_DIR) if f.endswith(".py")))))
    with open(path, encoding="utf-8") as f:
        source = f.read()
    if METRIC_LIB_LINE not in source:
        raise Refused("metrics/%s.py lacks the line %r" % (name, METRIC_LIB_LINE))
    modules = os.path.join(item["out"], "modules")
    for lib, folder, text in (
        ("evaluate_modules", "evaluate-metric--" + name, source),
        ("datasets_modules", name, source.replace(METRIC_LIB_LINE, "import datasets as metric_lib")),
    ):
        digest = hashlib.sha256(text.encode()).hexdigest()
        chain = [modules, os.path.join(modules, lib), os.path.join(modules, lib, "metrics"), os.path.join(modules, lib, "metrics", folder)]
        module_dir = os.path.join(chain[-1], digest)
        os.makedirs(module_dir, exist_ok=True)
        for d in chain + [module_dir]:
            open(os.path.join(d, "__init__.py"), "a").close()
        with open(os.path.join(module_dir, name + ".py"), "w", encoding="utf-8") as f:
            f.write(text)
    return None


# ---------------------------------------------------------------- datasets

WORDS = None


def words(synthetic):
    global WORDS
    if WORDS is None:
        WORDS = synthetic.NEUTRAL + synthetic.TOPIC + synthetic.VERBS + synthetic.POS + synthetic.NEG
    return WORDS


def sentence(rng, synthetic, lo=5, hi=14):
    return " ".join(rng.choice(words(synthetic)) for _ in range(rng.randint(lo, hi))).capitalize() + "."


def cell(kind, rng, synthetic, names, i, col):
    if kind == "string":
        return sentence(rng, synthetic)
    if kind == "int":
        return rng.randrange(0, 5)
    if kind == "float":
        return round(rng.random(), 4)
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "label":
        return rng.randrange(len(names or ["0", "1"]))
    if kind == "strings":
        return [sentence(rng, synthetic, 2, 5) for _ in range(rng.randint(1, 3))]
    if kind == "tokens":
        return [rng.choice(words(synthetic)) for _ in range(rng.randint(4, 10))]
    if kind == "ints":
        return [rng.randrange(0, 5) for _ in range(rng.randint(4, 10))]
    if kind == "tags":
        return iob_tags(rng, rng.randint(4, 10), names)
    if kind == "floats":
        return [round(rng.random(), 4) for _ in range(rng.randint(2, 6))]
    if kind == "bools":
        return [rng.random() < 0.5 for _ in range(rng.randint(1, 3))]
    if kind == "messages":
        return [
            {"role": "user", "content": sentence(rng, synthetic) + "?"},
            {"role": "assistant", "content": sentence(rng, synthetic)},
        ]
    if kind == "image":
        return {"bytes": png(rng), "path": None}
    if kind == "audio":
        return {"bytes": wav(rng), "path": None}
    raise Refused("column %r: no synthetic data for kind %r" % (col, kind))


# conll2003's NER names (https://huggingface.co/datasets/eriktks/conll2003); tokenTags.ts IOB_NAMES.
IOB_NAMES = ["O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC", "B-MISC", "I-MISC"]


def iob_tags(rng, n, names):
    """`n` per-word tags as class ids of `names` (default conll2003's NER names), in valid IOB order: spans
    `B-X I-X...` for each X with both names, other names single (src/env/hub/tokenTags.ts draws the same way)."""
    names = list(names or IOB_NAMES)
    types = [t[2:] for t in names if t.startswith("B-") and "I-" + t[2:] in names]
    singles = [t for t in names if not t.startswith("I-") and not (t.startswith("B-") and t[2:] in types)]
    outside = ["O"] if "O" in names else singles
    out, open_ = [], None
    for _ in range(n):
        x = rng.random()
        if open_ is not None and x < 0.3:
            out.append("I-" + open_)
        elif types and (x < 0.55 or not outside):
            open_ = rng.choice(types)
            out.append("B-" + open_)
        else:
            open_ = None
            out.append(rng.choice(outside or names))
    return [names.index(t) for t in out]


def align_to_words(cols, columns, rng, labels):
    """Per-word columns (tags; int lists) of a row with words get one value per word of its first `tokens`
    column, as real NER rows have (run_ner-style scripts index `labels[word_idx]`)."""
    words = next((c for c, k in columns.items() if k == "tokens"), None)
    if words is None:
        return cols
    for c, k in columns.items():
        if k == "tags":
            cols[c] = [iob_tags(rng, len(w), labels.get(c)) for w in cols[words]]
        elif k == "ints":
            cols[c] = [[rng.randrange(0, 5) for _ in w] for w in cols[words]]
    return cols


AUDIO_RATE = 16000  # what speech models' feature extractors expect (Whisper, wav2vec2)


def wav(rng, seconds=0.5):
    """A mono 16-bit PCM WAV at AUDIO_RATE: a tone with a little noise (standard library only)."""
    import io
    import math
    import struct
    import wave

    freq = rng.choice([220.0, 330.0, 440.0, 550.0])
    frames = b"".join(
        struct.pack("<h", int(12000 * math.sin(2 * math.pi * freq * i / AUDIO_RATE) + rng.randint(-800, 800)))
        for i in range(int(AUDIO_RATE * seconds))
    )
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(AUDIO_RATE)
        w.writeframes(frames)
    return buf.getvalue()


def png(rng):
    class Img:
        size = (32, 32)
        mode = "RGB"

        def __init__(self):
            self.base = (rng.randrange(256), rng.randrange(256), rng.randrange(256))

        def getpixel(self, xy):
            x, y = xy
            return tuple((c + 4 * x + 3 * y) & 255 for c in self.base)

    return make_hub.png_bytes(Img())


def feature(ds, kind, names):
    simple = {"string": ds.Value("string"), "int": ds.Value("int64"), "float": ds.Value("float64"), "bool": ds.Value("bool")}
    if kind in simple:
        return simple[kind]
    if kind == "label":
        return ds.ClassLabel(names=list(names or ["0", "1"]))
    if kind in ("strings", "tokens"):
        return ds.Sequence(ds.Value("string"))
    if kind == "ints":
        return ds.Sequence(ds.Value("int64"))
    if kind == "tags":
        # As conll2003/wnut have them: run_ner and its kin read the names off `features[col].feature`.
        return ds.Sequence(ds.ClassLabel(names=list(names or IOB_NAMES)))
    if kind == "floats":
        return ds.Sequence(ds.Value("float64"))
    if kind == "bools":
        return ds.Sequence(ds.Value("bool"))
    if kind == "messages":
        return [{"role": ds.Value("string"), "content": ds.Value("string")}]
    if kind == "image":
        return ds.Image()
    if kind == "audio":
        return ds.Audio(sampling_rate=AUDIO_RATE)
    raise Refused("no feature type for column kind %r" % kind)


def nested_feature(ds, shape):
    """The datasets feature of a nested shape (src/env/hub/nestedShapes.ts): a struct is a dict, a list of
    structs `[{...}]` (a card's `list:`), a list of values a Sequence (a card's `sequence:`)."""
    if "struct" in shape:
        return {k: nested_feature(ds, s) for k, s in shape["struct"].items()}
    if "list" in shape:
        inner = nested_feature(ds, shape["list"])
        return [inner] if isinstance(inner, dict) else ds.Sequence(inner)
    return {"string": ds.Value("string"), "int": ds.Value("int64"), "float": ds.Value("float64"), "bool": ds.Value("bool")}[shape["value"]]


def nested_cell(shape, rng, synthetic):
    """A synthetic value of a nested shape: pooled values drawn from `values`, a fixed-length list of pooled
    values without repeats (the models that answered one prompt), sentences for free text."""
    if "struct" in shape:
        return {k: nested_cell(s, rng, synthetic) for k, s in shape["struct"].items()}
    if "list" in shape:
        n = shape.get("length") or rng.randint(1, 3)
        item = shape["list"]
        if "value" in item and item.get("values") and len(item["values"]) >= n:
            return [nested_scalar(item, v) for v in rng.sample(item["values"], n)]
        return [nested_cell(item, rng, synthetic) for _ in range(n)]
    if shape.get("values"):
        return nested_scalar(shape, rng.choice(shape["values"]))
    return cell(shape["value"], rng, synthetic, None, 0, "")


def nested_scalar(shape, v):
    kind = shape["value"]
    return v if kind == "string" else (v == "true") if kind == "bool" else int(v) if kind == "int" else float(v)


def builder_config_kwargs(ds, item):
    """The call's literal keywords that this release's load_dataset passes on as builder config kwargs."""
    import inspect

    own = {n for n, p in inspect.signature(ds.load_dataset).parameters.items() if p.kind != p.VAR_KEYWORD}
    return {k: v for k, v in (item.get("config_kwargs") or {}).items() if k not in own}


def write_dataset(item, synthetic):
    import datasets as ds
    import pyarrow as pa

    labels = item.get("labels") or {}
    columns = item["columns"]
    base = [c for p, c in make_hub.DATASETS if p == item["path"] and c == item.get("config")]
    if base and item.get("rows"):
        # A base-hub dataset the script takes more rows of: the base schema and rows, repeated.
        features, tables = make_hub.base_dataset_tables(item["path"], base[0], synthetic, item["rows"])
        make_hub.prepare_dataset(item["out"], item["path"], base[0] or "default", features, tables)
        return None
    if not columns:
        raise Refused("no columns known for dataset %r" % item["path"])
    shapes = item.get("shapes") or {}
    for c, k in columns.items():
        if k == "nested" and c not in shapes:
            raise Refused("column %r is nested but no shape is given for it" % c)
    features = ds.Features(
        {c: nested_feature(ds, shapes[c]) if k == "nested" else feature(ds, k, labels.get(c)) for c, k in columns.items()}
    )
    tables = {}
    for split in item["splits"]:
        # A script that selects rows by index (`.select(range(N))`) gets N rows in every split.
        n = item.get("rows") or (64 if split == "train" else 16)
        rng = random.Random(int(hashlib.sha256(("%s:%s" % (item["path"], split)).encode()).hexdigest()[:12], 16))
        cols = {
            c: [nested_cell(shapes[c], rng, synthetic) if k == "nested" else cell(k, rng, synthetic, labels.get(c), i, c) for i in range(n)]
            for c, k in columns.items()
        }
        align_to_words(cols, columns, rng, labels)
        tables[split] = pa.Table.from_pydict(cols, schema=features.arrow_schema)
    config_name = item.get("config") or "default"
    extra = builder_config_kwargs(ds, item)
    if item.get("data_dir") or extra:
        # load_dataset(path, data_dir=D) looks offline for the cache of the config id datasets derives
        # from D (`default-data_dir=data%2Freward`): computed by the interpreter's own datasets.
        # Keywords this release's load_dataset does not take (`use_auth_token=True` from datasets 3)
        # reach the builder config too, and change that id.
        kwargs = dict(extra)
        if item.get("data_dir"):
            kwargs["data_dir"] = item["data_dir"]
        if cache_lookup_ignores_config_kwargs(ds):
            prepare_dataset_with_kwargs_script(item["out"], item["path"], config_name, kwargs, features, tables)
            return image_audio_note(ds, columns)
        config_name = ds.BuilderConfig(name=config_name).create_config_id(kwargs)

    make_hub.prepare_dataset(item["out"], item["path"], config_name, features, tables)
    remove_locks(item["out"])
    return image_audio_note(ds, columns)


def remove_locks(out):
    for root, _, files in os.walk(os.path.join(out, "datasets")):
        for f in files:
            if f.endswith(".lock"):
                os.remove(os.path.join(root, f))


def image_audio_note(ds, columns):
    if "audio" in columns.values():
        import importlib.util

        decoder = "torchcodec" if int(ds.__version__.split(".")[0]) >= 4 else "soundfile"
        if importlib.util.find_spec(decoder) is None:
            return "audio columns written (16 kHz WAV), but this interpreter has no %s, so decoding them raises datasets' ImportError" % decoder
    if "image" in columns.values():
        import importlib.util

        if importlib.util.find_spec("PIL") is None:
            return "image columns written, but this interpreter has no Pillow, so decoding them raises datasets' PIL ImportError"
    return None


# ---------------------------------------------------------------- data_dir datasets of older releases

KWARGS_DATASET_SCRIPT = '''"""Synthetic {path}, written by ForgeEnv's local hub (resources/localhub/make_hub_items.py) for offline runs.

Served as a cached loading script because this datasets release's offline lookup cannot find the prepared
cache of a config made with keywords (`load_dataset(path, data_dir=D)`). Each config id has its Arrow files in
data/<config id>/<split>.arrow and its base config name in data/<config id>/CONFIG_NAME; a folder without that
file is a plain config (the base hub's layout for releases before 2.14).
"""
import os

import datasets
import pyarrow as pa

_HERE = os.path.dirname(os.path.abspath(__file__))
_DATA = os.path.join(_HERE, "data")


def _name(config_id):
    marker = os.path.join(_DATA, config_id, "CONFIG_NAME")
    if os.path.isfile(marker):
        with open(marker, encoding="utf-8") as f:
            return f.read().strip()
    return config_id


_NAMES = sorted({{_name(c) for c in os.listdir(_DATA)}}) if os.path.isdir(_DATA) else ["default"]


def _read(folder, split):
    with pa.memory_map(os.path.join(_DATA, folder, split + ".arrow")) as source:
        return pa.ipc.open_file(source).read_all()


class Synthetic(datasets.ArrowBasedBuilder):
    BUILDER_CONFIGS = [datasets.BuilderConfig(name=c, version=datasets.Version("0.0.0")) for c in _NAMES]
    DEFAULT_CONFIG_NAME = "default" if "default" in _NAMES else None

    def _folder(self):
        # The config id (name plus keywords such as data_dir) when it has files of its own, else the plain name.
        return self.config_id if os.path.isdir(os.path.join(_DATA, self.config_id)) else self.config.name

    def _splits(self):
        return sorted(f[: -len(".arrow")] for f in os.listdir(os.path.join(_DATA, self._folder())) if f.endswith(".arrow"))

    def _info(self):
        return datasets.DatasetInfo(features=datasets.Features.from_arrow_schema(_read(self._folder(), self._splits()[0]).schema))

    def _split_generators(self, dl_manager):
        return [datasets.SplitGenerator(name=s, gen_kwargs={{"split": s}}) for s in self._splits()]

    def _generate_tables(self, split):
        yield 0, _read(self._folder(), split)
'''


def cache_lookup_ignores_config_kwargs(ds):
    """Whether this datasets release cannot load offline, from its prepared cache, a config made with keywords
    (`data_dir=`): before 2.14 (no `dataset_name`) an offline Hub dataset loads only through a cached loading
    script; from 2.14 to 2.18 the `cache` builder's lookup (`_find_hash_in_cache`, no `config_kwargs`) takes the
    newest cached config whatever the keywords, then appends them to its id again, a folder that never exists."""
    import inspect

    if "dataset_name" not in inspect.signature(ds.DatasetBuilder.__init__).parameters:
        return True
    try:
        from datasets.packaged_modules.cache.cache import _find_hash_in_cache
    except ImportError:
        return False
    return "config_kwargs" not in inspect.signature(_find_hash_in_cache).parameters


def prepare_dataset_with_kwargs_script(out, path, config_name, kwargs, features, tables):
    """A config with keywords served the way those releases find it offline: the newest cached loading script of
    `path` (modules/datasets_modules/datasets/<path with -- for />/<hash>/<name>.py, which their offline loader
    prefers to the `cache` builder), prepared once here with the interpreter's own builder so a run only reads.
    Items of one path with different data_dirs share the script and add their data/<config id>/ folders."""
    import datasets as ds

    config_id = ds.BuilderConfig(name=config_name).create_config_id(kwargs)
    make_hub.prepare_with_loading_script(out, path, KWARGS_DATASET_SCRIPT, config_name, config_id, features, tables, **kwargs)
    remove_locks(out)


# ---------------------------------------------------------------- saved (load_from_disk) datasets

SEQ_LEN = 32  # token columns of a saved, already tokenized dataset: one length, so default_data_collator stacks them
PIXELS = (3, 32, 32)  # pixel_values of a saved, already processed image dataset (the tiny vision models' image_size)


def disk_cell(kind, rng, synthetic, names, i, col):
    if kind == "token_ids":
        if col == "attention_mask":
            return [1] * SEQ_LEN
        if col == "token_type_ids":
            return [0] * SEQ_LEN
        # Ids every tiny tokenizer has (the base hub's vocabularies are larger than 110).
        return [rng.randrange(5, 110) for _ in range(SEQ_LEN)]
    if kind == "pixels":
        c, h, w = PIXELS
        return [[[round(rng.random() * 2 - 1, 3) for _ in range(w)] for _ in range(h)] for _ in range(c)]
    return cell(kind, rng, synthetic, names, i, col)


def disk_feature(ds, kind, names):
    if kind == "token_ids":
        return ds.Sequence(ds.Value("int64"))
    if kind == "pixels":
        return ds.Array3D(shape=PIXELS, dtype="float32")
    return feature(ds, kind, names)


def write_disk_dataset(item, synthetic):
    """A dataset saved with the snapshot's own `save_to_disk` at <out>/disk/<path>, as the earlier step
    the script expects would have saved it: a DatasetDict when the script indexes splits, else a Dataset."""
    import datasets as ds

    labels = item.get("labels") or {}
    columns = item["columns"]
    if not columns:
        raise Refused("no columns known for the saved dataset %r" % item["path"])
    parts = item["path"].split("/")
    if item["path"].startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise Refused("the saved dataset's path %r is not a folder inside the run folder" % item["path"])
    features = ds.Features({c: disk_feature(ds, k, labels.get(c)) for c, k in columns.items()})

    def table(split):
        n = item.get("rows") or (64 if split in (None, "train") else 16)
        rng = random.Random(int(hashlib.sha256(("%s:%s" % (item["path"], split)).encode()).hexdigest()[:12], 16))
        cols = align_to_words({c: [disk_cell(k, rng, synthetic, labels.get(c), i, c) for i in range(n)] for c, k in columns.items()}, columns, rng, labels)
        # A language-modelling dataset's labels are its input ids (what run_clm-style preprocessing saves).
        if columns.get("labels") == "token_ids" and columns.get("input_ids") == "token_ids":
            cols["labels"] = [list(x) for x in cols["input_ids"]]
        return ds.Dataset.from_dict(cols, features=features)

    data = ds.DatasetDict({s: table(s) for s in item["splits"]}) if item.get("splits") else table(None)
    data.save_to_disk(os.path.join(item["out"], "disk", *parts))
    return None


def write_data_file(item, synthetic):
    """A binary data file the script reads (`load_dataset("parquet", data_files=...)`) at <out>/files/<path>,
    written by the snapshot's own datasets (its features kept in the parquet metadata: images, class labels)."""
    import datasets as ds

    labels = item.get("labels") or {}
    columns = item["columns"] or {"text": "string", "label": "label"}
    parts = item["path"].split("/")
    if item["path"].startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise Refused("the data file's path %r is not inside the run folder" % item["path"])
    if item.get("format") != "parquet":
        raise Refused("no binary writer for data file format %r" % item.get("format"))
    features = ds.Features({c: disk_feature(ds, k, labels.get(c)) for c, k in columns.items()})
    n = item.get("rows") or 64
    rng = random.Random(int(hashlib.sha256(item["path"].encode()).hexdigest()[:12], 16))
    cols = align_to_words({c: [disk_cell(k, rng, synthetic, labels.get(c), i, c) for i in range(n)] for c, k in columns.items()}, columns, rng, labels)
    target = os.path.join(item["out"], "files", *parts)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    ds.Dataset.from_dict(cols, features=features).to_parquet(target)
    return None


# ---------------------------------------------------------------- files of hub repos fetched by URL

HUB_REPO_FOLDERS = {"model": "models", "dataset": "datasets", "space": "spaces"}


def write_hub_file(item, synthetic):
    """A file of a hub repo that the script fetches by its URL (`https://huggingface.co/datasets/<repo>/resolve/main/x.png`),
    in the hub cache where huggingface_hub finds it offline (hub/<type>s--<org>--<name>/snapshots/<commit>/<path>, the
    revision's ref beside it): a synthetic file of the kind its extension names. The offline-hub-files shim answers
    the URL from there (resources/shims/_forgeenv_shims.py)."""
    parts = item["path"].split("/")
    if any(p in ("", ".", "..") for p in parts):
        raise Refused("the hub file's path %r is not inside its repo" % item["path"])
    kind = item["file_kind"]
    repo = os.path.join(item["out"], "hub", HUB_REPO_FOLDERS[item["repo_type"]] + "--" + item["repo"].replace("/", "--"))
    rev = item["revision"]
    # A model repo's commit is the one its model item would have (make_hub.commit_of(id)), so the two share refs/main.
    commit = rev if len(rev) == 40 and all(c in "0123456789abcdef" for c in rev) else make_hub.commit_of(
        item["repo"] if item["repo_type"] == "model" else "%s:%s" % (item["repo_type"], item["repo"])
    )
    if commit != rev:
        os.makedirs(os.path.join(repo, "refs"), exist_ok=True)
        with open(os.path.join(repo, "refs", rev), "w", encoding="utf-8") as f:
            f.write(commit)
    target = os.path.join(repo, "snapshots", commit, *parts)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    rng = random.Random(int(hashlib.sha256(item["path"].encode()).hexdigest()[:12], 16))
    if kind == "image":
        ext = parts[-1].rsplit(".", 1)[-1].lower()
        if ext == "png":
            data = png(rng)
        else:
            # Other image formats need Pillow's encoder; a script handing them to a processor needs Pillow anyway.
            try:
                import io

                from PIL import Image
            except ImportError:
                raise Refused("writing a .%s image needs Pillow, which this interpreter does not have" % ext)
            img = Image.new("RGB", (32, 32), (rng.randrange(256), rng.randrange(256), rng.randrange(256)))
            buf = io.BytesIO()
            img.save(buf, format={"jpg": "JPEG"}.get(ext, ext.upper()))
            data = buf.getvalue()
    elif kind == "audio":
        data = wav(rng)
    else:
        data = ("\n".join(sentence(rng, synthetic) for _ in range(4)) + "\n").encode("utf-8")
        if parts[-1].endswith(".json"):
            data = json.dumps({"text": sentence(rng, synthetic)}).encode("utf-8")
    with open(target, "wb") as f:
        f.write(data)
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spec", required=True)
    ap.add_argument("--simlibs", required=True)
    args = ap.parse_args()
    with open(args.spec, encoding="utf-8") as f:
        spec = json.load(f)
    synthetic = make_hub.load_synthetic(args.simlibs)
    text = None
    for i, item in enumerate(spec["items"]):
        os.environ.update(make_hub.offline_env(item["out"]))
        try:
            if item["kind"] == "model":
                if text is None:
                    text = make_hub.corpus_text(synthetic) + [
                        "<|im_start|>user\nhello<|im_end|>\n<|im_start|>assistant\nhi<|im_end|>",
                        "[INST] What is this? [/INST] A test. <start_of_turn>user <end_of_turn>",
                    ]
                note = write_model(item, text)
            elif item["kind"] == "metric":
                note = write_metric(item)
            elif item["kind"] == "disk_dataset":
                note = write_disk_dataset(item, synthetic)
            elif item["kind"] == "data_file":
                note = write_data_file(item, synthetic)
            elif item["kind"] == "hub_file":
                note = write_hub_file(item, synthetic)
            else:
                note = write_dataset(item, synthetic)
            result(i, True, note=note)
        except Refused as e:
            result(i, False, str(e))
        except Exception as e:  # the real library's own error is the reason
            lines = [x.strip() for x in str(e).splitlines() if x.strip()]
            where = traceback.extract_tb(e.__traceback__)[-1]
            result(i, False, "%s: %s (%s:%d)" % (type(e).__name__, lines[0] if lines else "", os.path.basename(where.filename), where.lineno))


if __name__ == "__main__":
    main()
