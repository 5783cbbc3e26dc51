"""Checks ForgeEnv exports with their real consumers (run by test/unit/exportConsumers.test.ts inside
the consumers venv that scripts/setup-consumers.sh builds). Offline: no hub access; the tiny model and
tokenizer are built here from a config.

Usage: python check_exports.py MANIFEST.json WORKDIR
MANIFEST: {"exports": [{"name", "format", "style", "completion", "path", "rows"}],
           "predictions": PATH, "instances": PATH}
Prints one JSON object: {"checks": [{"name", "ok", "detail"}], "versions": {...}}; exits 0 even when a
check fails (the Node test reports which), non-zero only if the script itself breaks.
"""
import json
import math
import os
import sys
import traceback

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("WANDB_DISABLED", "true")

checks = []


def check(name):
    def wrap(fn):
        try:
            detail = fn()
            checks.append({"name": name, "ok": True, "detail": detail or ""})
        except Exception as e:  # noqa: BLE001 - every failure is reported, not raised
            checks.append({"name": name, "ok": False, "detail": f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=4)}"})
        return fn

    return wrap


manifest = json.load(open(sys.argv[1]))
work = sys.argv[2]
os.environ.setdefault("HF_DATASETS_CACHE", os.path.join(work, "hf-datasets-cache"))

import datasets  # noqa: E402
import pyarrow  # noqa: E402
import pyarrow.json as pajson  # noqa: E402

loaded = {}

# 1. The Hugging Face `datasets` JSON loader reads every export, one schema for the whole file.
for e in manifest["exports"]:

    @check(f"datasets.load_dataset json: {e['name']}")
    def _(e=e):
        ds = datasets.load_dataset("json", data_files=e["path"], split="train")
        assert ds.num_rows == e["rows"], f"{ds.num_rows} rows, expected {e['rows']}"
        loaded[e["name"]] = ds
        return f"{ds.num_rows} rows; features {ds.features}"

    # pyarrow infers one table from the same file (what the Hub's Parquet conversion does).
    @check(f"pyarrow.json.read_json: {e['name']}")
    def _(e=e):
        t = pajson.read_json(e["path"])
        assert t.num_rows == e["rows"], f"{t.num_rows} rows, expected {e['rows']}"
        return str(t.schema).replace("\n", "; ")


# 2. TRL's data utilities accept the SFT and GRPO rows, standard and conversational.
from tokenizers import Tokenizer, models, pre_tokenizers, trainers  # noqa: E402
from transformers import PreTrainedTokenizerFast  # noqa: E402
import trl  # noqa: E402
from trl.data_utils import apply_chat_template, is_conversational, maybe_apply_chat_template  # noqa: E402

CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}<|end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)


def texts():
    for e in manifest["exports"]:
        if e["format"].startswith("trl-"):
            for line in open(e["path"]):
                yield line


def tiny_tokenizer():
    # A word-level tokenizer trained in memory on the exports themselves: offline, a few ms.
    tok = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator(texts(), trainers.WordLevelTrainer(special_tokens=["<unk>", "<pad>", "<|end|>"], vocab_size=4000))
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", pad_token="<pad>", eos_token="<|end|>")
    fast.chat_template = CHAT_TEMPLATE
    return fast


tokenizer = tiny_tokenizer()

for e in manifest["exports"]:
    if not e["format"].startswith("trl-"):
        continue

    @check(f"trl.data_utils: {e['name']}")
    def _(e=e):
        ds = loaded[e["name"]]
        conversational = e["style"] == "conversational"
        n = 0
        for row in ds:
            assert is_conversational(row) == conversational, f"is_conversational={is_conversational(row)} for a {e['style']} row"
            out = maybe_apply_chat_template(row, tokenizer)
            assert isinstance(out["prompt"], str) and out["prompt"], "prompt becomes text"
            if e["format"] == "trl-sft":
                assert isinstance(out["completion"], str) and out["completion"], "completion becomes text"
            if e["format"] == "trl-dpo":
                for k in ("chosen", "rejected"):
                    assert isinstance(out[k], str) and out[k], f"{k} becomes text"
                assert out["chosen"] != out["rejected"], "the two sides differ"
            if conversational:
                applied = apply_chat_template(row, tokenizer)
                assert applied == out, "apply_chat_template and maybe_apply_chat_template agree"
                assert "<|system|>" in applied["prompt"] and "<|user|>" in applied["prompt"], "system and user turns rendered"
            else:
                assert out["prompt"] == row["prompt"], "a standard row passes through unchanged"
            if e["format"] == "trl-grpo":
                for k in ("task_id", "primitive_type", "primitive_params", "seed", "library_versions"):
                    assert k in row, f"GRPO reward kwarg column {k}"
                json.loads(row["primitive_params"])
                json.loads(row["library_versions"])
            n += 1
        return f"{n} rows accepted"


# 3. One SFT step on CPU with a tiny random model consumes the SFT exports.
import torch  # noqa: E402
from transformers import GPT2Config, GPT2LMHeadModel  # noqa: E402
from trl import SFTConfig, SFTTrainer  # noqa: E402


