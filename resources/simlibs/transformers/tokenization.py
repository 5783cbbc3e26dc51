"""Simulated tokenizers: a deterministic hashing word/sub-word tokenizer with the real call surface
(padding, truncation, max_length, text pairs, text_target, offsets, word_ids, return_tensors)."""
import contextlib
import json
import os
import re

from _forgeenv_sim import versions as _v
from _forgeenv_sim import warn as _warn
from _forgeenv_sim.hashing import stable_hash

from . import _families

_WORD_RE = re.compile(r"\w+|[^\w\s]")
_SEEN = {}  # token id -> token string, so that generated ids can be decoded
_WARNED = set()

_PAD_ERROR = (
    "Asking to pad but the tokenizer does not have a padding token. Please select a token to use as `pad_token` "
    "`(tokenizer.pad_token = tokenizer.eos_token e.g.)` or add a new pad token via "
    "`tokenizer.add_special_tokens({'pad_token': '[PAD]'})`."
)


def _warn_once(key, message):
    if key not in _WARNED:
        _WARNED.add(key)
        _warn.log(message)


def _tensor_error(key):
    return ValueError(
        "Unable to create tensor, you should probably activate truncation and/or padding with 'padding=True' "
        "'truncation=True' to have batched tensors with the same length. Perhaps your features (`%s` in this case) "
        "have excessive nesting (inputs type `list` where type `int` is expected)." % key
    )


def _to_tensors(data, tensor_type, batched):
    if tensor_type is None:
        return data
    if str(tensor_type) in ("tf", "jax", "mlx"):
        raise ImportError("Unable to convert output to %s tensors format, it is not available in the simulated environment" % tensor_type)
    if str(tensor_type) not in ("pt", "np", "TensorType.PYTORCH", "TensorType.NUMPY"):
        raise ValueError("%r is not a valid TensorType, please select one of ['pt', 'tf', 'np', 'jax', 'mlx']" % (tensor_type,))
    import torch

    out = {}
    for k, v in data.items():
        if k == "overflow_to_sample_mapping" or k == "length":
            out[k] = torch.tensor(v)
            continue
        rows = v if batched else [v]
        if rows and isinstance(rows[0], list) and len({len(r) for r in rows}) > 1:
            raise _tensor_error(k)
        try:
            t = torch.tensor(rows)
        except (ValueError, TypeError):
            raise _tensor_error(k) from None
        out[k] = t
    return out


class Encoding:
    """What BatchEncoding[i] returns for fast tokenizers (a tokenizers.Encoding look-alike)."""

    def __init__(self, ids, tokens, word_ids, seq_ids, offsets, attention_mask):
        self.ids, self.tokens, self.word_ids, self.sequence_ids = ids, tokens, word_ids, seq_ids
        self.offsets, self.attention_mask = offsets, attention_mask
        self.words = word_ids

    def __len__(self):
        return len(self.ids)

    def __repr__(self):
        return "Encoding(num_tokens=%d, attributes=[ids, type_ids, tokens, offsets, attention_mask, special_tokens_mask, overflowing])" % len(self.ids)


class BatchEncoding(dict):
    def __init__(self, data=None, encodings=None, tensor_type=None, prepend_batch_axis=False, n_sequences=None, _meta=None, _batched=True, _fast=True):
        data = dict(data or {})
        self._batched = _batched
        dict.__init__(self, _to_tensors(data, tensor_type, _batched) if tensor_type else data)
        self._meta = _meta or []
        self._fast = _fast
        self._n_sequences = n_sequences

    @property
    def data(self):
        return dict(self)

    @property
    def encodings(self):
        return [self[i] for i in range(len(self._meta))] if self._fast else None

    @property
    def is_fast(self):
        return self._fast

    @property
    def n_sequences(self):
        return self._n_sequences

    def __getattr__(self, item):
        if item.startswith("_"):
            raise AttributeError(item)
        try:
            return self[item]
        except KeyError:
            raise AttributeError(item) from None

    def __getitem__(self, item):
        if isinstance(item, str):
            return dict.__getitem__(self, item)
        if isinstance(item, int) and self._fast:
            m = self._meta[item]
            ids = dict.__getitem__(self, "input_ids")
            row = ids[item] if self._batched else ids
            row = row.tolist() if hasattr(row, "tolist") else row
            return Encoding(row, m["tokens"], m["word_ids"], m["seq_ids"], m["offsets"], [1 if w is not None or t else 1 for w, t in zip(m["word_ids"], m["tokens"])])
        if isinstance(item, slice):
            return {k: v[item] for k, v in self.items()}
        raise KeyError("Invalid key. Only three types of key are available: (1) string, (2) integers for backend Encoding, and (3) slices for data subsetting.")

    def __getstate__(self):
        return {"data": dict(self), "meta": self._meta, "batched": self._batched, "fast": self._fast}

    def __setstate__(self, state):
        dict.update(self, state["data"])
        self._meta, self._batched, self._fast, self._n_sequences = state["meta"], state["batched"], state["fast"], None

    def _need_fast(self, what):
        if not self._fast:
            raise ValueError("%s() is not available when using non-fast tokenizers (e.g. instance of a `XxxTokenizerFast` class)." % what)

    def word_ids(self, batch_index=0):
        self._need_fast("word_ids")
        return list(self._meta[batch_index]["word_ids"])

    def words(self, batch_index=0):
        return self.word_ids(batch_index)

    def sequence_ids(self, batch_index=0):
        self._need_fast("sequence_ids")
        return list(self._meta[batch_index]["seq_ids"])

    def tokens(self, batch_index=0):
        self._need_fast("tokens")
        return list(self._meta[batch_index]["tokens"])

    def char_to_token(self, batch_or_char_index, char_index=None, sequence_index=0):
        b, c = (0, batch_or_char_index) if char_index is None else (batch_or_char_index, char_index)
        m = self._meta[b]
        for i, ((s, e), sid) in enumerate(zip(m["offsets"], m["seq_ids"])):
            if sid == sequence_index and s <= c < e:
                return i
        return None

    def convert_to_tensors(self, tensor_type=None, prepend_batch_axis=False):
        dict.update(self, _to_tensors(dict(self), tensor_type, self._batched))
        return self

    def to(self, device):
        import torch

        if isinstance(device, str) or isinstance(device, torch.device):
            torch._tensor._check_device(device)
        return self


