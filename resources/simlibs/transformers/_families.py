"""The model families the simulated hub knows: checkpoint names, tokenizer conventions, heads, and
the module names real checkpoints use (PEFT's target_modules must find them)."""
import re

# head key -> class-name suffix used by transformers
HEAD_SUFFIX = {
    "base": "Model",
    "seqcls": "ForSequenceClassification",
    "tokcls": "ForTokenClassification",
    "qa": "ForQuestionAnswering",
    "mlm": "ForMaskedLM",
    "causal": "ForCausalLM",
    "seq2seq": "ForConditionalGeneration",
    "imgcls": "ForImageClassification",
}

BERT_TOKENS = {"unk": ("[UNK]", 100), "sep": ("[SEP]", 102), "pad": ("[PAD]", 0), "cls": ("[CLS]", 101), "mask": ("[MASK]", 103)}
ROBERTA_TOKENS = {"bos": ("<s>", 0), "pad": ("<pad>", 1), "eos": ("</s>", 2), "unk": ("<unk>", 3), "cls": ("<s>", 0), "sep": ("</s>", 2), "mask": ("<mask>", 50264)}

FAMILIES = {
    "bert": dict(prefix="Bert", base_attr="bert", vocab=30522, style="wordpiece", lower=True, tokens=BERT_TOKENS, type_ids=True,
                 heads={"base", "seqcls", "tokcls", "qa", "mlm", "causal"}, attn=["query", "key", "value", "dense"],
                 layer_path="encoder.layer.{i}.attention.self", max_len=512, causal_name="BertLMHeadModel"),
    "distilbert": dict(prefix="DistilBert", base_attr="distilbert", vocab=30522, style="wordpiece", lower=True, tokens=BERT_TOKENS, type_ids=False,
                       heads={"base", "seqcls", "tokcls", "qa", "mlm"}, attn=["q_lin", "k_lin", "v_lin", "out_lin"],
                       layer_path="transformer.layer.{i}.attention", max_len=512, head_names=["pre_classifier", "classifier"]),
    "roberta": dict(prefix="Roberta", base_attr="roberta", vocab=50265, style="bpe", lower=False, tokens=ROBERTA_TOKENS, type_ids=False,
                    heads={"base", "seqcls", "tokcls", "qa", "mlm", "causal"}, attn=["query", "key", "value", "dense"],
                    layer_path="encoder.layer.{i}.attention.self", max_len=512, head_names=["classifier.dense", "classifier.out_proj"]),
    "albert": dict(prefix="Albert", base_attr="albert", vocab=30000, style="sentencepiece", lower=True,
                   tokens={"cls": ("[CLS]", 2), "sep": ("[SEP]", 3), "pad": ("<pad>", 0), "unk": ("<unk>", 1), "mask": ("[MASK]", 4)}, type_ids=True,
                   heads={"base", "seqcls", "tokcls", "qa", "mlm"}, attn=["query", "key", "value", "dense"],
                   layer_path="encoder.albert_layer_groups.{i}.albert_layers.0.attention", max_len=512, head_names=["qa_outputs"]),
    "electra": dict(prefix="Electra", base_attr="electra", vocab=30522, style="wordpiece", lower=True, tokens=BERT_TOKENS, type_ids=True,
                    heads={"base", "seqcls", "tokcls", "qa", "mlm"}, attn=["query", "key", "value", "dense"],
                    layer_path="encoder.layer.{i}.attention.self", max_len=512, head_names=["classifier.dense", "classifier.out_proj"]),
    "deberta-v2": dict(prefix="DebertaV2", base_attr="deberta", vocab=128100, style="sentencepiece", lower=False,
                       tokens={"cls": ("[CLS]", 1), "sep": ("[SEP]", 2), "pad": ("[PAD]", 0), "unk": ("[UNK]", 3), "mask": ("[MASK]", 128000)}, type_ids=True,
                       heads={"base", "seqcls", "tokcls", "qa", "mlm"}, attn=["query_proj", "key_proj", "value_proj", "dense"],
                       layer_path="encoder.layer.{i}.attention.self", max_len=512),
    "gpt2": dict(prefix="GPT2", base_attr="transformer", vocab=50257, style="bpe", lower=False,
                 tokens={"bos": ("<|endoftext|>", 50256), "eos": ("<|endoftext|>", 50256), "unk": ("<|endoftext|>", 50256)}, type_ids=False,
                 heads={"base", "causal", "seqcls", "tokcls", "qa"}, attn=["c_attn", "c_proj", "c_fc"], layer_path="h.{i}.attn",
                 max_len=1024, causal_name="GPT2LMHeadModel", head_names=["score"]),
    "opt": dict(prefix="OPT", base_attr="model", vocab=50272, style="bpe", lower=False,
                tokens={"bos": ("</s>", 2), "eos": ("</s>", 2), "unk": ("<unk>", 3), "pad": ("<pad>", 1)}, type_ids=False,
                heads={"base", "causal", "seqcls", "qa"}, attn=["q_proj", "k_proj", "v_proj", "out_proj"],
                layer_path="decoder.layers.{i}.self_attn", max_len=2048, add_bos=True),
    "llama": dict(prefix="Llama", base_attr="model", vocab=49152, style="bpe", lower=False,
                  tokens={"bos": ("<|endoftext|>", 0), "eos": ("<|endoftext|>", 0), "unk": ("<|endoftext|>", 0)}, type_ids=False,
                  heads={"base", "causal", "seqcls", "tokcls", "qa"}, attn=["q_proj", "k_proj", "v_proj", "o_proj"],
                  layer_path="layers.{i}.self_attn", max_len=2048),
    "falcon": dict(prefix="Falcon", base_attr="transformer", vocab=65024, style="bpe", lower=False,
                   tokens={"eos": ("<|endoftext|>", 11), "bos": ("<|endoftext|>", 11), "unk": ("<|endoftext|>", 11)}, type_ids=False,
                   heads={"base", "causal", "seqcls", "tokcls", "qa"}, attn=["query_key_value", "dense", "dense_h_to_4h", "dense_4h_to_h"],
                   layer_path="h.{i}.self_attention", max_len=2048),
    "qwen2": dict(prefix="Qwen2", base_attr="model", vocab=151936, style="bpe", lower=False,
                  tokens={"eos": ("<|endoftext|>", 151643), "pad": ("<|endoftext|>", 151643)}, type_ids=False,
                  heads={"base", "causal", "seqcls", "tokcls", "qa"}, attn=["q_proj", "k_proj", "v_proj", "o_proj"],
                  layer_path="layers.{i}.self_attn", max_len=32768),
    "t5": dict(prefix="T5", base_attr="", vocab=32100, style="sentencepiece", lower=False,
               tokens={"eos": ("</s>", 1), "unk": ("<unk>", 2), "pad": ("<pad>", 0)}, type_ids=False,
               heads={"base", "seq2seq"}, attn=["q", "k", "v", "o"], layer_path="encoder.block.{i}.layer.0.SelfAttention",
               max_len=512, decoder_start=0),
    "bart": dict(prefix="Bart", base_attr="model", vocab=50265, style="bpe", lower=False, tokens=ROBERTA_TOKENS, type_ids=False,
                 heads={"base", "seq2seq", "seqcls", "qa"}, attn=["q_proj", "k_proj", "v_proj", "out_proj"],
                 layer_path="encoder.layers.{i}.self_attn", max_len=1024, decoder_start=2),
    "vit": dict(prefix="ViT", base_attr="vit", vocab=0, style="image", lower=False, tokens={}, type_ids=False,
                heads={"base", "imgcls"}, attn=["query", "key", "value", "dense"], layer_path="encoder.layer.{i}.attention.attention",
                max_len=0, image_size=224),
    # CLIP's vision tower (image classification fine-tunes use CLIPForImageClassification).
    "clip": dict(prefix="CLIP", base_attr="vision_model", vocab=0, style="image", lower=False, tokens={}, type_ids=False,
                 heads={"base", "imgcls"}, attn=["q_proj", "k_proj", "v_proj", "out_proj", "fc1", "fc2"],
                 layer_path="encoder.layers.{i}.self_attn", max_len=0, image_size=224),
}

