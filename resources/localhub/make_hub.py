"""Writes a local Hugging Face cache (an HF_HOME) for ForgeEnv's `real` execution mode.

Runs INSIDE the interpreter that will run the episodes (a snapshot venv or the user's own), so every
file is written by that era's own libraries and read back by them:

  <out>/hub/models--<org>--<name>/{refs/main, snapshots/<commit>/...}   tiny random models + tokenizers
  <out>/datasets/<name>/<config>/0.0.0/<hash>/                          prepared datasets (the `datasets`
                                                                         cache that offline load_dataset finds)
  <out>/modules/evaluate_modules/metrics/evaluate-metric--<m>/<hash>/    metric scripts (offline evaluate.load)

Models are random (seeded), 2 layers of width 32, built from a config of the real architecture;
tokenizers are trained in memory on the synthetic text with the family's real special tokens;
datasets have the real schema (columns, features, label names, splits) with the synthetic rows of
the simulated mode (resources/simlibs/_forgeenv_sim/synthetic.py). Same input, same files.

Usage: python make_hub.py --out DIR --simlibs RESOURCES/simlibs [--check]
Prints one `[hub] ...` progress line per item on stdout; exits non-zero on the first failure.
"""
import argparse
import hashlib
import importlib.util
import json
import os
import shutil
import struct
import sys
import tempfile
import zlib

FORMAT = 1

# name -> (family, model_type, head)
MODELS = {
    "distilbert-base-uncased": ("bert-uncased", "distilbert", "masked_lm"),
    "bert-base-cased": ("bert-cased", "bert", "masked_lm"),
    "google/electra-small-discriminator": ("bert-uncased", "electra", "pretraining"),
    "roberta-base": ("roberta", "roberta", "masked_lm"),
    "albert-base-v2": ("albert", "albert", "masked_lm"),
    "gpt2": ("gpt2", "gpt2", "causal_lm"),
    "t5-small": ("t5", "t5", "seq2seq_lm"),
    "google/vit-base-patch16-224-in21k": ("vit", "vit", "base"),
}

# (load_dataset path, config or None) -> synthetic builder name
DATASETS = [
    ("glue", "sst2"),
    ("conll2003", None),
    ("wikitext", "wikitext-2-raw-v1"),
    ("cnn_dailymail", "3.0.0"),
    ("cifar10", None),
    ("imdb", None),
    ("squad", None),
    ("rotten_tomatoes", None),
    ("mnist", None),
    ("timdettmers/openassistant-guanaco", None),
]

METRICS = ["accuracy", "seqeval", "rouge"]

TOKENIZER_CLASS = {
    "distilbert": "DistilBertTokenizer",
    "bert": "BertTokenizer",
    "electra": "ElectraTokenizer",
    "roberta": "RobertaTokenizer",
    "albert": "AlbertTokenizer",
    "gpt2": "GPT2Tokenizer",
    "t5": "T5Tokenizer",
}

VOCAB_SIZE = 600
MAX_POSITIONS = 128


def log(msg):
    print("[hub] " + msg, flush=True)


def commit_of(name):
    return hashlib.sha1(("forgeenv-localhub:%d:%s" % (FORMAT, name)).encode()).hexdigest()


def load_synthetic(simlibs):
    # Only our data helpers are imported from simlibs, under their own package name, never the
    # stand-in libraries: sys.path is left untouched.
    pkg_dir = os.path.join(simlibs, "_forgeenv_sim")
    spec = importlib.util.spec_from_file_location(
        "_forgeenv_sim", os.path.join(pkg_dir, "__init__.py"), submodule_search_locations=[pkg_dir]
    )
    pkg = importlib.util.module_from_spec(spec)
    sys.modules["_forgeenv_sim"] = pkg
    spec.loader.exec_module(pkg)
    import _forgeenv_sim.synthetic as synthetic  # noqa: E402

    return synthetic