class PreTrainedTokenizerBase:
    _family = None
    is_fast = True
    padding_side = "right"
    truncation_side = "right"

    def __init__(self, name_or_path="", family=None, extra=None, **kwargs):
        # Built directly (PreTrainedTokenizerFast(tokenizer_object=...) / (tokenizer_file=...)) rather
        # than loaded: a plain byte-level BPE whose special tokens are the ones passed in.
        direct = (family or self._family) is None
        family = family or self._family or "llama"
        fam = _families.FAMILIES[family]
        extra = dict(extra or {})
        self._fam_name = family
        self._fam = fam
        self.name_or_path = name_or_path
        self._lower = extra.get("lower", fam["lower"])
        self._style = fam["style"]
        self._base_vocab = extra.get("vocab_size", fam["vocab"])
        self._added = {}  # token -> id
        self.init_kwargs = dict(kwargs)
        self.model_max_length = kwargs.get("model_max_length") or fam["max_len"] or 512
        self.padding_side = kwargs.get("padding_side", "right")
        self.truncation_side = kwargs.get("truncation_side", "right")
        self.add_prefix_space = kwargs.get("add_prefix_space", False)
        self._special = {}
        for role, (tok, tid) in fam["tokens"].items():
            self._special[role] = tok
            _SEEN[tid] = tok
        self._special_ids = {tok: tid for role, (tok, tid) in fam["tokens"].items()}
        # Chat/instruct checkpoints ship a chat template; base checkpoints mostly do not.
        low = str(getattr(self, "name_or_path", "") or "").lower()
        self.chat_template = "chatml" if self._fam_name == "qwen2" or any(k in low for k in ("instruct", "chat", "-it", "sft", "llama-3", "smol", "zephyr")) else None
        self.model_input_names = ["input_ids"] + (["token_type_ids"] if fam["type_ids"] else []) + ["attention_mask"]
        self.clean_up_tokenization_spaces = self._style == "wordpiece"
        self._backend = None
        if direct:
            # A `tokenizers.Tokenizer` given to the constructor does the tokenising (its vocabulary, its ids).
            obj = kwargs.get("tokenizer_object")
            if obj is None and kwargs.get("tokenizer_file"):
                try:
                    from tokenizers import Tokenizer as _RawTokenizer

                    obj = _RawTokenizer.from_file(kwargs["tokenizer_file"])
                except Exception:  # noqa: BLE001 - an unreadable file: the hashing tokenizer stands in
                    obj = None
            if obj is not None and callable(getattr(obj, "encode", None)) and callable(getattr(obj, "token_to_id", None)):
                self._backend = obj
                self._base_vocab = obj.get_vocab_size(with_added_tokens=True)
            self._special = {}
            for role in ("bos", "eos", "unk", "sep", "pad", "cls", "mask"):
                if kwargs.get(role + "_token") is not None:
                    self._set_tok(role, kwargs[role + "_token"])

    # -- special tokens --
    def _tok(self, role):
        return self._special.get(role)

    def _set_tok(self, role, value):
        if value is None:
            self._special.pop(role, None)
            return
        value = str(value)
        if value not in self._special_ids and value not in self._added and not (self._backend is not None and self._backend.token_to_id(value) is not None):
            self._added[value] = self._base_vocab + len(self._added)
            _SEEN[self._added[value]] = value
        self._special[role] = value

    def _tok_id(self, role):
        t = self._special.get(role)
        return None if t is None else self.convert_tokens_to_ids(t)

    for _role in ("pad", "eos", "bos", "unk", "sep", "cls", "mask"):
        locals()[_role + "_token"] = property(
            (lambda r: lambda self: self._tok(r))(_role), (lambda r: lambda self, v: self._set_tok(r, v))(_role)
        )
        locals()[_role + "_token_id"] = property(
            (lambda r: lambda self: self._tok_id(r))(_role),
            (lambda r: lambda self, v: self._set_tok(r, self.convert_ids_to_tokens(v)) if v is not None else self._set_tok(r, None))(_role),
        )
    del _role

    pad_token_type_id = 0

    @property
    def all_special_tokens(self):
        return list(dict.fromkeys(self._special.values()))

    @property
    def all_special_ids(self):
        return [self.convert_tokens_to_ids(t) for t in self.all_special_tokens]

    @property
    def special_tokens_map(self):
        return {r + "_token": t for r, t in self._special.items()}

    @property
    def vocab_size(self):
        return self._base_vocab

    def __len__(self):
        return self._base_vocab + len(self._added)

    def get_vocab(self):
        v = dict(self._backend.get_vocab(with_added_tokens=True)) if self._backend is not None else dict(self._special_ids)
        v.update(self._added)
        return v

    def add_special_tokens(self, special_tokens_dict, replace_additional_special_tokens=True):
        before = len(self)
        for key, value in special_tokens_dict.items():
            if key == "additional_special_tokens":
                self.add_tokens(list(value))
                continue
            if not key.endswith("_token"):
                raise ValueError("Key %s is not a special token" % key)
            self._set_tok(key[: -len("_token")], value)
        return len(self) - before

    def add_tokens(self, new_tokens, special_tokens=False):
        if isinstance(new_tokens, str):
            new_tokens = [new_tokens]
        n = 0
        for t in new_tokens:
            t = str(t)
            if t not in self._added and t not in self._special_ids:
                self._added[t] = self._base_vocab + len(self._added)
                _SEEN[self._added[t]] = t
                n += 1
        return n

    # -- core tokenisation --
    def _id_of(self, token):
        if token in self._added:
            return self._added[token]
        if self._backend is not None:
            tid = self._backend.token_to_id(token)
            if tid is None and self._special.get("unk") is not None:
                tid = self._backend.token_to_id(self._special["unk"])
            return tid
        if token in self._special_ids:
            return self._special_ids[token]
        reserved = set(self._special_ids.values())
        lo = 1000 if self._base_vocab > 2000 else 5
        hi = self._base_vocab - 1 if self._base_vocab > 51000 or self._fam_name == "roberta" else self._base_vocab
        h = stable_hash(self._fam_name, token)
        tid = lo + h % (hi - lo)
        while tid in reserved:
            tid = lo + (tid + 1 - lo) % (hi - lo)
        _SEEN[tid] = token
        return tid

    def _words(self, text):
        return [(m.group(0), m.start(), m.end()) for m in _WORD_RE.finditer(text)]

    def _pieces(self, word, start, first, spaced):
        w = word.lower() if self._lower else word
        parts = [(w, start, start + len(word))]
        if len(w) > 6 and w.isalpha():
            parts = [(w[:4], start, start + 4), (w[4:], start + 4, start + len(word))]
        out = []
        for i, (p, s, e) in enumerate(parts):
            if self._style == "wordpiece":
                out.append(("##" + p if i else p, s, e))
            elif self._style == "bpe":
                out.append((("Ġ" + p) if (i == 0 and spaced) else p, s, e))
            else:  # sentencepiece
                out.append((("▁" + p) if (i == 0 and (spaced or first)) else p, s, e))
        return out

    def _encode_text(self, text, pretokenized):
        """(ids, tokens, word_ids, offsets) without special tokens."""
        if self._backend is not None and (pretokenized or isinstance(text, str)):
            enc = self._backend.encode([str(w) for w in text] if pretokenized else text, is_pretokenized=bool(pretokenized), add_special_tokens=False)
            return list(enc.ids), list(enc.tokens), list(enc.word_ids), list(enc.offsets)
        ids, toks, wids, offs = [], [], [], []
        if pretokenized:
            if self._style == "bpe" and not self.add_prefix_space:
                raise ValueError(
                    "You need to instantiate %s with add_prefix_space=True to use it with pretokenized inputs." % type(self).__name__
                )
            words = []
            pos = 0
            for w in text:
                words.append((str(w), pos, pos + len(str(w))))
                pos += len(str(w)) + 1
            spans = [[(w, s, e)] for (w, s, e) in words]
            spaced_flags = [True] * len(words)
        else:
            if not isinstance(text, str):
                raise ValueError(
                    "text input must be of type `str` (single example), `List[str]` (batch or single pretokenized example) or `List[List[str]]` (batch of pretokenized examples)."
                )
            spans = [[w] for w in self._words(text)]
            spaced_flags = [s > 0 and text[s - 1].isspace() for [(w, s, e)] in spans]
            if self.add_prefix_space and spaced_flags:
                spaced_flags[0] = True
        for wi, ([(w, s, e)], spaced) in enumerate(zip(spans, spaced_flags)):
            if w in self._added:
                pieces = [(w, s, e)]
            else:
                pieces = self._pieces(w, s, wi == 0, spaced)
            for p, ps, pe in pieces:
                ids.append(self._id_of(p))
                toks.append(p)
                wids.append(wi)
                offs.append((ps, pe))
        return ids, toks, wids, offs

    def _with_specials(self, a, b):
        """Adds the family's special tokens around one or two sequences (each a tuple of lists)."""
        fam = self._fam_name
        cls_t, sep_t = self._special.get("cls"), self._special.get("sep")
        eos_t, bos_t = self._special.get("eos"), self._special.get("bos")
        seqs = [a] + ([b] if b is not None else [])
        out = {"ids": [], "tokens": [], "word_ids": [], "seq_ids": [], "offsets": [], "type_ids": [], "special": []}

        def special(tok, type_id):
            out["ids"].append(self.convert_tokens_to_ids(tok))
            out["tokens"].append(tok)
            out["word_ids"].append(None)
            out["seq_ids"].append(None)
            out["offsets"].append((0, 0))
            out["type_ids"].append(type_id)
            out["special"].append(1)

        def body(seq, sid):
            ids, toks, wids, offs = seq
            out["ids"].extend(ids)
            out["tokens"].extend(toks)
            out["word_ids"].extend(wids)
            out["seq_ids"].extend([sid] * len(ids))
            out["offsets"].extend(offs)
            out["type_ids"].extend([sid] * len(ids))
            out["special"].extend([0] * len(ids))

        if fam in ("bert", "distilbert", "albert", "electra", "deberta-v2"):
            special(cls_t, 0)
            body(seqs[0], 0)
            special(sep_t, 0)
            if b is not None:
                body(seqs[1], 1)
                special(sep_t, 1)
        elif fam in ("roberta", "bart"):
            special(cls_t, 0)
            body(seqs[0], 0)
            special(sep_t, 0)
            if b is not None:
                special(sep_t, 0)
                body(seqs[1], 1)
                special(sep_t, 0)
            out["type_ids"] = [0] * len(out["ids"])
        elif fam == "t5":
            body(seqs[0], 0)
            special(eos_t, 0)
            if b is not None:
                body(seqs[1], 1)
                special(eos_t, 0)
            out["type_ids"] = [0] * len(out["ids"])
        elif fam == "opt":
            special(bos_t, 0)
            body(seqs[0], 0)
            if b is not None:
                body(seqs[1], 1)
        else:  # gpt2, llama, qwen2: no special tokens
            body(seqs[0], 0)
            if b is not None:
                body(seqs[1], 1)
            out["type_ids"] = [0] * len(out["ids"])
        return out

    def _n_specials(self, pair):
        fam = self._fam_name
        if fam in ("bert", "distilbert", "albert", "electra", "deberta-v2"):
            return 3 if pair else 2
        if fam in ("roberta", "bart"):
            return 4 if pair else 2
        if fam == "t5":
            return 2 if pair else 1
        if fam == "opt":
            return 1
        return 0

    def num_special_tokens_to_add(self, pair=False):
        return self._n_specials(pair)

    @staticmethod
    def _truncate_part(seq, n, side):
        ids, toks, wids, offs = seq
        if n <= 0:
            return seq
        keep = len(ids) - n
        if keep < 0:
            keep = 0
        if side == "left":
            return ids[-keep:] if keep else [], toks[-keep:] if keep else [], wids[-keep:] if keep else [], offs[-keep:] if keep else []
        return ids[:keep], toks[:keep], wids[:keep], offs[:keep]

    def _truncate(self, a, b, max_length, strategy, add_special):
        room = max_length - (self._n_specials(b is not None) if add_special else 0)
        total = len(a[0]) + (len(b[0]) if b is not None else 0)
        over = total - room
        if over <= 0:
            return a, b
        side = self.truncation_side
        if strategy == "only_second":
            if b is None or len(b[0]) < over:
                raise ValueError(
                    "Truncation error: Second sequence not provided" if b is None else
                    "Truncation error: Sequence to truncate too short to respect the provided max_length"
                )
            return a, self._truncate_part(b, over, side)
        if strategy == "only_first":
            if len(a[0]) < over:
                raise ValueError("Truncation error: Sequence to truncate too short to respect the provided max_length")
            return self._truncate_part(a, over, side), b
        if b is None:
            return self._truncate_part(a, over, side), b
        la, lb = len(a[0]), len(b[0])
        for _ in range(over):
            if la >= lb:
                la -= 1
            else:
                lb -= 1
        return self._truncate_part(a, len(a[0]) - la, side), self._truncate_part(b, len(b[0]) - lb, side)

    # -- public API --
    def tokenize(self, text, pair=None, add_special_tokens=False, **kwargs):
        toks = self._encode_text(text, False)[1]
        if pair is not None:
            toks += self._encode_text(pair, False)[1]
        return toks

    def convert_tokens_to_ids(self, tokens):
        if tokens is None:
            return None
        if isinstance(tokens, str):
            return self._id_of(tokens)
        return [self._id_of(t) for t in tokens]

    def convert_ids_to_tokens(self, ids, skip_special_tokens=False):
        single = isinstance(ids, int) or (hasattr(ids, "dim") and ids.dim() == 0)
        seq = [int(ids)] if single else [int(i) for i in (ids.tolist() if hasattr(ids, "tolist") else ids)]
        specials = set(self.all_special_ids)
        out = []
        for i in seq:
            if skip_special_tokens and i in specials:
                continue
            t = self._backend.id_to_token(i) if self._backend is not None else None
            out.append(t if t is not None else _SEEN.get(i, self._special.get("unk") or "<unk>"))
        return out[0] if single else out

    def _resolve_padding(self, padding, truncation, max_length, kwargs):
        if "pad_to_max_length" in kwargs:
            value = kwargs.pop("pad_to_max_length")
            if not _v.changed("transformers-pad-to-max-length-removed"):
                _warn.future(
                    "The `pad_to_max_length` argument is deprecated and will be removed in a future version, use `padding=True` or "
                    "`padding='longest'` to pad to the longest sequence in the batch, or use `padding='max_length'` to pad to a max length. "
                    "In this case, you can give a specific length with `max_length` (e.g. `max_length=45`) or leave max_length to None to "
                    "pad to the maximal input size of the model (e.g. 512 for Bert).",
                    stacklevel=4,
                )
                if value and padding is False:
                    padding = "max_length"
            else:
                kwargs["pad_to_max_length"] = value
        kwargs.pop("split_special_tokens", None)
        if kwargs and not _v.changed("transformers-tokenizer-call-extra-kwargs"):
            if isinstance(self, PreTrainedTokenizerFast):
                # 4.x fast tokenizers hand leftover keywords to _batch_encode_plus, which takes none.
                raise TypeError("PreTrainedTokenizerFast._batch_encode_plus() got an unexpected keyword argument '%s'" % next(iter(kwargs)))
            _warn.log("Keyword arguments %s not recognized." % kwargs)
        if padding is True:
            padding = "longest"
        elif padding is False or padding is None:
            padding = "do_not_pad"
        elif padding not in ("longest", "max_length", "do_not_pad"):
            raise ValueError("'%s' is not a valid PaddingStrategy, please select one of ['longest', 'max_length', 'do_not_pad']" % padding)
        if truncation is True:
            truncation = "longest_first"
        elif truncation is None:
            if max_length is not None and padding == "do_not_pad":
                _warn_once(
                    "trunc",
                    "Truncation was not explicitly activated but `max_length` is provided a specific value, please use `truncation=True` to explicitly "
                    "truncate examples to max length. Defaulting to 'longest_first' truncation strategy. If you encode pairs of sequences "
                    "(GLUE-style) with the tokenizer you can select this strategy more precisely by providing a specific strategy to `truncation`.",
                )
                truncation = "longest_first"
            else:
                truncation = "do_not_truncate"
        elif truncation is False:
            truncation = "do_not_truncate"
        elif truncation not in ("longest_first", "only_first", "only_second", "do_not_truncate"):
            raise ValueError("'%s' is not a valid TruncationStrategy, please select one of ['only_first', 'only_second', 'longest_first', 'do_not_truncate']" % truncation)
        if padding == "max_length" and max_length is None:
            max_length = self.model_max_length
        if truncation != "do_not_truncate" and max_length is None:
            max_length = self.model_max_length
        if padding != "do_not_pad" and self._special.get("pad") is None:
            raise ValueError(_PAD_ERROR)
        return padding, truncation, max_length

    def __call__(
        self,
        text=None,
        text_pair=None,
        text_target=None,
        text_pair_target=None,
        add_special_tokens=True,
        padding=False,
        truncation=None,
        max_length=None,
        stride=0,
        is_split_into_words=False,
        pad_to_multiple_of=None,
        padding_side=None,
        return_tensors=None,
        return_token_type_ids=None,
        return_attention_mask=None,
        return_overflowing_tokens=False,
        return_special_tokens_mask=False,
        return_offsets_mapping=False,
        return_length=False,
        verbose=True,
        **kwargs,
    ):
        if text is None and text_target is None:
            raise ValueError("You need to specify either `text` or `text_target`.")
        common = dict(add_special_tokens=add_special_tokens, padding=padding, truncation=truncation, max_length=max_length, stride=stride,
                      is_split_into_words=is_split_into_words, pad_to_multiple_of=pad_to_multiple_of, padding_side=padding_side,
                      return_tensors=return_tensors, return_token_type_ids=return_token_type_ids, return_attention_mask=return_attention_mask,
                      return_overflowing_tokens=return_overflowing_tokens, return_special_tokens_mask=return_special_tokens_mask,
                      return_offsets_mapping=return_offsets_mapping, return_length=return_length, extra=kwargs)
        enc = self._call_one(text, text_pair, **common) if text is not None else None
        if text_target is None:
            return enc
        target = self._call_one(text_target, text_pair_target, **dict(common, extra=dict(kwargs)))
        if enc is None:
            return target
        dict.__setitem__(enc, "labels", dict.__getitem__(target, "input_ids"))
        return enc

    def _call_one(self, text, text_pair, add_special_tokens, padding, truncation, max_length, stride, is_split_into_words, pad_to_multiple_of,
                  padding_side, return_tensors, return_token_type_ids, return_attention_mask, return_overflowing_tokens, return_special_tokens_mask,
                  return_offsets_mapping, return_length, extra):
        if return_offsets_mapping and not self.is_fast:
            raise NotImplementedError(
                "return_offset_mapping is not available when using Python tokenizers. To use this feature, change your tokenizer to one "
                "deriving from transformers.PreTrainedTokenizerFast. More information on available tokenizers at https://github.com/huggingface/transformers/pull/2674"
            )
        padding, truncation, max_length = self._resolve_padding(padding, truncation, max_length, dict(extra))
        if is_split_into_words:
            batched = bool(text) and isinstance(text[0], (list, tuple))
        else:
            batched = isinstance(text, (list, tuple))
        texts = list(text) if batched else [text]
        pairs = (list(text_pair) if batched else [text_pair]) if text_pair is not None else [None] * len(texts)
        if len(pairs) != len(texts):
            raise ValueError("batch length of `text`: %d does not match batch length of `text_pair`: %d." % (len(texts), len(pairs)))
        rows, metas = [], []
        for t, p in zip(texts, pairs):
            a = self._encode_text(t, is_split_into_words)
            b = self._encode_text(p, is_split_into_words) if p is not None else None
            if truncation != "do_not_truncate":
                a, b = self._truncate(a, b, max_length, truncation, add_special_tokens)
            if add_special_tokens:
                r = self._with_specials(a, b)
            else:
                r = {"ids": a[0] + (b[0] if b else []), "tokens": a[1] + (b[1] if b else []), "word_ids": a[2] + (b[2] if b else []),
                     "seq_ids": [0] * len(a[0]) + ([1] * len(b[0]) if b else []), "offsets": a[3] + (b[3] if b else []),
                     "type_ids": [0] * len(a[0]) + ([1] * len(b[0]) if b else []), "special": [0] * (len(a[0]) + (len(b[0]) if b else 0))}
            if truncation == "do_not_truncate" and len(r["ids"]) > self.model_max_length and verbose:
                _warn_once(
                    "long",
                    "Token indices sequence length is longer than the specified maximum sequence length for this model (%d > %d). "
                    "Running this sequence through the model will result in indexing errors" % (len(r["ids"]), self.model_max_length),
                )
            rows.append(r)
        target_len = None
        if padding == "longest":
            target_len = max((len(r["ids"]) for r in rows), default=0)
        elif padding == "max_length":
            target_len = max_length
        if target_len is not None and pad_to_multiple_of:
            target_len = -(-target_len // pad_to_multiple_of) * pad_to_multiple_of
        side = padding_side or self.padding_side
        want_types = self._fam["type_ids"] if return_token_type_ids is None else return_token_type_ids
        want_mask = True if return_attention_mask is None else return_attention_mask
        data = {"input_ids": []}
        if want_types:
            data["token_type_ids"] = []
        if want_mask:
            data["attention_mask"] = []
        if return_special_tokens_mask:
            data["special_tokens_mask"] = []
        if return_offsets_mapping:
            data["offset_mapping"] = []
        if return_length:
            data["length"] = []
        if return_overflowing_tokens:
            data["overflow_to_sample_mapping"] = []
        pad_id = self.pad_token_id
        for i, r in enumerate(rows):
            n = len(r["ids"])
            fill = max(0, (target_len or 0) - n)
            mask = [1] * n

            def padded(seq, value):
                return (seq + [value] * fill) if side == "right" else ([value] * fill + seq)

            data["input_ids"].append(padded(r["ids"], pad_id) if fill else r["ids"])
            if want_types:
                data["token_type_ids"].append(padded(r["type_ids"], self.pad_token_type_id) if fill else r["type_ids"])
            if want_mask:
                data["attention_mask"].append(padded(mask, 0) if fill else mask)
            if return_special_tokens_mask:
                data["special_tokens_mask"].append(padded(r["special"], 1) if fill else r["special"])
            if return_offsets_mapping:
                data["offset_mapping"].append(padded(r["offsets"], (0, 0)) if fill else r["offsets"])
            if return_length:
                data["length"].append(n + fill)
            if return_overflowing_tokens:
                data["overflow_to_sample_mapping"].append(i)
            metas.append({
                "tokens": padded(r["tokens"], self._special.get("pad")) if fill else r["tokens"],
                "word_ids": padded(r["word_ids"], None) if fill else r["word_ids"],
                "seq_ids": padded(r["seq_ids"], None) if fill else r["seq_ids"],
                "offsets": padded(r["offsets"], (0, 0)) if fill else r["offsets"],
            })
        if not batched and not return_overflowing_tokens:
            data = {k: v[0] for k, v in data.items()}
        return BatchEncoding(data, tensor_type=return_tensors, _meta=metas, _batched=batched or return_overflowing_tokens, _fast=self.is_fast,
                             n_sequences=2 if text_pair is not None else 1)

    def encode(self, text, text_pair=None, add_special_tokens=True, padding=False, truncation=None, max_length=None, stride=0, padding_side=None, return_tensors=None, **kwargs):
        enc = self(text, text_pair=text_pair, add_special_tokens=add_special_tokens, padding=padding, truncation=truncation, max_length=max_length,
                   stride=stride, padding_side=padding_side, return_tensors=return_tensors, **kwargs)
        return enc["input_ids"]

    def encode_plus(self, text, text_pair=None, **kwargs):
        return self(text, text_pair=text_pair, **kwargs)

    def batch_encode_plus(self, batch_text_or_text_pairs, **kwargs):
        return self(list(batch_text_or_text_pairs), **kwargs)

    def pad(self, encoded_inputs, padding=True, max_length=None, pad_to_multiple_of=None, padding_side=None, return_attention_mask=None, return_tensors=None, verbose=True):
        if isinstance(encoded_inputs, (list, tuple)) and encoded_inputs and isinstance(encoded_inputs[0], dict):
            keys = list(encoded_inputs[0].keys())
            encoded_inputs = {k: [e[k] for e in encoded_inputs] for k in keys}
        if "input_ids" not in encoded_inputs:
            raise ValueError(
                "You should supply an encoding or a list of encodings to this method that includes input_ids, but you provided %s" % list(encoded_inputs.keys())
            )
        data = {k: [(v.tolist() if hasattr(v, "tolist") else v) for v in vals] for k, vals in dict(encoded_inputs).items()}
        ids = data["input_ids"]
        if padding is True:
            padding = "longest"
        if padding in (False, "do_not_pad"):
            target = None
        elif padding == "max_length":
            target = max_length or self.model_max_length
        else:
            target = max((len(r) for r in ids if isinstance(r, list)), default=0)
        if target is not None and pad_to_multiple_of:
            target = -(-target // pad_to_multiple_of) * pad_to_multiple_of
        if target is not None and self._special.get("pad") is None:
            raise ValueError(_PAD_ERROR)
        side = padding_side or self.padding_side
        want_mask = return_attention_mask is not False and "attention_mask" in self.model_input_names
        if want_mask and "attention_mask" not in data:
            data["attention_mask"] = [[1] * len(r) if isinstance(r, list) else 1 for r in ids]
        pad_values = {"input_ids": self.pad_token_id, "attention_mask": 0, "token_type_ids": self.pad_token_type_id, "special_tokens_mask": 1}
        if target is not None:
            for k, rows in data.items():
                if k not in pad_values:
                    continue
                new = []
                for r in rows:
                    if not isinstance(r, list):
                        new.append(r)
                        continue
                    fill = max(0, target - len(r))
                    new.append(r + [pad_values[k]] * fill if side == "right" else [pad_values[k]] * fill + r)
                data[k] = new
        return BatchEncoding(data, tensor_type=return_tensors, _batched=True, _fast=self.is_fast)

    def decode(self, token_ids, skip_special_tokens=False, clean_up_tokenization_spaces=None, **kwargs):
        if hasattr(token_ids, "tolist"):
            token_ids = token_ids.tolist()
        if isinstance(token_ids, int):
            token_ids = [token_ids]
        for t in token_ids:
            if isinstance(t, list):
                raise TypeError("argument 'ids': 'list' object cannot be interpreted as an integer")
            if int(t) < 0:
                raise OverflowError("out of range integral type conversion attempted")
        toks = self.convert_ids_to_tokens([int(t) for t in token_ids], skip_special_tokens=skip_special_tokens)
        if self._backend is not None:
            decoder = getattr(self._backend, "decoder", None)
            text = decoder.decode(toks) if decoder is not None and hasattr(decoder, "decode") else " ".join(toks)
        elif self._style == "wordpiece":
            text = " ".join(toks).replace(" ##", "").replace("##", "")
        elif self._style == "bpe":
            specials = set(self.all_special_tokens)
            text = "".join(t if t in specials else t.replace("Ġ", " ") for t in toks)
        else:
            text = "".join(t.replace("▁", " ") for t in toks).strip()
        cleanup = self.clean_up_tokenization_spaces if clean_up_tokenization_spaces is None else clean_up_tokenization_spaces
        if cleanup:
            for a, b in ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"), (" 's", "'s")):
                text = text.replace(a, b)
        return text

    def batch_decode(self, sequences, skip_special_tokens=False, clean_up_tokenization_spaces=None, **kwargs):
        if hasattr(sequences, "tolist"):
            sequences = sequences.tolist()
        return [self.decode(s, skip_special_tokens=skip_special_tokens, clean_up_tokenization_spaces=clean_up_tokenization_spaces) for s in sequences]

    def apply_chat_template(self, conversation, tools=None, documents=None, chat_template=None, add_generation_prompt=False, continue_final_message=False,
                            tokenize=True, padding=False, truncation=False, max_length=None, return_tensors=None, return_dict=None,
                            return_assistant_tokens_mask=False, tokenizer_kwargs=None, **kwargs):
        if return_dict is None:
            return_dict = _v.changed("transformers-apply-chat-template-returns-batchencoding")  # 5.0: a BatchEncoding by default
        if (chat_template or self.chat_template) is None:
            raise ValueError(
                "Cannot use chat template functions because tokenizer.chat_template is not set and no template argument was passed! For "
                "information about writing templates and setting the tokenizer.chat_template attribute, please see the documentation at "
                "https://huggingface.co/docs/transformers/main/en/chat_templating"
            )
        text = self._render_template(chat_template or self.chat_template, conversation, add_generation_prompt, kwargs)
        if text is None:
            text = "".join("<|im_start|>%s\n%s<|im_end|>\n" % (m["role"], m["content"]) for m in conversation)
            if add_generation_prompt:
                text += "<|im_start|>assistant\n"
        if not tokenize:
            return text
        enc = self(text, padding=padding, truncation=truncation, max_length=max_length, return_tensors=return_tensors)
        return enc if return_dict else enc["input_ids"]

    def _render_template(self, template, conversation, add_generation_prompt, extra):
        """A Jinja chat template set by the script, rendered as transformers does (jinja2 when
        installed); None for the checkpoints' built-in ChatML stand-in."""
        if not isinstance(template, str) or "{" not in template:
            return None
        try:
            from jinja2.sandbox import ImmutableSandboxedEnvironment
        except ImportError:
            return None

        def raise_exception(message):
            raise ValueError(message)

        env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
        env.filters["tojson"] = lambda x, indent=None: json.dumps(x, indent=indent, ensure_ascii=False)
        env.globals["raise_exception"] = raise_exception
        values = dict(self.special_tokens_map)
        values.update(extra)
        return env.from_string(template).render(messages=conversation, add_generation_prompt=add_generation_prompt, **values)

    def save_pretrained(self, save_directory, legacy_format=None, filename_prefix=None, push_to_hub=False, **kwargs):
        if os.path.isfile(save_directory):
            raise OSError("Provided path (%s) should be a directory, not a file" % save_directory)
        os.makedirs(save_directory, exist_ok=True)
        cfg = {
            "tokenizer_class": type(self).__name__,
            "model_max_length": self.model_max_length,
            "padding_side": self.padding_side,
            "sim_family": self._fam_name,
            "sim_source": self.name_or_path,
            "sim_lower": self._lower,
            "sim_vocab": self._base_vocab,
            "added_tokens": self._added,
            "special_tokens": self._special,
        }
        files = []
        for fname, obj in (("tokenizer_config.json", cfg), ("special_tokens_map.json", self.special_tokens_map), ("tokenizer.json", {"version": "1.0", "model": {"type": self._style}})):
            p = os.path.join(save_directory, fname)
            with open(p, "w", encoding="utf-8") as f:
                json.dump(obj, f, indent=2, sort_keys=True)
            files.append(p)
        return tuple(files)

    def __repr__(self):
        return "%s(name_or_path='%s', vocab_size=%d, model_max_length=%d, is_fast=%s, padding_side='%s', truncation_side='%s', special_tokens=%s)" % (
            type(self).__name__, self.name_or_path, self.vocab_size, self.model_max_length, self.is_fast, self.padding_side, self.truncation_side, self.special_tokens_map)

    if not _v.changed("transformers-as-target-tokenizer-removed"):
        # Removed in 5.0 (deprecated since 4.21 in favour of text_target=).
        def as_target_tokenizer(self):
            # Warns when called (not on __enter__), so that the API layer's recorded warning replaces it.
            _warn.future(
                "`as_target_tokenizer` is deprecated and will be removed in v5 of Transformers. You can tokenize your labels by using the "
                "argument `text_target` of the regular `__call__` method (either in the same call as your input texts if you use the same "
                "keyword arguments, or in a separate call.",
                stacklevel=3,
            )
            return contextlib.nullcontext()

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, *init_inputs, cache_dir=None, force_download=False, local_files_only=False, token=None, revision="main", trust_remote_code=False, **kwargs):
        return _load_tokenizer(pretrained_model_name_or_path, cls, kwargs)


class PreTrainedTokenizerFast(PreTrainedTokenizerBase):
    is_fast = True


class PreTrainedTokenizer(PreTrainedTokenizerBase):
    is_fast = False


_TOKENIZER_CLASSES = {}


def tokenizer_class(family, fast=True):
    fam = _families.FAMILIES[family]
    prefix = {"opt": "GPT2", "llama": "GPT2"}.get(family, fam["prefix"])
    name = prefix + "Tokenizer" + ("Fast" if fast else "")
    key = (family, fast)
    if key not in _TOKENIZER_CLASSES:
        _TOKENIZER_CLASSES[key] = type(name, (PreTrainedTokenizerFast if fast else PreTrainedTokenizer,), {"_family": family, "__module__": "transformers"})
    return _TOKENIZER_CLASSES[key]


def _not_found(name):
    return OSError(
        "%s is not a local folder and is not a valid model identifier listed on 'https://huggingface.co/models'\n"
        "If this is a private repository, make sure to pass a token having permission to this repo either by logging in with "
        "`huggingface-cli login` or by passing `token=<your_token>`" % name
    )


def _load_tokenizer(name, cls, kwargs):
    name = str(name)
    if "use_auth_token" in kwargs:
        kwargs.pop("use_auth_token")
        _warn.future("The `use_auth_token` argument is deprecated and will be removed in v5 of Transformers. Please use `token` instead.", stacklevel=4)
    use_fast = kwargs.pop("use_fast", True)
    saved = None
    if os.path.isdir(name):
        p = os.path.join(name, "tokenizer_config.json")
        if not os.path.exists(p):
            raise OSError("Can't load tokenizer for '%s'. If you were trying to load it from 'https://huggingface.co/models', make sure you don't have a local directory with the same name. Otherwise, make sure '%s' is the correct path to a directory containing all relevant files for a %s tokenizer." % (name, name, cls.__name__ if cls._family else "AutoTokenizer"))
        with open(p, encoding="utf-8") as f:
            saved = json.load(f)
        family, extra = saved["sim_family"], {"lower": saved.get("sim_lower"), "vocab_size": saved.get("sim_vocab")}
        extra = {k: v for k, v in extra.items() if v is not None}
    else:
        hit = _families.resolve(name)
        if hit is None:
            if not _families.is_valid_hub_id(name):
                raise _not_found(name)
            raise _not_found(name)
        family, extra = hit
    if _families.FAMILIES[family]["style"] == "image":
        raise ValueError("Unrecognized configuration class for this kind of AutoTokenizer: %s has no tokenizer." % name)
    if cls._family is not None:
        target = cls
    else:
        fast = use_fast and cls is not PreTrainedTokenizer
        target = tokenizer_class(family, fast)
    tok = target(name_or_path=name, family=family, extra=extra, **kwargs)
    if saved:
        for t, i in saved.get("added_tokens", {}).items():
            tok._added[t] = i
            _SEEN[i] = t
        for role, t in saved.get("special_tokens", {}).items():
            tok._special[role] = t
        tok.padding_side = saved.get("padding_side", tok.padding_side)
    return tok


class AutoTokenizer:
    def __init__(self):
        raise EnvironmentError(
            "AutoTokenizer is designed to be instantiated using the `AutoTokenizer.from_pretrained(pretrained_model_name_or_path)` method."
        )

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, *inputs, **kwargs):
        for k in ("cache_dir", "force_download", "local_files_only", "token", "revision", "trust_remote_code", "config", "subfolder"):
            kwargs.pop(k, None)
        return _load_tokenizer(pretrained_model_name_or_path, PreTrainedTokenizerBase, kwargs)