def tiny_gpt2():
    """A tiny random GPT-2 over the exports' tokenizer: enough for one CPU step."""
    torch.manual_seed(0)
    cfg = GPT2Config(vocab_size=len(tokenizer), n_positions=1024, n_embd=32, n_layer=2, n_head=2, bos_token_id=tokenizer.eos_token_id, eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    return GPT2LMHeadModel(cfg)


def step_args(config_cls, out, batch):
    """`config_cls` (SFTConfig, KTOConfig, DPOConfig) for one logged CPU step, saving nothing."""
    return config_cls(
        output_dir=os.path.join(work, out),
        max_steps=1,
        per_device_train_batch_size=batch,
        max_length=1024,
        use_cpu=True,
        report_to=[],
        save_strategy="no",
        logging_steps=1,
        dataloader_pin_memory=False,
        dataset_num_proc=1,
    )


for e in manifest["exports"]:
    if e["format"] != "trl-sft" or e.get("completion") == "fenced":
        continue

    @check(f"SFTTrainer one step on CPU: {e['name']}")
    def _(e=e):
        model = tiny_gpt2()
        args = step_args(SFTConfig, f"sft-{e['name']}", 2)
        trainer = SFTTrainer(model=model, args=args, train_dataset=loaded[e["name"]], processing_class=tokenizer)
        # Prompt-completion rows train on the completion only: TRL marks it with a completion mask
        # (older releases) or with labels that are -100 over the prompt (newer ones).
        first = trainer.train_dataset[0]
        if "completion_mask" in first:
            trained, masked = sum(first["completion_mask"]), len(first["completion_mask"]) - sum(first["completion_mask"])
        else:
            assert "labels" in first, f"columns {list(first.keys())}"
            masked = sum(1 for x in first["labels"] if x == -100)
            trained = len(first["labels"]) - masked
        assert trained > 0 and masked > 0, f"{trained} completion and {masked} prompt tokens: the prompt/completion split was not seen"
        result = trainer.train()
        assert trainer.state.global_step == 1, f"global_step {trainer.state.global_step}"
        assert math.isfinite(result.training_loss), f"loss {result.training_loss}"
        return f"1 step, loss {result.training_loss:.3f}; row 0: {masked} prompt tokens masked, {trained} completion tokens trained"


# 3b/3c. One preference-training step on CPU: KTO consumes the KTO exports (unpaired: prompt,
# completion, boolean label), DPO the DPO exports (paired: prompt, chosen, rejected).
from trl import DPOConfig, DPOTrainer, KTOConfig, KTOTrainer  # noqa: E402


def one_step(config_cls, trainer_cls, ds, out):
    """One step of `trainer_cls` with a tiny GPT-2 (and its reference copy) on `ds`; returns the loss."""
    model = tiny_gpt2()
    trainer = trainer_cls(model=model, ref_model=tiny_gpt2(), args=step_args(config_cls, out, len(ds)), train_dataset=ds, processing_class=tokenizer)
    result = trainer.train()
    assert trainer.state.global_step == 1, f"global_step {trainer.state.global_step}"
    assert math.isfinite(result.training_loss), f"loss {result.training_loss}"
    return result.training_loss


for e in manifest["exports"]:
    if e["format"] == "trl-kto":

        @check(f"KTOTrainer one step on CPU: {e['name']}")
        def _(e=e):
            ds = loaded[e["name"]]
            labels = [bool(x) for x in ds["label"]]
            assert True in labels and False in labels, f"both labels occur: {labels}"
            loss = one_step(KTOConfig, KTOTrainer, ds, f"kto-{e['name']}")
            return f"1 step, loss {loss:.3f}; {labels.count(True)} desirable, {labels.count(False)} undesirable"

    elif e["format"] == "trl-dpo":

        @check(f"DPOTrainer one step on CPU: {e['name']}")
        def _(e=e):
            ds = loaded[e["name"]]
            loss = one_step(DPOConfig, DPOTrainer, ds, f"dpo-{e['name']}")
            return f"1 step, loss {loss:.3f}; {len(ds)} pairs"


# 4. SWE-bench: the harness's own loaders read our predictions and instances.
@check("swebench harness: get_predictions_from_file + get_dataset_from_preds")
def _():
    from typing import get_type_hints

    from swebench.harness.run_evaluation import get_dataset_from_preds
    from swebench.harness.utils import get_predictions_from_file, load_swebench_dataset
    from swebench.types import SWEbenchInstance

    preds = get_predictions_from_file(manifest["predictions"], manifest["instances"], "test")
    for p in preds:
        for k in ("instance_id", "model_name_or_path", "model_patch"):
            assert isinstance(p.get(k), str), f"prediction {p.get('instance_id')}: {k}"
    by_id = {p["instance_id"]: p for p in preds}
    assert len(by_id) == len(preds), "one prediction per instance"
    instances = load_swebench_dataset(manifest["instances"], "test", list(by_id))
    hints = get_type_hints(SWEbenchInstance)
    for inst in instances:
        for k, t in hints.items():
            assert isinstance(inst.get(k), t), f"instance {inst['instance_id']}: {k} is {type(inst.get(k)).__name__}, SWEbenchInstance wants {t.__name__}"
        json.loads(inst["FAIL_TO_PASS"])
        json.loads(inst["PASS_TO_PASS"])
    selected = get_dataset_from_preds(manifest["instances"], "test", [], by_id, "forgeenv-check", rewrite_reports=False, exclude_completed=False)
    non_empty = [i for i, p in by_id.items() if p["model_patch"]]
    assert sorted(i["instance_id"] for i in selected) == sorted(non_empty), "every non-empty prediction pairs with an instance"
    return f"{len(preds)} predictions, {len(instances)} instances, {len(selected)} to evaluate"


print(
    json.dumps(
        {
            "checks": checks,
            "versions": {
                "datasets": datasets.__version__,
                "pyarrow": pyarrow.__version__,
                "trl": trl.__version__,
                "torch": torch.__version__,
                "swebench": __import__("swebench").__version__,
            },
        }
    )
)