def synthetic_splits(synthetic, path, config):
    canonical = synthetic.ALIASES.get(path, path)
    configs, build = synthetic.BUILDERS[canonical]
    splits = build(config)
    if splits is None:
        raise ValueError("no synthetic data for %s/%s" % (path, config))
    return splits


def corpus_text(synthetic):
    """Every string of the synthetic text datasets, plus the word lists: the tokenizers' training text."""
    lines = []
    for path, config in DATASETS:
        for rows, spec in synthetic_splits(synthetic, path, config).values():
            for col, kind in spec.items():
                for v in rows[col]:
                    if isinstance(v, str):
                        lines.append(v)
                    elif isinstance(v, list) and v and isinstance(v[0], str):
                        lines.append(" ".join(v))
                    elif isinstance(v, dict):
                        lines.extend(x for x in v.get("text", []) if isinstance(x, str))
    words = synthetic.POS + synthetic.NEG + synthetic.NEUTRAL + synthetic.TOPIC + synthetic.VERBS
    for group in synthetic.NAMES.values():
        words += group
    lines.append(" ".join(words))
    lines.append("summarize: The city council, (CNN) -- ### Human: ### Assistant: ? ! . , ; : ' \" = - 0 1 2 3 4 5 6 7 8 9")
    return lines


ALPHABET = [chr(c) for c in range(32, 127)]


# ---------------------------------------------------------------- tokenizers


def metaspace(module):
    """A Metaspace pre-tokenizer/decoder that prepends the marker, in the era's own spelling:
    tokenizers >= 0.14 takes prepend_scheme="always" (and later drops add_prefix_space); older
    releases (0.13, the 2023-06 snapshot) take only add_prefix_space=True, which means the same."""
    try:
        return module.Metaspace(replacement="\u2581", prepend_scheme="always")
    except TypeError:
        return module.Metaspace(replacement="\u2581", add_prefix_space=True)


def train_tokenizer(family, text):
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

    if family in ("bert-cased", "bert-uncased"):
        special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tok.normalizer = normalizers.BertNormalizer(lowercase=family == "bert-uncased", strip_accents=None)
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tok.decoder = decoders.WordPiece(prefix="##")
        trainer = trainers.WordPieceTrainer(vocab_size=VOCAB_SIZE, special_tokens=special, initial_alphabet=ALPHABET, show_progress=False)
        tok.train_from_iterator(text, trainer)
        cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS]:0 $A:0 [SEP]:0", pair="[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1", special_tokens=[("[CLS]", cls), ("[SEP]", sep)]
        )
        return tok, special
    if family in ("roberta", "gpt2"):
        special = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"] if family == "roberta" else ["<|endoftext|>"]
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(
            vocab_size=VOCAB_SIZE, special_tokens=special, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
        )
        tok.train_from_iterator(text, trainer)
        if family == "roberta":
            tok.post_processor = processors.RobertaProcessing(("</s>", tok.token_to_id("</s>")), ("<s>", tok.token_to_id("<s>")), True, False)
        else:
            tok.post_processor = processors.ByteLevel(trim_offsets=False)
        return tok, special
    if family in ("t5", "albert"):
        if family == "t5":
            special = ["<pad>", "</s>", "<unk>"]
            unk = "<unk>"
        else:
            special = ["<pad>", "<unk>", "[CLS]", "[SEP]", "[MASK]"]
            unk = "<unk>"
        tok = Tokenizer(models.Unigram())
        if family == "albert":
            tok.normalizer = normalizers.Sequence([normalizers.Replace("``", '"'), normalizers.Replace("''", '"'), normalizers.Lowercase()])
        tok.pre_tokenizer = metaspace(pre_tokenizers)
        tok.decoder = metaspace(decoders)
        trainer = trainers.UnigramTrainer(
            vocab_size=VOCAB_SIZE, special_tokens=special, unk_token=unk, initial_alphabet=ALPHABET, show_progress=False
        )
        tok.train_from_iterator(text, trainer)
        if family == "t5":
            eos = tok.token_to_id("</s>")
            tok.post_processor = processors.TemplateProcessing(
                single="$A:0 </s>:0", pair="$A:0 </s>:0 $B:0 </s>:0", special_tokens=[("</s>", eos)]
            )
        else:
            cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
            tok.post_processor = processors.TemplateProcessing(
                single="[CLS]:0 $A:0 [SEP]:0", pair="[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1", special_tokens=[("[CLS]", cls), ("[SEP]", sep)]
            )
        return tok, special
    raise ValueError("unknown tokenizer family " + family)


