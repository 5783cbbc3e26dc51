"""A minimal `pipeline()` over the simulated models (text classification, generation, summarisation,
token classification, question answering, image classification)."""
import math

import torch

from . import _families
from .image_processing import AutoImageProcessor
from .modeling import AUTO_CLASSES, PreTrainedModel
from .tokenization import AutoTokenizer

TASKS = {
    "text-classification": "seqcls",
    "sentiment-analysis": "seqcls",
    "token-classification": "tokcls",
    "ner": "tokcls",
    "question-answering": "qa",
    "text-generation": "causal",
    "summarization": "seq2seq",
    "text2text-generation": "seq2seq",
    "translation": "seq2seq",
    "image-classification": "imgcls",
    "fill-mask": "mlm",
    "feature-extraction": "base",
}
DEFAULT_MODELS = {
    "seqcls": "distilbert/distilbert-base-uncased-finetuned-sst-2-english",
    "tokcls": "dslim/bert-base-NER",
    "qa": "distilbert-base-uncased",
    "causal": "openai-community/gpt2",
    "seq2seq": "google-t5/t5-small",
    "imgcls": "google/vit-base-patch16-224",
    "mlm": "distilbert-base-uncased",
    "base": "distilbert-base-uncased",
}
_HEAD_AUTO = {h: n for n, h in {
    "AutoModelForSequenceClassification": "seqcls", "AutoModelForTokenClassification": "tokcls", "AutoModelForQuestionAnswering": "qa",
    "AutoModelForCausalLM": "causal", "AutoModelForSeq2SeqLM": "seq2seq", "AutoModelForImageClassification": "imgcls",
    "AutoModelForMaskedLM": "mlm", "AutoModel": "base"}.items()}


def _softmax(row):
    m = max(row)
    e = [math.exp(v - m) for v in row]
    s = sum(e)
    return [v / s for v in e]


class Pipeline:
    def __init__(self, task, model, tokenizer=None, image_processor=None):
        self.task, self.model, self.tokenizer, self.image_processor = task, model, tokenizer, image_processor
        self.device = torch.device("cpu")

    def __call__(self, inputs=None, *args, **kwargs):
        if inputs is None:
            inputs = kwargs.pop("text_inputs", None) or kwargs.pop("question", None) and kwargs
        single = not isinstance(inputs, list)
        items = [inputs] if single else inputs
        out = [self._one(x, **kwargs) for x in items]
        return out[0] if single else out

    def _one(self, x, **kwargs):
        head = TASKS[self.task]
        m = self.model
        with torch.no_grad():
            if head == "seqcls":
                enc = self.tokenizer(x, return_tensors="pt", truncation=True)
                logits = list(m(**enc).logits.data)
                probs = logits if kwargs.get("function_to_apply") == "none" else _softmax(logits)
                if kwargs.get("return_all_scores"):
                    # Deprecated spelling of top_k=None: every label, in label order.
                    return [{"label": m.config.id2label[i], "score": probs[i]} for i in range(len(probs))]
                if "top_k" in kwargs and kwargs["top_k"] is None:
                    return sorted(({"label": m.config.id2label[i], "score": probs[i]} for i in range(len(probs))), key=lambda d: -d["score"])
                k = max(range(len(probs)), key=lambda i: probs[i])
                res = {"label": m.config.id2label[k], "score": probs[k]}
                return [res] if kwargs.get("top_k") else res
            if head == "causal":
                enc = self.tokenizer(x, return_tensors="pt")
                gen = m.generate(**enc, max_new_tokens=kwargs.get("max_new_tokens", 20))
                return [{"generated_text": self.tokenizer.decode(gen[0], skip_special_tokens=True)}]
            if head == "seq2seq":
                enc = self.tokenizer(x, return_tensors="pt", truncation=True)
                gen = m.generate(**enc, max_new_tokens=kwargs.get("max_new_tokens", kwargs.get("max_length", 20)))
                key = "summary_text" if self.task == "summarization" else "translation_text" if self.task.startswith("translation") else "generated_text"
                return [{key: self.tokenizer.decode(gen[0], skip_special_tokens=True)}]
            if head == "tokcls":
                enc = self.tokenizer(x, return_tensors="pt", return_offsets_mapping=True)
                offsets = enc.pop("offset_mapping")
                logits = m(**enc).logits
                n = logits.shape[-1]
                res = []
                toks = enc.tokens()
                for i, tok in enumerate(toks):
                    s, e = offsets.data[2 * i], offsets.data[2 * i + 1]
                    if s == e:
                        continue
                    probs = _softmax(logits.data[i * n : (i + 1) * n])
                    k = max(range(n), key=lambda j: probs[j])
                    label = m.config.id2label[k]
                    if label != "O":
                        res.append({"entity": label, "score": probs[k], "index": i, "word": tok, "start": s, "end": e})
                return res
            if head == "qa":
                q, ctx = (x["question"], x["context"]) if isinstance(x, dict) else (kwargs["question"], kwargs["context"])
                enc = self.tokenizer(q, ctx, return_tensors="pt", return_offsets_mapping=True, truncation="only_second")
                offsets = enc.pop("offset_mapping")
                out = m(**enc)
                seq = enc.sequence_ids()
                idx = [i for i, s in enumerate(seq) if s == 1]
                st = max(idx, key=lambda i: out.start_logits.data[i])
                en = max((i for i in idx if i >= st), key=lambda i: out.end_logits.data[i])
                a, b = offsets.data[2 * st], offsets.data[2 * en + 1]
                return {"score": 0.5, "start": a, "end": b, "answer": ctx[a:b]}
            if head == "imgcls":
                px = self.image_processor(x, return_tensors="pt")
                probs = _softmax(m(**px).logits.data)
                order = sorted(range(len(probs)), key=lambda i: -probs[i])[: kwargs.get("top_k", 5)]
                return [{"label": m.config.id2label[i], "score": probs[i]} for i in order]
        raise NotImplementedError("forgeenv-sim: pipeline task %s" % self.task)


def pipeline(task=None, model=None, config=None, tokenizer=None, feature_extractor=None, image_processor=None, processor=None, framework=None,
             revision=None, use_fast=True, token=None, device=None, device_map=None, torch_dtype=None, trust_remote_code=None, model_kwargs=None,
             pipeline_class=None, **kwargs):
    if task is None and model is None:
        raise RuntimeError("Impossible to instantiate a pipeline without either a task or a model being specified. Please provide a task class or a model")
    if task is not None and task not in TASKS and not str(task).startswith("translation"):
        raise KeyError("Unknown task %s, available tasks are %s" % (task, sorted(TASKS)))
    task = task or "text-classification"
    head = TASKS.get(task, "seq2seq")
    if device not in (None, -1, "cpu") and not (isinstance(device, torch.device) and device.type == "cpu"):
        torch._tensor._check_device("cuda" if isinstance(device, int) else device)
    name = model or DEFAULT_MODELS[head]
    if isinstance(name, PreTrainedModel):
        m = name
        name = m.name_or_path
    else:
        m = AUTO_CLASSES[_HEAD_AUTO[head]].from_pretrained(name, **(model_kwargs or {}))
    if head == "imgcls":
        proc = image_processor if image_processor is not None else AutoImageProcessor.from_pretrained(name)
        return Pipeline(task, m, None, proc)
    tok = tokenizer if tokenizer is not None and not isinstance(tokenizer, str) else AutoTokenizer.from_pretrained(tokenizer or name)
    return Pipeline(task, m, tok)
