"""ForgeEnv's artifact verifier (run by the environment, never by a repair).

After a repair's run, the environment starts this program in a fresh sandboxed process: the
repair's processes are gone, its run folder is bound read-only, and nothing the repair wrote is
on sys.path. The program:

1. finds the artifact the task declares (or the one the unbroken original script saves:
   `trainer.save_model("x")`, `model.save_pretrained("x")`, `torch.save(sd, "x")`, or the latest
   `checkpoint-*` folder of the TrainingArguments' output_dir);
2. loads it with the library loader of the mode (the real transformers/peft/torch in real mode,
   the stand-ins in simulated mode), refusing pickles that name anything but tensor rebuilders;
3. evaluates it and the untrained model (what the script starts from) on the task's held-out data,
   and prints both losses.

The environment compares those losses with the unbroken original's and decides. What the repair
printed plays no part. Usage: forgeenv_verify.py SPEC_JSON; the verdict is the last stdout line
that starts with the marker.
"""
import ast
import glob
import json
import math
import os
import pickletools
import re
import sys
import zipfile

MARKER = "FORGEENV_VERDICT "
HERE = os.path.dirname(os.path.abspath(__file__))
# The repair's folder is never importable; ours holds only this file and the spec.
sys.path[:] = [p for p in sys.path if p and os.path.abspath(p) != HERE]
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

HEADS = {
    "AutoModelForSequenceClassification": "seqcls",
    "AutoModelForTokenClassification": "tokcls",
    "AutoModelForQuestionAnswering": "qa",
    "AutoModelForCausalLM": "causal",
    "AutoModelWithLMHead": "causal",
    "AutoModelForSeq2SeqLM": "seq2seq",
    "AutoModelForImageClassification": "imgcls",
    "AutoModelForMaskedLM": "mlm",
    # Speech recognition with a CTC head (wav2vec2, HuBERT): audio in, characters out.
    "AutoModelForCTC": "ctc",
    # Vision-language models (LLaVA, Idefics, SmolVLM, Qwen-VL): text in, text out, images optional.
    "AutoModelForVision2Seq": "vlm",
    "AutoModelForImageTextToText": "vlm",
}
SUFFIX_HEADS = [
    # IDEFICS v1's class: a vision-language model whatever its config holds.
    ("ForVisionText2Text", "vlm"),
    # An image encoder with a text decoder (Donut, TrOCR, image captioning): image in, text out.
    ("VisionEncoderDecoderModel", "vlm"),
    ("ForSequenceClassification", "seqcls"),
    ("ForTokenClassification", "tokcls"),
    ("ForQuestionAnswering", "qa"),
    ("ForConditionalGeneration", "seq2seq"),
    ("ForCausalLM", "causal"),
    ("LMHeadModel", "causal"),
    ("ForImageClassification", "imgcls"),
    ("ForMaskedLM", "mlm"),
    ("ForCTC", "ctc"),
]
LOADERS = {v: k for k, v in HEADS.items() if k not in ("AutoModelWithLMHead", "AutoModelForVision2Seq")}


def loader_for(transformers, head, saved=None, config=None):
    """The class that loads a head's saved model in this release, with a note when it is not the
    head's Auto class: AutoModelForImageTextToText is newer than AutoModelForVision2Seq, which later
    releases drop. When no Auto class of the head maps the saved config (IDEFICS v1's IdeficsConfig
    in AutoModelForVision2Seq), the class the saved config's `architectures` names, from this
    release's own transformers, provided it is a model of the same head (verify_hf then checks it
    covers every saved weight)."""
    names = [LOADERS[head]] + (["AutoModelForVision2Seq"] if head == "vlm" else [])
    present = [(name, getattr(transformers, name)) for name in names if hasattr(transformers, name)]
    if not present:
        raise Refusal("this transformers release has no %s to load a %s model" % (" or ".join(names), head))
    if config is None:
        return present[0] + (None,)
    for name, auto in present:
        if maps(auto, config):
            return name, auto, None
    what = type(config).__name__
    for arch in (saved or {}).get("architectures") or []:
        arch = str(arch)
        cls = getattr(transformers, arch, None) if re.match(r"^[A-Z][A-Za-z0-9_]*$", arch) else None
        if not (isinstance(cls, type) and issubclass(cls, transformers.PreTrainedModel)) or not isinstance(config, cls.config_class):
            continue
        named = head_of({"architectures": [arch], "vision_config": (saved or {}).get("vision_config")}, None)
        if named != head:
            raise Refusal("%s does not map the saved %s, and the class the saved config's architectures name, %s, is no %s model (%s)" % (present[0][0], what, arch, head, named or "unknown head"))
        return arch, cls, "%s (the saved config's architectures: %s does not map %s)" % (arch, " or ".join(n for n, _ in present), what)
    raise Refusal("%s does not map the saved %s, and the saved config's architectures name no model class of this transformers release for it" % (" or ".join(n for n, _ in present), what))


def maps(auto, config):
    """Whether an Auto class maps a config's class; an Auto class without the mapping (the stand-ins) is taken at its word."""
    try:
        return type(config) in auto._model_mapping
    except Exception:  # noqa: BLE001
        return True


class Refusal(Exception):
    """The artifact cannot be verified: the message says why (a finding for the user)."""


NONCE = ""


def verdict(**fields):
    # The nonce comes from the environment's spec: text the artifact makes a library print cannot carry it.
    sys.stdout.write("\n" + MARKER + NONCE + " " + json.dumps(fields, sort_keys=True) + "\n")
    sys.stdout.flush()


# ---------- what the unbroken original does, read from its syntax tree ----------