# checkpoint -> (family, extra config)
CHECKPOINTS = {
    "bert-base-uncased": ("bert", {}),
    "google-bert/bert-base-uncased": ("bert", {}),
    "bert-base-cased": ("bert", {"vocab_size": 28996, "lower": False}),
    "google-bert/bert-base-cased": ("bert", {"vocab_size": 28996, "lower": False}),
    "bert-large-uncased": ("bert", {}),
    "prajjwal1/bert-tiny": ("bert", {}),
    "dslim/bert-base-NER": ("bert", {"vocab_size": 28996, "lower": False, "labels": ["O", "B-MISC", "I-MISC", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC"], "head": "tokcls"}),
    "distilbert-base-uncased": ("distilbert", {}),
    "distilbert/distilbert-base-uncased": ("distilbert", {}),
    "distilbert-base-cased": ("distilbert", {"vocab_size": 28996, "lower": False}),
    "distilbert-base-uncased-finetuned-sst-2-english": ("distilbert", {"labels": ["NEGATIVE", "POSITIVE"], "head": "seqcls"}),
    "distilbert/distilbert-base-uncased-finetuned-sst-2-english": ("distilbert", {"labels": ["NEGATIVE", "POSITIVE"], "head": "seqcls"}),
    "roberta-base": ("roberta", {}),
    "FacebookAI/roberta-base": ("roberta", {}),
    "distilroberta-base": ("roberta", {}),
    "distilbert/distilroberta-base": ("roberta", {}),
    "cardiffnlp/twitter-roberta-base-sentiment-latest": ("roberta", {"labels": ["negative", "neutral", "positive"], "head": "seqcls"}),
    "albert-base-v2": ("albert", {}),
    "albert/albert-base-v2": ("albert", {}),
    "google/electra-small-discriminator": ("electra", {}),
    "google/electra-base-discriminator": ("electra", {}),
    "microsoft/deberta-v3-small": ("deberta-v2", {}),
    "microsoft/deberta-v3-base": ("deberta-v2", {}),
    "gpt2": ("gpt2", {}),
    "openai-community/gpt2": ("gpt2", {}),
    "distilgpt2": ("gpt2", {}),
    "distilbert/distilgpt2": ("gpt2", {}),
    "sshleifer/tiny-gpt2": ("gpt2", {}),
    "gpt2-medium": ("gpt2", {}),
    "roberta-large": ("roberta", {}),
    "bert-base-chinese": ("bert", {"vocab_size": 21128, "lower": False}),
    "facebook/opt-125m": ("opt", {}),
    "facebook/opt-350m": ("opt", {}),
    "HuggingFaceTB/SmolLM-135M": ("llama", {}),
    "HuggingFaceTB/SmolLM2-135M": ("llama", {}),
    "Qwen/Qwen2.5-0.5B": ("qwen2", {}),
    "Qwen/Qwen2-0.5B": ("qwen2", {}),
    "t5-small": ("t5", {}),
    "google-t5/t5-small": ("t5", {}),
    "t5-base": ("t5", {}),
    "google-t5/t5-base": ("t5", {}),
    "google/flan-t5-small": ("t5", {}),
    "google/flan-t5-base": ("t5", {}),
    "facebook/bart-base": ("bart", {}),
    "sshleifer/distilbart-cnn-12-6": ("bart", {}),
    "google/vit-base-patch16-224": ("vit", {"labels": ["label_%d" % i for i in range(1000)], "head": "imgcls"}),
    "google/vit-base-patch16-224-in21k": ("vit", {}),
}

MODEL_TYPES = {k: k for k in FAMILIES}


# Substrings of a Hub id -> the family whose tiny model stands in for it (first match wins).
NAME_HINTS = [
    ("distilbert", "distilbert"), ("deberta", "deberta-v2"), ("roberta", "roberta"), ("luke", "roberta"), ("electra", "electra"),
    ("albert", "albert"), ("bert", "bert"), ("qwen", "qwen2"), ("flan-t5", "t5"), ("mt5", "t5"), ("t5", "t5"), ("bart", "bart"),
    ("pegasus", "bart"), ("falcon", "falcon"), ("opt-", "opt"), ("gpt2", "gpt2"), ("gpt-neo", "gpt2"), ("distilgpt", "gpt2"), ("clip", "clip"), ("vit", "vit"),
    ("deit", "vit"), ("beit", "vit"), ("swin", "vit"), ("convnext", "vit"),
]


def resolve(name):
    """(family, extra) for a hub id, or None. Any `owner/name` id not in the table maps to the family its
    name suggests (default: a llama-style causal LM), so real-world scripts find a tiny model."""
    hit = CHECKPOINTS.get(str(name))
    if hit is not None:
        return hit
    name = str(name)
    if "/" not in name or name.startswith((".", "/")) or not is_valid_hub_id(name):
        return None
    low = name.lower()
    for key, fam in NAME_HINTS:
        if key in low:
            return (fam, {"model_vocab_pad": 128} if fam in ("llama", "qwen2", "gpt2", "opt", "falcon") else {})
    return ("llama", {"model_vocab_pad": 128})


def model_class_name(family, head):
    fam = FAMILIES[family]
    if head == "causal" and fam.get("causal_name"):
        return fam["causal_name"]
    if head == "seq2seq" and family == "t5":
        return "T5ForConditionalGeneration"
    return fam["prefix"] + HEAD_SUFFIX[head]


def is_valid_hub_id(name):
    return bool(re.fullmatch(r"[\w.-]+(/[\w.-]+)?", str(name)))