def tokenizer_files(model_type, family, tok, dest):
    """tokenizer.json + tokenizer_config.json + special_tokens_map.json (+ vocab.txt for WordPiece), as hub repos have."""
    from tokenizers import AddedToken

    extra = []
    if model_type == "t5":
        extra = ["<extra_id_%d>" % i for i in range(100)]
        tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in extra])
    tok.save(os.path.join(dest, "tokenizer.json"))
    if family.startswith("bert"):
        special = {"unk_token": "[UNK]", "sep_token": "[SEP]", "pad_token": "[PAD]", "cls_token": "[CLS]", "mask_token": "[MASK]"}
        cfg = {"do_lower_case": family == "bert-uncased", "strip_accents": None, "tokenize_chinese_chars": True}
        vocab = sorted(tok.get_vocab().items(), key=lambda kv: kv[1])
        with open(os.path.join(dest, "vocab.txt"), "w", encoding="utf-8") as f:
            f.write("".join(t + "\n" for t, _ in vocab))
    elif family == "roberta":
        special = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "sep_token": "</s>", "pad_token": "<pad>", "cls_token": "<s>", "mask_token": "<mask>"}
        cfg = {"add_prefix_space": False, "errors": "replace", "trim_offsets": True}
    elif family == "gpt2":
        special = {"bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>", "unk_token": "<|endoftext|>"}
        cfg = {"add_prefix_space": False, "add_bos_token": False}
    elif family == "t5":
        special = {"eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>", "additional_special_tokens": extra}
        cfg = {"extra_ids": len(extra)}
    else:  # albert
        special = {"bos_token": "[CLS]", "eos_token": "[SEP]", "unk_token": "<unk>", "sep_token": "[SEP]", "pad_token": "<pad>", "cls_token": "[CLS]", "mask_token": "[MASK]"}
        cfg = {"do_lower_case": True, "keep_accents": False, "remove_space": True}
    config = dict(cfg, **special)
    config["tokenizer_class"] = TOKENIZER_CLASS[model_type]
    config["model_max_length"] = 512
    config["clean_up_tokenization_spaces"] = family.startswith("bert")
    with open(os.path.join(dest, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f, indent=2, sort_keys=True)
    with open(os.path.join(dest, "special_tokens_map.json"), "w", encoding="utf-8") as f:
        json.dump(special, f, indent=2, sort_keys=True)
    return tok.get_vocab_size(with_added_tokens=True)


# ---------------------------------------------------------------- models


def model_config_kwargs(model_type, vocab, tok):
    small = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=37)
    if model_type == "distilbert":
        return dict(vocab_size=vocab, dim=32, n_layers=2, n_heads=2, hidden_dim=37, max_position_embeddings=MAX_POSITIONS, pad_token_id=tok.token_to_id("[PAD]"))
    if model_type in ("bert", "electra"):
        kw = dict(small, vocab_size=vocab, max_position_embeddings=MAX_POSITIONS, pad_token_id=tok.token_to_id("[PAD]"))
        if model_type == "electra":
            kw["embedding_size"] = 32
        return kw
    if model_type == "roberta":
        return dict(
            small, vocab_size=vocab, max_position_embeddings=MAX_POSITIONS + 2, type_vocab_size=1,
            pad_token_id=tok.token_to_id("<pad>"), bos_token_id=tok.token_to_id("<s>"), eos_token_id=tok.token_to_id("</s>"),
        )
    if model_type == "albert":
        return dict(
            small, embedding_size=16, vocab_size=vocab, max_position_embeddings=MAX_POSITIONS,
            pad_token_id=tok.token_to_id("<pad>"), bos_token_id=tok.token_to_id("[CLS]"), eos_token_id=tok.token_to_id("[SEP]"),
        )
    if model_type == "gpt2":
        eos = tok.token_to_id("<|endoftext|>")
        return dict(vocab_size=vocab, n_embd=32, n_layer=2, n_head=2, n_inner=37, n_positions=MAX_POSITIONS, bos_token_id=eos, eos_token_id=eos)
    if model_type == "t5":
        return dict(
            vocab_size=vocab, d_model=32, d_ff=37, d_kv=16, num_layers=2, num_decoder_layers=2, num_heads=2,
            relative_attention_num_buckets=8, pad_token_id=tok.token_to_id("<pad>"), eos_token_id=tok.token_to_id("</s>"),
            decoder_start_token_id=tok.token_to_id("<pad>"),
        )
    if model_type == "vit":
        return dict(small, image_size=32, patch_size=8, num_channels=3)
    raise ValueError(model_type)