def _literal(node, consts):
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name) and node.id in consts:
        return consts[node.id]
    if isinstance(node, ast.JoinedStr):
        parts = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                parts.append(str(v.value))
            elif isinstance(v, ast.FormattedValue):
                inner = _literal(v.value, consts)
                if inner is None:
                    return None
                parts.append(str(inner))
        return "".join(parts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        a, b = _literal(node.left, consts), _literal(node.right, consts)
        return a + b if isinstance(a, str) and isinstance(b, str) else None
    if isinstance(node, ast.Call) and _callee(node).endswith("path.join"):
        parts = [_literal(a, consts) for a in node.args]
        return os.path.join(*parts) if parts and all(isinstance(p, str) for p in parts) else None
    return None


def _callee(call):
    f = call.func
    names = []
    while isinstance(f, ast.Attribute):
        names.append(f.attr)
        f = f.value
    if isinstance(f, ast.Name):
        names.append(f.id)
    return ".".join(reversed(names))


def _kw(call, name):
    for k in call.keywords:
        if k.arg == name:
            return k.value
    return None


def read_original(source):
    """Model, head, dataset, artifact and output folder of the original, as far as literals say."""
    tree = ast.parse(source)
    consts = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = _literal(node.value, consts)
            if isinstance(value, str):
                consts[node.targets[0].id] = value
    found = {"models": [], "datasets": [], "saves": [], "output_dirs": [], "checkpointing": False, "state_dict": False}
    for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
        name = _callee(call)
        last = name.rsplit(".", 1)[-1]
        owner = name.rsplit(".", 2)[-2] if "." in name else ""
        if last == "from_pretrained" and call.args:
            model_id = _literal(call.args[0], consts)
            head = HEADS.get(owner) or next((h for s, h in SUFFIX_HEADS if owner.endswith(s)), None)
            if isinstance(model_id, str) and head:
                found["models"].append((call.lineno, head, model_id, owner))
        elif last == "load_dataset" and call.args:
            args = [_literal(a, consts) for a in call.args]
            if all(isinstance(a, str) for a in args):
                found["datasets"].append(args)
        elif last in ("save_model", "save_pretrained") and call.args:
            path = _literal(call.args[0], consts)
            if isinstance(path, str):
                found["saves"].append((call.lineno, path))
        elif name in ("torch.save", "save") and len(call.args) >= 2:
            path = _literal(call.args[1], consts)
            if isinstance(path, str):
                found["saves"].append((call.lineno, path))
                found["state_dict"] = True
        elif last in ("TrainingArguments", "Seq2SeqTrainingArguments", "SFTConfig", "DPOConfig", "GRPOConfig", "RewardConfig"):
            out = _kw(call, "output_dir") or (call.args[0] if call.args else None)
            out = _literal(out, consts) if out is not None else None
            if isinstance(out, str):
                found["output_dirs"].append(out)
            strategy = _kw(call, "save_strategy")
            strategy = _literal(strategy, consts) if strategy is not None else "steps"
            found["checkpointing"] = found["checkpointing"] or strategy != "no"
    return found


# ---------- finding and loading the artifact safely ----------

SAFE_GLOBALS = {
    ("collections", "OrderedDict"),
    ("torch._utils", "_rebuild_tensor_v2"),
    ("torch._utils", "_rebuild_parameter"),
    ("torch._tensor", "_rebuild"),
    ("torch", "FloatStorage"),
    ("torch", "DoubleStorage"),
    ("torch", "HalfStorage"),
    ("torch", "BFloat16Storage"),
    ("torch", "LongStorage"),
    ("torch", "IntStorage"),
    ("torch", "BoolStorage"),
    ("torch", "float32"),
    ("torch", "int64"),
    ("torch", "Size"),
}


STRING_OPS = ("SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE", "BINSTRING", "SHORT_BINSTRING", "STRING")
MEMO_OPS = ("MEMOIZE", "PUT", "BINPUT", "LONG_BINPUT")


def check_pickle(data, what):
    """Refuses a pickle that imports anything but tensor rebuilders: loading runs no repair code.
    Protocol 2 names its imports in GLOBAL/INST; protocol 4's STACK_GLOBAL takes two strings from the
    stack, accepted only when they were pushed right before it (a name fetched from the memo could
    be anything)."""
    recent = []
    try:
        for op, arg, _ in pickletools.genops(data):
            name = op.name
            if name in ("GLOBAL", "INST"):
                module, _, attr = str(arg).partition(" ")
                if (module, attr) not in SAFE_GLOBALS:
                    raise Refusal("%s is a pickle that imports %s.%s (only tensors are accepted)" % (what, module, attr))
            elif name == "STACK_GLOBAL":
                if len(recent) < 2 or recent[-1][0] not in STRING_OPS or recent[-2][0] not in STRING_OPS:
                    raise Refusal("%s is a pickle that imports a name it does not spell out (only tensors are accepted)" % what)
                module, attr = recent[-2][1], recent[-1][1]
                if (module, attr) not in SAFE_GLOBALS:
                    raise Refusal("%s is a pickle that imports %s.%s (only tensors are accepted)" % (what, module, attr))
            elif name in ("EXT1", "EXT2", "EXT4"):
                raise Refusal("%s is a pickle that imports through the extension registry (only tensors are accepted)" % what)
            if name not in MEMO_OPS:
                recent = (recent + [(name, arg)])[-2:]
    except Refusal:
        raise
    except Exception as e:  # a truncated or malformed pickle
        raise Refusal("%s is not a readable pickle (%s)" % (what, e))


def check_weights_file(path):
    rel = os.path.basename(path)
    if path.endswith(".safetensors"):
        return
    with open(path, "rb") as f:
        head = f.read(4)
    if head == b"PK\x03\x04":
        with zipfile.ZipFile(path) as z:
            for n in z.namelist():
                if n.endswith(".pkl"):
                    check_pickle(z.read(n), rel)
    else:
        with open(path, "rb") as f:
            check_pickle(f.read(), rel)


def regular(path):
    """A regular file or folder reached without links (the repair may have planted them)."""
    st = os.lstat(path)
    import stat

    return stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)