def save_model(model_type, head, kwargs, dest):
    import torch
    import transformers as tr

    config = tr.AutoConfig.for_model(model_type, **kwargs)
    auto = {
        "masked_lm": tr.AutoModelForMaskedLM,
        "causal_lm": tr.AutoModelForCausalLM,
        "seq2seq_lm": tr.AutoModelForSeq2SeqLM,
        "pretraining": tr.AutoModelForPreTraining,
        "base": tr.AutoModel,
    }[head]
    torch.manual_seed(0)
    model = auto.from_config(config)
    model.save_pretrained(dest)


def image_processor_files(dest):
    cfg = {
        "do_normalize": True,
        "do_rescale": True,
        "do_resize": True,
        "image_mean": [0.5, 0.5, 0.5],
        "image_std": [0.5, 0.5, 0.5],
        "image_processor_type": "ViTImageProcessor",
        "resample": 2,
        "rescale_factor": 0.00392156862745098,
        "size": {"height": 32, "width": 32},
    }
    with open(os.path.join(dest, "preprocessor_config.json"), "w", encoding="utf-8") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)


def write_model_repo(out, name, synthetic, text):
    family, model_type, head = MODELS[name]
    repo = os.path.join(out, "hub", "models--" + name.replace("/", "--"))
    commit = commit_of(name)
    snap = os.path.join(repo, "snapshots", commit)
    os.makedirs(snap, exist_ok=True)
    os.makedirs(os.path.join(repo, "refs"), exist_ok=True)
    if family == "vit":
        image_processor_files(snap)
        kwargs = model_config_kwargs(model_type, 0, None)
    else:
        tok, _ = train_tokenizer(family, text)
        vocab = tokenizer_files(model_type, family, tok, snap)
        kwargs = model_config_kwargs(model_type, vocab, tok)
    save_model(model_type, head, kwargs, snap)
    with open(os.path.join(repo, "refs", "main"), "w") as f:
        f.write(commit)


# ---------------------------------------------------------------- datasets


def png_bytes(img):
    """PNG encoding of a simulated image (no Pillow needed to write the data)."""
    w, h = img.size
    rgb = img.mode == "RGB"
    raw = bytearray()
    for y in range(h):
        raw.append(0)
        for x in range(w):
            v = img.getpixel((x, y))
            if rgb:
                raw.extend(int(c) & 255 for c in v)
            else:
                raw.append(int(v) & 255)

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", w, h, 8, 2 if rgb else 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(bytes(raw), 9)) + chunk(b"IEND", b"")


def to_feature(spec):
    import datasets as ds

    kind = spec[0]
    if kind == "string":
        return ds.Value("string")
    if kind in ("int32", "int64", "float32", "float64", "bool"):
        return ds.Value(kind)
    if kind == "class":
        return ds.ClassLabel(names=list(spec[1]))
    if kind == "seq":
        return ds.Sequence(to_feature(spec[1]))
    if kind == "seqdict":
        return ds.Sequence({k: to_feature(v) for k, v in spec[1].items()})
    if kind == "image":
        return ds.Image()
    raise ValueError("unknown feature spec %r" % (spec,))


def write_dataset(out, path, config, synthetic):
    features, tables = base_dataset_tables(path, config, synthetic)
    prepare_dataset(out, path, config or "default", features, tables)


def base_dataset_tables(path, config, synthetic, rows=None):
    """The features and split tables of a base-hub dataset; `rows`: each split repeated up to that many rows."""
    import datasets as ds
    import pyarrow as pa

    splits = synthetic_splits(synthetic, path, config)
    first_spec = next(iter(splits.values()))[1]
    features = ds.Features({col: to_feature(spec) for col, spec in first_spec.items()})
    tables = {}
    for split, (data, spec) in splits.items():
        cols = {}
        for col, kind in spec.items():
            values = data[col]
            if rows and values:
                values = (values * (rows // len(values) + 1))[:rows]
            if kind[0] == "image":
                values = [{"bytes": png_bytes(v), "path": None} for v in values]
            cols[col] = values
        tables[split] = pa.Table.from_pydict(cols, schema=features.arrow_schema)
    return features, tables


def prepare_dataset(out, path, config_name, features, tables):
    """Writes the prepared dataset `path`/`config_name` under out/datasets where an offline
    load_dataset(path, config_name) of the interpreter's own datasets release finds it."""
    import inspect

    import datasets as ds

    if "dataset_name" not in inspect.signature(ds.DatasetBuilder.__init__).parameters:
        return prepare_dataset_with_script(out, path, config_name, features, tables)

    class Synthetic(ds.ArrowBasedBuilder):
        BUILDER_CONFIGS = [ds.BuilderConfig(name=config_name, version=ds.Version("0.0.0"))]

        def _info(self):
            return ds.DatasetInfo(features=features)

        def _split_generators(self, dl_manager):
            return [ds.SplitGenerator(name=s, gen_kwargs={"split": s}) for s in tables]

        def _generate_tables(self, split):
            yield 0, tables[split]

    name = path.split("/")[-1]
    builder = Synthetic(
        cache_dir=os.path.join(out, "datasets"),
        dataset_name=name,
        config_name=config_name,
        hash=commit_of("dataset:%s:%s" % (path, config_name))[:16],
        repo_id=path if "/" in path else None,
    )
    builder.download_and_prepare()


DATASET_SCRIPT = '''"""Synthetic {path}, written by ForgeEnv's local hub (resources/localhub/make_hub.py) for offline runs.

datasets releases before 2.14 load a Hub dataset offline only through its cached loading script:
this one serves the configs whose Arrow files sit beside it (data/<config>/<split>.arrow).
"""
import os

import datasets
import pyarrow as pa

_HERE = os.path.dirname(os.path.abspath(__file__))
_CONFIGS = sorted(os.listdir(os.path.join(_HERE, "data"))) if os.path.isdir(os.path.join(_HERE, "data")) else ["default"]


def _read(config, split):
    with pa.memory_map(os.path.join(_HERE, "data", config, split + ".arrow")) as source:
        return pa.ipc.open_file(source).read_all()


class Synthetic(datasets.ArrowBasedBuilder):
    BUILDER_CONFIGS = [datasets.BuilderConfig(name=c, version=datasets.Version("0.0.0")) for c in _CONFIGS]

    def _splits(self):
        return sorted(f[: -len(".arrow")] for f in os.listdir(os.path.join(_HERE, "data", self.config.name)) if f.endswith(".arrow"))

    def _info(self):
        split = self._splits()[0]
        return datasets.DatasetInfo(features=datasets.Features.from_arrow_schema(_read(self.config.name, split).schema))

    def _split_generators(self, dl_manager):
        return [datasets.SplitGenerator(name=s, gen_kwargs={{"split": s}}) for s in self._splits()]

    def _generate_tables(self, split):
        yield 0, _read(self.config.name, split)
'''


def prepare_dataset_with_script(out, path, config_name, features, tables):
    """datasets < 2.14 (no `dataset_name`): offline, load_dataset(path) imports the newest cached
    loading script at modules/datasets_modules/datasets/<path with -- for />/<64-hex hash>/<name>.py
    and reads the prepared data at datasets/<namespace___><name>/<config>/<version>/<hash>. One
    script per path (its configs side by side), so several configs of a path, written by the base
    hub and by hub items, share it."""
    prepare_with_loading_script(out, path, DATASET_SCRIPT, config_name, config_name, features, tables)


def prepare_with_loading_script(out, path, template, config_name, folder_name, features, tables, **config_kwargs):
    """Writes `path`'s cached loading script (`template`) and data/<folder_name>/<split>.arrow beside it, then
    prepares `config_name` (with `config_kwargs`, e.g. data_dir) with this interpreter's own builder. The one
    place that knows the layout releases read offline (prepare_dataset_with_script; make_hub_items.py's
    configs with keywords)."""
    import importlib.util

    import pyarrow as pa

    name = path.split("/")[-1]
    digest = hashlib.sha256(("dataset-script:%s" % path).encode()).hexdigest()
    root = os.path.join(out, "modules", "datasets_modules")
    module_dir = os.path.join(root, "datasets", path.replace("/", "--"), digest)
    data_dir = os.path.join(module_dir, "data", folder_name)
    os.makedirs(data_dir, exist_ok=True)
    for d in (os.path.join(out, "modules"), root, os.path.join(root, "datasets"), os.path.dirname(module_dir), module_dir):
        open(os.path.join(d, "__init__.py"), "a").close()
    if folder_name != config_name:
        # The folder is a config id (name plus keywords): the script reads the config's name here.
        with open(os.path.join(data_dir, "CONFIG_NAME"), "w", encoding="utf-8") as f:
            f.write(config_name)
    for split, table in tables.items():
        table = table.cast(features.arrow_schema)
        with pa.OSFile(os.path.join(data_dir, split + ".arrow"), "wb") as sink:
            with pa.ipc.new_file(sink, table.schema) as writer:
                writer.write_table(table)
    script = os.path.join(module_dir, name + ".py")
    with open(script, "w", encoding="utf-8") as f:
        f.write(template.format(path=path))
    spec = importlib.util.spec_from_file_location("datasets_modules.datasets.%s.%s.%s" % (path.replace("/", "--"), digest, name), script)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # the builder finds its files through its module
    spec.loader.exec_module(module)
    builder = module.Synthetic(cache_dir=os.path.join(out, "datasets"), config_name=config_name, hash=digest, repo_id=path, **config_kwargs)
    builder.download_and_prepare()


# ---------------------------------------------------------------- metrics

METRIC_HEADER = '''"""{doc}

Written by ForgeEnv's local hub (resources/localhub/make_hub.py) for offline runs: the metric
library (`evaluate`) is the real one; this module script stands in for the Hub's
evaluate-metric/{name} script and computes the same keys with numpy and the standard library.
"""
import datasets
import evaluate
import numpy as np
'''

METRIC_BODIES = {
    "accuracy": '''

class Accuracy(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description="Accuracy: the proportion of correct predictions.",
            citation="",
            inputs_description="predictions, references: lists of ints",
            features=datasets.Features({"predictions": datasets.Value("int32"), "references": datasets.Value("int32")}),
        )

    def _compute(self, predictions, references, normalize=True, sample_weight=None):
        p = np.asarray(predictions)
        r = np.asarray(references)
        w = np.ones(len(p)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
        correct = float(((p == r) * w).sum())
        return {"accuracy": correct / float(w.sum()) if normalize else correct}
''',
    "seqeval": '''

def _chunks(tags):
    """(type, start, end) spans of an IOB2 sequence (conlleval rules)."""
    out, start, kind = [], None, None
    for i, tag in enumerate(list(tags) + ["O"]):
        prefix, _, t = tag.partition("-") if tag != "O" else ("O", "", "")
        if kind is not None and (prefix in ("O", "B") or t != kind):
            out.append((kind, start, i))
            kind = None
        if prefix == "B" or (prefix == "I" and kind is None):
            kind, start = t, i
    return out


class Seqeval(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description="Entity-level precision, recall and F1 of IOB-tagged sequences (seqeval's default mode).",
            citation="",
            inputs_description="predictions, references: lists of lists of tags",
            features=datasets.Features(
                {
                    "predictions": datasets.Sequence(datasets.Value("string", id="label"), id="sequence"),
                    "references": datasets.Sequence(datasets.Value("string", id="label"), id="sequence"),
                }
            ),
        )

    def _compute(self, predictions, references, suffix=False, scheme=None, mode=None, sample_weight=None, zero_division="warn"):
        true, pred = set(), set()
        correct_tokens = total_tokens = 0
        for k, (p, r) in enumerate(zip(predictions, references)):
            true.update((k,) + c for c in _chunks(r))
            pred.update((k,) + c for c in _chunks(p))
            correct_tokens += sum(1 for a, b in zip(p, r) if a == b)
            total_tokens += len(r)

        def prf(t, p):
            hit = len(t & p)
            precision = hit / len(p) if p else 0.0
            recall = hit / len(t) if t else 0.0
            f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
            return precision, recall, f1

        scores = {}
        for kind in sorted({c[1] for c in true | pred}):
            t = {c for c in true if c[1] == kind}
            p = {c for c in pred if c[1] == kind}
            precision, recall, f1 = prf(t, p)
            scores[kind] = {"precision": precision, "recall": recall, "f1": f1, "number": len(t)}
        precision, recall, f1 = prf(true, pred)
        scores["overall_precision"] = precision
        scores["overall_recall"] = recall
        scores["overall_f1"] = f1
        scores["overall_accuracy"] = correct_tokens / total_tokens if total_tokens else 0.0
        return scores
''',
    "rouge": '''
import re


def _tokens(text):
    return re.findall(r"[a-z0-9]+", text.lower())


def _ngrams(tokens, n):
    grams = {}
    for i in range(len(tokens) - n + 1):
        g = tuple(tokens[i : i + n])
        grams[g] = grams.get(g, 0) + 1
    return grams


def _f(hit, n_pred, n_ref):
    if not hit:
        return 0.0
    precision, recall = hit / n_pred, hit / n_ref
    return 2 * precision * recall / (precision + recall)


def _rouge_n(pred, ref, n):
    p, r = _ngrams(pred, n), _ngrams(ref, n)
    hit = sum(min(c, r.get(g, 0)) for g, c in p.items())
    return _f(hit, sum(p.values()), sum(r.values()))


def _lcs(a, b):
    row = [0] * (len(b) + 1)
    for x in a:
        prev = 0
        for j, y in enumerate(b):
            cur = row[j + 1]
            row[j + 1] = prev + 1 if x == y else max(row[j + 1], row[j])
            prev = cur
    return row[-1]


def _rouge_l(pred, ref):
    return _f(_lcs(pred, ref), len(pred), len(ref))


class Rouge(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description="ROUGE-1/2/L/Lsum F-measures (lower-cased alphanumeric tokens, no stemming).",
            citation="",
            inputs_description="predictions, references: lists of strings",
            features=[
                datasets.Features({"predictions": datasets.Value("string", id="sequence"), "references": datasets.Sequence(datasets.Value("string", id="sequence"))}),
                datasets.Features({"predictions": datasets.Value("string", id="sequence"), "references": datasets.Value("string", id="sequence")}),
            ],
        )

    def _compute(self, predictions, references, rouge_types=None, use_aggregator=True, use_stemmer=False, tokenizer=None):
        rouge_types = rouge_types or ["rouge1", "rouge2", "rougeL", "rougeLsum"]
        per = {t: [] for t in rouge_types}
        for p, r in zip(predictions, references):
            refs = r if isinstance(r, list) else [r]
            for t in rouge_types:
                best = 0.0
                for ref in refs:
                    a, b = _tokens(p), _tokens(ref)
                    if t == "rougeL" or t == "rougeLsum":
                        v = _rouge_l(a, b)
                    else:
                        v = _rouge_n(a, b, int(t[len("rouge"):]))
                    best = max(best, v)
                per[t].append(best)
        if use_aggregator:
            return {t: float(np.mean(v)) if v else 0.0 for t, v in per.items()}
        return per
''',
}


def write_metric(out, name):
    source = METRIC_HEADER.format(doc="%s metric" % name.capitalize(), name=name) + METRIC_BODIES[name]
    digest = hashlib.sha256(source.encode()).hexdigest()
    root = os.path.join(out, "modules", "evaluate_modules")
    module_dir = os.path.join(root, "metrics", "evaluate-metric--" + name, digest)
    os.makedirs(module_dir, exist_ok=True)
    for d in (
        os.path.join(out, "modules"),
        root,
        os.path.join(root, "metrics"),
        os.path.join(root, "metrics", "evaluate-metric--" + name),
        module_dir,
    ):
        open(os.path.join(d, "__init__.py"), "a").close()
    with open(os.path.join(module_dir, name + ".py"), "w", encoding="utf-8") as f:
        f.write(source)


# ---------------------------------------------------------------- check


def check(out):
    """Reads everything back the way the task scripts do, offline, in a fresh process."""
    import subprocess

    code = r"""
import evaluate, datasets, transformers
for path, config in %r:
    d = datasets.load_dataset(path, config)
    print("[hub] ok dataset %%s%%s: %%s" %% (path, "/" + config if config else "", {k: len(v) for k, v in d.items()}), flush=True)
for name in %r:
    if "vit" in name:
        try:
            transformers.AutoImageProcessor.from_pretrained(name)
        except ImportError as e:  # no Pillow in this interpreter: the task will meet the same real error
            print("[hub] note: image processor not loadable here: %%s" %% str(e).strip().splitlines()[0], flush=True)
    else:
        t = transformers.AutoTokenizer.from_pretrained(name)
        print("[hub] ok tokenizer %%s: %%s (%%d tokens)" %% (name, type(t).__name__, len(t)), flush=True)
    transformers.AutoConfig.from_pretrained(name)
for m in %r:
    evaluate.load(m)
print("[hub] ok metrics", flush=True)
""" % (DATASETS, list(MODELS), METRICS)
    env = dict(os.environ, **offline_env(out))
    subprocess.run([sys.executable, "-c", code], env=env, check=True)


def offline_env(home):
    return {
        "HF_HOME": home,
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HF_EVALUATE_OFFLINE": "1",
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "HF_DATASETS_DISABLE_PROGRESS_BARS": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "RAYON_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "CUDA_VISIBLE_DEVICES": "",
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--simlibs", required=True)
    ap.add_argument("--check", action="store_true", help="read everything back offline after writing")
    args = ap.parse_args()
    out = os.path.abspath(args.out)
    os.environ.update(offline_env(out))
    synthetic = load_synthetic(args.simlibs)
    text = corpus_text(synthetic)
    total = len(MODELS) + len(DATASETS) + len(METRICS)
    done = 0
    for name in MODELS:
        write_model_repo(out, name, synthetic, text)
        done += 1
        log("%d/%d model %s" % (done, total, name))
    for path, config in DATASETS:
        write_dataset(out, path, config, synthetic)
        done += 1
        log("%d/%d dataset %s%s" % (done, total, path, "/" + config if config else ""))
    for name in METRICS:
        write_metric(out, name)
        done += 1
        log("%d/%d metric %s" % (done, total, name))
    # builder lock files are not part of the hub
    for root, _, files in os.walk(os.path.join(out, "datasets")):
        for f in files:
            if f.endswith(".lock"):
                os.remove(os.path.join(root, f))
    if args.check:
        check(out)
    log("done")


if __name__ == "__main__":
    main()