def locate(run_dir, declared, original, mounts):
    candidates = []
    if declared:
        candidates.append(declared)
    else:
        candidates.extend(p for _, p in sorted(original["saves"], reverse=True))
        if original["checkpointing"]:
            candidates.extend(os.path.join(d, "checkpoint-*") for d in original["output_dirs"])
    for rel in candidates:
        rel = os.path.normpath(rel)
        for i, at in enumerate(mounts):
            # A task's absolute output folder (SageMaker's /opt/ml/model) lives in the run folder's mounts.
            at = os.path.normpath(at)
            if rel == at or rel.startswith(at + os.sep):
                rel = os.path.join(".forgeenv-mounts", str(i), os.path.relpath(rel, at))
        if rel.startswith("..") or os.path.isabs(rel):
            continue
        matches = glob.glob(os.path.join(run_dir, rel))
        if "*" in rel:
            matches.sort(key=lambda p: int("".join(c for c in os.path.basename(p) if c.isdigit()) or 0))
        for path in reversed(matches):
            parts = os.path.relpath(path, run_dir).split(os.sep)
            if all(regular(os.path.join(run_dir, *parts[: i + 1])) for i in range(len(parts))):
                return path, CHECKPOINT.sub("checkpoint-*", os.path.relpath(path, run_dir))
    if declared:
        raise Refusal("the run left no %s" % declared)
    # Nothing the literals name: the saved model the run left, wherever its arguments put it.
    found = scan_for_models(run_dir)
    if found:
        return found
    raise Refusal("the run left no saved model (%s)" % (" or ".join(candidates) if candidates else "no save_pretrained folder anywhere in the run folder; set verify.artifact in tasks.json"))


CHECKPOINT = re.compile(r"checkpoint-\d+$")


def is_model_dir(path):
    names = set(os.listdir(path))
    if "adapter_config.json" in names:
        return any(n.startswith("adapter_model.") for n in names)
    return "config.json" in names and any(WEIGHT_FILE.match(n) for n in names)


def scan_for_models(run_dir, max_depth=6, max_entries=5000):
    """Saved-model folders in the run folder (no links followed, bounded): a final model before
    checkpoints, then the latest checkpoint; returned with the pattern a repair's run must match."""
    found, seen, stack = [], 0, [(run_dir, 0)]
    while stack and seen < max_entries:
        d, depth = stack.pop()
        try:
            entries = sorted(os.scandir(d), key=lambda e: e.name)
        except OSError:
            continue
        for e in entries:
            seen += 1
            if e.name.startswith(".") or e.name == "__pycache__" or not e.is_dir(follow_symlinks=False):
                continue
            if is_model_dir(e.path):
                found.append(e.path)
            elif depth < max_depth:
                stack.append((e.path, depth + 1))
    if not found:
        return None
    step = lambda p: int(CHECKPOINT.search(p).group(0)[len("checkpoint-"):]) if CHECKPOINT.search(p) else -1
    finals = [p for p in found if step(p) < 0]
    path = sorted(finals, key=lambda p: (os.path.getmtime(p), p))[-1] if finals else max(found, key=step)
    rel = os.path.relpath(path, run_dir)
    return path, CHECKPOINT.sub("checkpoint-*", rel)


# ---------- held-out data and losses ----------

WEIGHT_FILE = re.compile(r"^(model|pytorch_model|adapter_model)(-\d+-of-\d+)?\.(safetensors|bin)$")
LIMIT = 32
BATCH = 8


def heldout_split(dataset_args, spec):
    from datasets import load_dataset

    ds = load_dataset(*dataset_args)
    names = list(ds.keys()) if hasattr(ds, "keys") else []
    split = spec.get("split") or next((s for s in ("validation", "test", "valid", "eval") if s in names), None)
    if split is None:
        if not names:
            return ds.select(range(min(LIMIT, len(ds))))
        split = names[0]
        part = ds[split]
        n = len(part)
        # No held-out split: the last examples, which the shuffled training of a short run is least likely to fit.
        return part.select(range(max(0, n - LIMIT), n))
    part = ds[split]
    return part.select(range(min(LIMIT, len(part))))


def columns_of(part, kinds):
    feats = getattr(part, "features", {}) or {}
    out = []
    for name in part.column_names:
        f = feats.get(name) if hasattr(feats, "get") else None
        kind = type(f).__name__ if f is not None else ""
        dtype = getattr(f, "dtype", "")
        if "text" in kinds and kind == "Value" and dtype == "string":
            out.append(name)
        elif "label" in kinds and (kind == "ClassLabel" or (kind == "Value" and name in ("label", "labels") and dtype.startswith("int"))):
            out.append(name)
    return out


def pick(spec, key, found, what):
    value = spec.get(key)
    if value:
        return value
    if not found:
        raise Refusal("the held-out data has no %s column (set verify.%s in tasks.json)" % (what, key))
    return found


def batches(rows):
    for i in range(0, len(rows), BATCH):
        yield rows[i : i + BATCH]


def mean_loss(model, make_batches):
    import torch

    model.eval()
    total, n = 0.0, 0
    with torch.no_grad():
        for kwargs in make_batches():
            out = model(**kwargs)
            loss = out.loss if hasattr(out, "loss") else out[0]
            value = float(loss.item() if hasattr(loss, "item") else loss)
            if not math.isfinite(value):
                raise Refusal("the model's held-out loss is not finite (%r)" % value)
            total += value
            n += 1
    if n == 0:
        raise Refusal("the held-out data gave no batch to evaluate")
    return total / n


def text_batches(head, part, tokenizer, spec):
    rows = [part[i] for i in range(len(part))]
    if head == "seqcls":
        texts = pick(spec, "text", columns_of(part, {"text"})[:2], "text")
        label = pick(spec, "label", columns_of(part, {"label"})[:1], "label")
        texts = texts if isinstance(texts, list) else [texts]
        label = label[0] if isinstance(label, list) else label

        def make():
            for chunk in batches(rows):
                cols = [[str(r[c]) for r in chunk] for c in texts]
                enc = tokenizer(*cols, truncation=True, max_length=64, padding=True, return_tensors="pt")
                import torch

                enc["labels"] = torch.tensor([int(r[label]) for r in chunk])
                yield dict(enc)

        return make
    if head == "tokcls":
        words = spec.get("text") or ("tokens" if "tokens" in part.column_names else None)
        tags = spec.get("label") or ("ner_tags" if "ner_tags" in part.column_names else next((c for c in part.column_names if c.endswith("tags")), None))
        if not words or not tags:
            raise Refusal("the held-out data has no word and tag columns (set verify.text and verify.label)")

        def make():
            import torch

            for chunk in batches(rows):
                enc = tokenizer([list(r[words]) for r in chunk], is_split_into_words=True, truncation=True, max_length=64, padding=True, return_tensors="pt")
                labels = []
                for i, r in enumerate(chunk):
                    prev, row = None, []
                    for w in enc.word_ids(batch_index=i):
                        row.append(-100 if w is None or w == prev else int(r[tags][w]))
                        prev = w
                    labels.append(row)
                enc["labels"] = torch.tensor(labels)
                yield dict(enc)

        return make
    if head == "qa":

        def make():
            import torch

            for chunk in batches(rows):
                questions = [str(r["question"]) for r in chunk]
                contexts = [str(r["context"]) for r in chunk]
                enc = tokenizer(questions, contexts, truncation="only_second", max_length=96, padding=True, return_tensors="pt")
                starts, ends = [], []
                for i, r in enumerate(chunk):
                    answer = r["answers"]["text"][0] if r["answers"]["text"] else ""
                    target = tokenizer(answer, add_special_tokens=False)["input_ids"]
                    ids = enc["input_ids"][i].tolist()
                    s = e = 0
                    for j in range(len(ids) - len(target) + 1):
                        if target and ids[j : j + len(target)] == target:
                            s, e = j, j + len(target) - 1
                            break
                    starts.append(s)
                    ends.append(e)
                enc["start_positions"] = torch.tensor(starts)
                enc["end_positions"] = torch.tensor(ends)
                yield dict(enc)

        return make
    if head in ("causal", "mlm"):
        text = spec.get("text") or (columns_of(part, {"text"})[:1] or [None])[0]
        if not text:
            raise Refusal("the held-out data has no text column (set verify.text)")
        texts = [str(r[text]) for r in rows if str(r[text]).strip()] or [str(r[text]) for r in rows]
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token

        def make():
            for chunk in batches(texts):
                enc = tokenizer(chunk, truncation=True, max_length=64, padding=True, return_tensors="pt")
                labels = enc["input_ids"].clone()
                labels[enc["attention_mask"] == 0] = -100
                enc["labels"] = labels
                yield dict(enc)

        return make
    if head == "seq2seq":
        source_col, target_col = spec.get("text"), spec.get("label")
        if not source_col or not target_col:
            strings = columns_of(part, {"text"})
            if len(strings) < 2:
                raise Refusal("the held-out data has no source and target columns (set verify.text and verify.label)")
            source_col, target_col = strings[0], strings[1]
        prefix = spec.get("prefix", "")

        def make():
            for chunk in batches(rows):
                enc = tokenizer([prefix + str(r[source_col]) for r in chunk], truncation=True, max_length=128, padding=True, return_tensors="pt")
                labels = tokenizer([str(r[target_col]) for r in chunk], truncation=True, max_length=32, padding=True, return_tensors="pt")["input_ids"]
                labels[labels == tokenizer.pad_token_id] = -100
                enc["labels"] = labels
                yield dict(enc)

        return make
    raise Refusal("no held-out evaluation for a %s model" % head)


def image_batches(part, processor, spec):
    import torch

    rows = [part[i] for i in range(len(part))]
    image = spec.get("image") or next((c for c in part.column_names if c in ("img", "image", "pixel_values")), None)
    label = pick(spec, "label", columns_of(part, {"label"})[:1], "label")
    label = label[0] if isinstance(label, list) else label
    if not image:
        raise Refusal("the held-out data has no image column (set verify.image)")

    def make():
        for chunk in batches(rows):
            enc = processor([r[image].convert("RGB") if hasattr(r[image], "convert") else r[image] for r in chunk], return_tensors="pt")
            yield {"pixel_values": enc["pixel_values"], "labels": torch.tensor([int(r[label]) for r in chunk])}

    return make


def read_json(path):
    try:
        if not regular(path):
            return None
        with open(path, encoding="utf-8") as f:
            value = json.load(f)
        return value if isinstance(value, dict) else None
    except (OSError, ValueError):
        return None


ADAPTER_TASKS = {"CAUSAL_LM": "causal", "SEQ_CLS": "seqcls", "SEQ_2_SEQ_LM": "seq2seq", "TOKEN_CLS": "tokcls", "QUESTION_ANS": "qa"}


def head_of(saved, adapter_cfg):
    if adapter_cfg:
        return ADAPTER_TASKS.get(str(adapter_cfg.get("task_type") or "").upper())
    for arch in saved.get("architectures") or []:
        # A ForConditionalGeneration with a vision tower is a vision-language model, not a seq2seq one.
        if str(arch).endswith("ForConditionalGeneration") and isinstance(saved.get("vision_config"), dict):
            return "vlm"
        for suffix, head in SUFFIX_HEADS:
            if str(arch).endswith(suffix):
                return head
    return None


PROBE_TEXTS = [
    "The model was trained on a small corpus of short English sentences.",
    "A quick brown fox jumps over the lazy dog near the river bank.",
    "Training loss should fall when the optimizer follows the gradient.",
    "She read the paper twice before she wrote her review of it.",
    "Held-out examples tell whether a model learned or only memorized.",
    "The weather was cold, so they stayed inside and played chess.",
    "Every checkpoint stores the weights the trainer saved at that step.",
    "He asked a question, and the answer was in the second paragraph.",
]


def probe_batches(head, tokenizer, num_labels):
    """No dataset the verifier can name: fixed sentences, labels by position. Enough where the loss
    depends on the weights alone (the stand-ins); in real mode the weights-moved check decides."""
    import torch

    if head not in ("seqcls", "causal", "seq2seq", "tokcls", "mlm", "vlm"):
        raise Refusal("the original loads no dataset by a literal name (set verify.dataset in tasks.json)")
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token

    def make():
        for i in range(0, len(PROBE_TEXTS), BATCH // 2):
            chunk = PROBE_TEXTS[i : i + BATCH // 2]
            enc = tokenizer(chunk, truncation=True, max_length=32, padding=True, return_tensors="pt")
            if head == "seqcls" and num_labels == 1:
                enc["labels"] = torch.tensor([float((i + j) % 2) for j in range(len(chunk))])
            elif head == "seqcls":
                enc["labels"] = torch.tensor([(i + j) % num_labels for j in range(len(chunk))])
            elif head == "tokcls":
                enc["labels"] = (enc["input_ids"] % max(1, num_labels)).long()
            else:
                labels = enc["input_ids"].clone()
                labels[enc["attention_mask"] == 0] = -100
                enc["labels"] = labels
            yield dict(enc)

    return make


def probe_audio(feature_extractor, vocab_size):
    """The audio counterpart of the probe sentences, for a CTC model: eight fixed tones at the feature
    extractor's sampling rate (a quarter to half a second each), labelled with the probe sentences'
    characters as ids within the model's vocabulary (a CTC script builds its own vocabulary, so the
    base model has no tokenizer to spell them). In real mode the weights-moved check decides."""
    import numpy as np
    import torch

    rate = int(getattr(feature_extractor, "sampling_rate", 16000) or 16000)
    waves = [np.sin(2 * np.pi * (220 + 55 * i) * np.arange(rate // 4 + i * rate // 32) / rate).astype("float32") for i in range(BATCH)]
    ids = [[1 + ord(c) % max(1, vocab_size - 1) for c in t[:24]] for t in PROBE_TEXTS]

    def make():
        for i in range(0, len(PROBE_TEXTS), BATCH // 2):
            enc = dict(feature_extractor(waves[i : i + BATCH // 2], sampling_rate=rate, padding=True, return_tensors="pt"))
            chunk = ids[i : i + BATCH // 2]
            labels = torch.full((len(chunk), max(len(x) for x in chunk)), -100, dtype=torch.long)
            for row, x in enumerate(chunk):
                labels[row, : len(x)] = torch.tensor(x)
            enc["labels"] = labels
            yield enc

    return make


def probe_images(processor, num_labels):
    """The image counterpart of the probe sentences (data files only the script's arguments name):
    fixed pictures, labels by position. In real mode the weights-moved check decides."""
    import numpy as np
    import torch

    pictures = []
    for i in range(BATCH):
        y, x = np.mgrid[0:64, 0:64]
        pictures.append(np.stack([(x * (i + 1)) % 256, (y * (i + 2)) % 256, ((x + y) * (i + 3)) % 256], axis=-1).astype("uint8"))

    def make():
        for i in range(0, len(pictures), BATCH // 2):
            chunk = pictures[i : i + BATCH // 2]
            enc = processor(chunk, return_tensors="pt")
            yield {"pixel_values": enc["pixel_values"], "labels": torch.tensor([(i + j) % num_labels for j in range(len(chunk))])}

    return make


def vlm_probe(transformers, base, untrained, text_make, data):
    """The probe for a vision-language model: the probe sentences when its forward takes text alone;
    else (IDEFICS v1 needs pixel inputs) the same sentences beside probe images built by the base
    model's processor. Decided on the untrained model, so the trained and the untrained model, and
    the original's run and a repair's, are measured on the same batches."""
    import torch

    try:
        with torch.no_grad():
            untrained(**next(iter(text_make())))
        return text_make, data
    except Exception as e:  # noqa: BLE001 - the model's own refusal of a text-only batch
        why = "%s: %s" % (type(e).__name__, (str(e).splitlines() or [""])[0][:160])
    try:
        make = probe_vlm_batches(transformers.AutoProcessor.from_pretrained(base))
        if untrained.config.is_encoder_decoder and getattr(untrained, "main_input_name", None) == "pixel_values":
            # An image encoder with a text decoder (VisionEncoderDecoderModel) reads the picture alone; the
            # text is what it learns to write: its labels (the decoder's inputs are the labels shifted).
            make = only_keys(make, ("pixel_values", "labels"))
        with torch.no_grad():
            untrained(**next(iter(make())))
    except Exception as e:  # noqa: BLE001
        raise Refusal("the vision-language model takes no text-only batch (%s), nor one with images built by its processor (%s: %s)" % (why, type(e).__name__, str(e)[:200]))
    rest = data[len("probe sentences"):].strip(" ()")
    return make, "probe sentences with probe images (the model takes no text-only batch: %s%s)" % (why, "; " + rest if rest else "")


def only_keys(make, keys):
    """The batches of `make` with only the given keys."""

    def kept():
        for enc in make():
            yield {k: v for k, v in enc.items() if k in keys}

    return kept


def image_side(processor):
    """The side of the square pictures a processor takes (IDEFICS' image_size, a size or crop_size dict), at most 224."""
    ip = getattr(processor, "image_processor", None) or processor
    for value in (getattr(ip, "image_size", None), getattr(ip, "crop_size", None), getattr(ip, "size", None)):
        if isinstance(value, int) and value > 0:
            return min(value, 224)
        if isinstance(value, dict):
            sides = [v for k, v in value.items() if k in ("height", "width", "shortest_edge") and isinstance(v, int) and v > 0]
            if sides:
                return min(max(sides), 224)
    return 64


def probe_vlm_batches(processor):
    """The probe sentences, each beside one fixed picture of the processor's size, as the processor
    builds them: interleaved prompts for a processor that takes `prompts` (IDEFICS v1), else text
    carrying the processor's image token with the images beside it. Labels are the text's tokens."""
    import inspect

    import numpy as np
    from PIL import Image

    side = image_side(processor)
    y, x = np.mgrid[0:side, 0:side]
    pictures = [Image.fromarray(np.stack([(x * (i + 1)) % 256, (y * (i + 2)) % 256, ((x + y) * (i + 3)) % 256], axis=-1).astype("uint8")) for i in range(BATCH)]
    interleaved = "prompts" in inspect.signature(processor.__call__).parameters
    token = getattr(processor, "image_token", None) or "<image>"
    token = getattr(token, "content", token)

    def make():
        for i in range(0, len(PROBE_TEXTS), BATCH // 2):
            texts, images = PROBE_TEXTS[i : i + BATCH // 2], pictures[i : i + BATCH // 2]
            if interleaved:
                enc = processor([[img, t] for img, t in zip(images, texts)], return_tensors="pt")
            else:
                prompts = ["%s %s" % (token, t) for t in texts]
                try:  # one list of pictures per text, or (processors that take no nesting) one picture per text
                    enc = processor(text=prompts, images=[[img] for img in images], padding=True, return_tensors="pt")
                except (ValueError, TypeError):
                    enc = processor(text=prompts, images=images, padding=True, return_tensors="pt")
            enc = dict(enc)
            labels = enc["input_ids"].clone()
            if "attention_mask" in enc:
                labels[enc["attention_mask"] == 0] = -100
            enc["labels"] = labels
            yield enc

    return make


def tokenizer_for(transformers, base, *models):
    """The base model's tokenizer, padding with its end token when it has no pad token (GPT-2 and
    kin), and the models told so: batches of more than one example need it."""
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(base)
    except Exception:  # noqa: BLE001 - a vision-language model may keep its tokenizer in its processor only
        tokenizer = getattr(transformers.AutoProcessor.from_pretrained(base), "tokenizer", None)
        if tokenizer is None:
            raise
    if getattr(tokenizer, "pad_token", None) is None and getattr(tokenizer, "eos_token", None) is not None:
        tokenizer.pad_token = tokenizer.eos_token
    for m in models:
        cfg = getattr(m, "config", None)
        if cfg is not None and getattr(cfg, "pad_token_id", None) is None:
            cfg.pad_token_id = tokenizer.pad_token_id
    return tokenizer


def verify_hf(spec, original, artifact):
    import torch
    import transformers

    torch.manual_seed(0)
    models = original["models"]
    saved = read_json(os.path.join(artifact, "config.json")) or {}
    adapter_cfg = read_json(os.path.join(artifact, "adapter_config.json"))
    head = spec.get("head") or (models[0][1] if models else None) or head_of(saved, adapter_cfg)
    base = (
        spec.get("base_model")
        or next((m[2] for m in models if m[1] == head), None)
        or (adapter_cfg or {}).get("base_model_name_or_path")
        or saved.get("_name_or_path")
    )
    if not head and isinstance(base, str) and base:
        try:
            head = head_of(transformers.AutoConfig.from_pretrained(base).to_dict(), None)
        except Exception:
            head = None
    if not head or not base or not isinstance(base, str) or base == os.path.basename(artifact):
        raise Refusal("neither the original nor the saved model names the model it starts from (set verify.base_model and verify.head in tasks.json)")
    if head == "seq2seq" and isinstance(saved.get("vision_config"), dict):
        head = "vlm"  # a ForConditionalGeneration class name said seq2seq; the saved config has a vision tower
    adapter = os.path.isfile(os.path.join(artifact, "adapter_config.json"))
    if not adapter and not os.path.isfile(os.path.join(artifact, "config.json")):
        raise Refusal("%s holds no config.json or adapter_config.json: not a saved model" % os.path.basename(artifact))
    config = None
    if not adapter:
        try:
            config = transformers.AutoConfig.from_pretrained(artifact)
        except Exception as e:
            raise Refusal("the artifact's config.json does not load with AutoConfig.from_pretrained: %s: %s" % (type(e).__name__, str(e)[:300]))
    loader_name, loader, by_architecture = loader_for(transformers, head, saved, config)
    # The files from_pretrained reads (training_args.bin, optimizer.pt & co. are never loaded here).
    weights = [p for p in glob.glob(os.path.join(artifact, "*")) if WEIGHT_FILE.match(os.path.basename(p))]
    if not weights:
        raise Refusal("%s holds no weights file" % os.path.basename(artifact))
    for w in weights:
        if not regular(w):
            raise Refusal("%s is not a regular file" % os.path.basename(w))
        check_weights_file(w)
    head_kwargs = adapter_head_kwargs(loader, base, weights) if adapter else {}
    try:
        if adapter:
            from peft import PeftModel

            trained = PeftModel.from_pretrained(loader.from_pretrained(base, **head_kwargs), artifact)
        elif by_architecture:
            trained, coverage = loader.from_pretrained(artifact, output_loading_info=True)
        else:
            trained = loader.from_pretrained(artifact)
    except Exception as e:
        raise Refusal("the artifact does not load with %s.from_pretrained: %s: %s" % (loader_name, type(e).__name__, str(e)[:300]))
    if by_architecture:
        # A class no Auto class vouches for: it must hold every saved weight and the save every weight of it.
        coverage = dict(coverage, missing_keys=sorted(set(coverage.get("missing_keys") or []) | set(uncovered(trained, weights))))
        lost = ["%s %s" % (kind, ", ".join(sorted(coverage.get(kind) or [])[:3])) for kind in ("missing_keys", "unexpected_keys", "mismatched_keys") if coverage.get(kind)]
        if lost:
            raise Refusal("%s does not hold the saved model as saved (%s)" % (loader_name, "; ".join(lost)[:300]))
        loader_name = by_architecture
    torch.manual_seed(0)
    if adapter:
        untrained, fresh = loader.from_pretrained(base, **head_kwargs), set()
    else:
        untrained, info = untrained_like(loader, base, config)
        fresh = set(info.get("missing_keys") or []) | mismatched_names(untrained, info)
    moved = moved_share(trained, untrained, fresh, adapter, lambda: adapter_start(loader, base, head_kwargs, artifact) if adapter else None)
    datasets = original["datasets"]
    dataset_args = spec.get("dataset") or (datasets[0] if datasets else None)
    data = "held-out split"
    make = None
    if dataset_args:
        try:
            part = heldout_split(dataset_args, spec)
            if head == "imgcls":
                make = image_batches(part, transformers.AutoImageProcessor.from_pretrained(base), spec)
            else:
                make = text_batches(head, part, tokenizer_for(transformers, base, trained, untrained), spec)
            trained_loss = mean_loss(trained, make)
        except Exception as e:
            # The data the script names needs what only its arguments say (data files, columns): the probe instead.
            make, data = None, "probe sentences (held-out data unavailable: %s)" % ((str(e).splitlines() or [""])[0][:160] or type(e).__name__)
    if make is None:
        num_labels = int(getattr(trained.config, "num_labels", 2) or 2) if hasattr(trained, "config") else 2
        if head == "imgcls":
            make = probe_images(transformers.AutoImageProcessor.from_pretrained(base), num_labels)
            data = data.replace("probe sentences", "probe images")
        elif head == "ctc":
            make = probe_audio(transformers.AutoFeatureExtractor.from_pretrained(base), int(getattr(trained.config, "vocab_size", 32) or 32))
            data = data.replace("probe sentences", "probe audio")
        else:
            make = probe_batches(head, tokenizer_for(transformers, base, trained, untrained), num_labels)
        if data == "held-out split":
            data = {"imgcls": "probe images", "ctc": "probe audio"}.get(head, "probe sentences")
        if head == "vlm":
            make, data = vlm_probe(transformers, base, untrained, make, data)
        dataset_args = None
        trained_loss = mean_loss(trained, make)
    return {"head": head, "base_model": base, "loaded_with": "PeftModel" if adapter else loader_name, "moved": moved, "data": data,
            "dataset": list(dataset_args) if dataset_args else None,
            "trained_loss": trained_loss, "untrained_loss": mean_loss(untrained, make)}


def saved_tensors(weights):
    """The tensors of checked weight files (safetensors, or pickles check_weights_file accepted)."""
    import torch

    out = {}
    for w in weights:
        if w.endswith(".safetensors"):
            from safetensors.torch import load_file

            out.update(load_file(w))
        else:
            try:
                out.update(torch.load(w, map_location="cpu", weights_only=True))
            except TypeError:
                out.update(torch.load(w, map_location="cpu"))
    return out


def uncovered(model, weights):
    """The model's weights the saved files do not hold, under the model's own name or without (or
    with) its base-model prefix, and not sharing storage with one they hold: what loading initialised
    afresh. from_pretrained leaves a class's declared tied keys out of its missing keys even where the
    config unties them (IDEFICS' lm_head), so the files are read."""
    saved = set(saved_tensors(weights))
    prefix = getattr(model, "base_model_prefix", "") or ""
    own = model.state_dict()

    def held(key):
        bare = key[len(prefix) + 1:] if prefix and key.startswith(prefix + ".") else None
        return key in saved or bare in saved or (prefix and prefix + "." + key in saved)

    held_storage = {t.data_ptr() for k, t in own.items() if held(k)}
    return [k for k, t in own.items() if not held(k) and t.data_ptr() not in held_storage]


def adapter_head_kwargs(loader, base, weights):
    """An adapter trained beside a new head (peft's modules_to_save: a reward model's 1-label score,
    a classifier of 5 labels) saves that head: the base model must be built with the head's size, read
    from the saved head's own weight, not the config's default of 2 labels."""
    try:
        saved = saved_tensors(weights)
        model = loader.from_pretrained(base)
    except Exception:  # noqa: BLE001 - the loader's own error follows with its message
        return {}
    own = model.state_dict()
    for key, tensor in saved.items():
        if "lora_" in key or not key.endswith(".weight") or tensor.dim() != 2:
            continue
        name = key
        for prefix in ("base_model.model.", "base_model."):
            if name.startswith(prefix):
                name = name[len(prefix):]
                break
        name = name.replace(".modules_to_save.default", "").replace(".original_module", "")
        mine = own.get(name)
        if mine is not None and mine.dim() == 2 and mine.shape[1] == tensor.shape[1] and mine.shape[0] != tensor.shape[0]:
            if getattr(model.config, "num_labels", None) == mine.shape[0]:
                return {"num_labels": int(tensor.shape[0])}
    return {}


def adapter_start(loader, base, head_kwargs, artifact):
    """The adapter's starting values, built twice from its own config over the base with two seeds:
    a trainable tensor both builds agree on starts deterministically (LoRA B's zeros, FRoD's and
    IA3's derived coefficients, a head the base checkpoint holds); one they disagree on starts random
    (a prompt embedding, a head initialised afresh), so no artifact can show it moved."""
    import torch
    from peft import PEFT_TYPE_TO_CONFIG_MAPPING, PeftConfig, get_peft_model

    # The config's own class, as PeftModel.from_pretrained reads it (old peft's PeftConfig builds nothing).
    config = PEFT_TYPE_TO_CONFIG_MAPPING[PeftConfig.from_pretrained(artifact).peft_type].from_pretrained(artifact)
    config.inference_mode = False  # a saved config is in inference mode: nothing would be trainable
    if getattr(config, "encoder_hidden_size", None) is None and getattr(config, "token_dim", None):
        setattr(config, "encoder_hidden_size", config.token_dim)  # peft 0.3 derives it from a local it never sets once token_dim is saved
    builds = []
    for seed in (0, 1):
        torch.manual_seed(seed)
        model = get_peft_model(loader.from_pretrained(base, **head_kwargs), config)
        builds.append({n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad and ".original_module." not in n})
    first, second = builds
    return {n: t for n, t in first.items() if n in second and tuple(t.shape) == tuple(second[n].shape) and torch.equal(t, second[n])}


def _adapter_key(name):
    # named_parameters of a fresh PeftModel and the state_dict of a loaded one agree but for "default"'s place.
    return name.replace(".default.", ".").replace(".default", "")


def mismatched_names(model, info):
    """The model's tensor names that loading info's mismatched_keys name (tuples of name and shapes, or
    names; older transformers name them without the base model's prefix: `wte.weight`)."""
    named = set(k if isinstance(k, str) else k[0] for k in info.get("mismatched_keys") or [])
    return set(k for k in model.state_dict() if any(k == n or k.endswith("." + n) for n in named))


def untrained_like(loader, base, config):
    """The base model in the saved model's config, with its loading info. A script that grows the vocabulary
    (`setup_chat_format`, `add_special_tokens` + `resize_token_embeddings`) saves embeddings of another shape
    than the base's: those tensors start new (their mismatched_keys count as fresh, never as moved), the rest
    is compared as before."""
    try:
        return loader.from_pretrained(base, config=config, output_loading_info=True)
    except RuntimeError as e:
        if "size mismatch" not in str(e) and "ignore_mismatched_sizes" not in str(e):
            raise
        return loader.from_pretrained(base, config=config, output_loading_info=True, ignore_mismatched_sizes=True)


def moved_share(trained, untrained, fresh, adapter, start=None):
    """Share of the weights the script starts from that training changed: the base model's (the
    head a script adds starts random, so it proves nothing), or an adapter's trainable tensors that
    start deterministically (adapter_start); without peft's builder, its LoRA B matrices (zero at
    the start)."""
    ts = trained.state_dict()
    if adapter:
        try:
            begin = start() if start else None
        except Exception:  # noqa: BLE001 - a peft without get_peft_model (the stand-ins): LoRA B alone
            begin = None
        if begin:
            own = {_adapter_key(k): v for k, v in ts.items()}
            names = [n for n in begin if _adapter_key(n) in own and tuple(own[_adapter_key(n)].shape) == tuple(begin[n].shape)]
            if names:
                changed = [n for n in names if float((own[_adapter_key(n)].float() - begin[n].float()).abs().max().item()) > 0]
                return len(changed) / len(names)
        names = [k for k in ts if "lora_B" in k]
        changed = [k for k in names if float(ts[k].abs().max().item()) > 0]
        return len(changed) / len(names) if names else 0.0
    us = untrained.state_dict()
    names = [k for k in us if k in ts and k not in fresh and tuple(us[k].shape) == tuple(ts[k].shape) and us[k].dtype.is_floating_point]
    changed = [k for k in names if float((ts[k] - us[k]).abs().max().item()) > 0]
    return len(changed) / len(names) if names else 0.0


def verify_state_dict(spec, artifact):
    import torch
    from torch import nn  # noqa: F401  (the task's model expression may use it)
    import torch.nn.functional as F  # noqa: F401

    if not spec.get("model") or not spec.get("heldout"):
        raise Refusal("a state-dict artifact needs verify.model and verify.heldout in tasks.json")
    check_weights_file(artifact)
    try:
        state = torch.load(artifact, weights_only=True)
    except TypeError:
        state = torch.load(artifact)
    except Exception as e:
        raise Refusal("the artifact does not load with torch.load: %s: %s" % (type(e).__name__, str(e)[:300]))
    scope = {"torch": torch, "nn": torch.nn, "F": torch.nn.functional}
    # The task author's code (tasks.json), not the repair's: the model and its held-out batches.
    exec(spec["heldout"], scope)
    torch.manual_seed(spec.get("init_seed", 1234))
    model = eval(spec["model"], scope)
    untrained = eval(spec["model"], scope)
    try:
        model.load_state_dict(state)
    except Exception as e:
        raise Refusal("the state dict does not fit the task's model: %s" % str(e)[:300])
    loss_fn = scope.get("loss_fn")

    def evaluate(m):
        m.eval()
        with torch.no_grad():
            total = 0.0
            for x, y in scope["batches"]():
                total += float(loss_fn(m(x), y).item())
        return total

    return {"head": "state_dict", "loaded_with": "torch.load(weights_only=True)", "trained_loss": evaluate(model), "untrained_loss": evaluate(untrained)}


def main():
    global NONCE
    with open(sys.argv[1], encoding="utf-8") as f:
        spec = json.load(f)
    NONCE = spec["nonce"]
    run_dir = spec["run_dir"]
    original = read_original(spec["original"])
    check = spec.get("verify") or {}
    try:
        path, rel = locate(run_dir, check.get("artifact"), original, check.get("mounts") or [])
        kind = check.get("kind") or ("state_dict" if os.path.isfile(path) else "hf_model")
        if kind == "state_dict":
            if not os.path.isfile(path):
                raise Refusal("%s is not a file" % rel)
            result = verify_state_dict(check, path)
        else:
            if not os.path.isdir(path):
                raise Refusal("%s is not a saved-model folder" % rel)
            result = verify_hf(check, original, path)
        verdict(ok=True, artifact=rel, kind=kind, **result)
    except Refusal as e:
        verdict(ok=False, reason=str(e))


if __name__ == "__main__":
    main()
