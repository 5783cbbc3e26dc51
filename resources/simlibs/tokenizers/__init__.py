"""Simulated `tokenizers` (ForgeEnv): enough of the Rust library to build a small tokenizer in a script
(Tokenizer over WordLevel/WordPiece/BPE/Unigram vocabularies, pre-tokenizers, trainers that collect a
vocabulary by frequency) and hand it to transformers' PreTrainedTokenizerFast(tokenizer_object=...).
Sub-word merging is simplified: a word is one token when the vocabulary has it, else its characters."""
import json as _json

from _forgeenv_sim import versions as _v

from . import decoders, models, normalizers, pre_tokenizers, processors, trainers  # noqa: F401

__version__ = _v.ACTIVE.get("tokenizers", "0.21.1")


class AddedToken:
    def __init__(self, content="", single_word=False, lstrip=False, rstrip=False, normalized=True, special=False):
        self.content, self.single_word, self.lstrip, self.rstrip = content, single_word, lstrip, rstrip
        self.normalized, self.special = normalized, special

    def __str__(self):
        return self.content

    def __repr__(self):
        return "AddedToken(%r, rstrip=%s, lstrip=%s, single_word=%s, normalized=%s, special=%s)" % (
            self.content, self.rstrip, self.lstrip, self.single_word, self.normalized, self.special)


class Encoding:
    def __init__(self, ids, tokens, offsets, word_ids, type_ids=None, special=None):
        self.ids, self.tokens, self.offsets = ids, tokens, offsets
        self.word_ids = word_ids
        self.words = word_ids
        self.type_ids = type_ids if type_ids is not None else [0] * len(ids)
        self.attention_mask = [1] * len(ids)
        self.special_tokens_mask = special if special is not None else [0] * len(ids)
        self.overflowing = []
        self.n_sequences = 1

    def __len__(self):
        return len(self.ids)

    def __repr__(self):
        return "Encoding(num_tokens=%d, attributes=[ids, type_ids, tokens, offsets, attention_mask, special_tokens_mask, overflowing])" % len(self.ids)


class Tokenizer:
    def __init__(self, model):
        self.model = model
        self.normalizer = None
        self.pre_tokenizer = None
        self.post_processor = None
        self.decoder = None
        self.padding = None
        self.truncation = None
        self._added = {}  # content -> (id, special)

    # -- vocabulary --
    def get_vocab(self, with_added_tokens=True):
        v = dict(self.model.vocab)
        if with_added_tokens:
            v.update({t: i for t, (i, _) in self._added.items()})
        return v

    def get_vocab_size(self, with_added_tokens=True):
        return len(self.get_vocab(with_added_tokens))

    def token_to_id(self, token):
        if token in self._added:
            return self._added[token][0]
        return self.model.vocab.get(token)

    def id_to_token(self, id):  # noqa: A002 - the real parameter name
        for t, (i, _) in self._added.items():
            if i == id:
                return t
        return self.model.inverse().get(id)

    def _add(self, tokens, special):
        n = 0
        for t in tokens:
            t = str(t)
            if self.token_to_id(t) is None:
                self._added[t] = (len(self.model.vocab) + len(self._added), special)
                n += 1
            elif t in self._added and special:
                self._added[t] = (self._added[t][0], True)
        return n

    def add_tokens(self, tokens):
        return self._add(tokens, False)

    def add_special_tokens(self, tokens):
        return self._add(tokens, True)

    # -- encoding --
    def _split(self, text):
        if self.normalizer is not None:
            text = self.normalizer.normalize_str(text)
        if self.pre_tokenizer is not None:
            return self.pre_tokenizer.pre_tokenize_str(text)
        return [(text, (0, len(text)))] if text else []

    def encode(self, sequence, pair=None, is_pretokenized=False, add_special_tokens=True):
        ids, toks, offs, wids = [], [], [], []
        words = [(w, (0, len(w))) for w in sequence] if is_pretokenized else self._split(sequence)
        for wi, (w, (s, _e)) in enumerate(words):
            if w in self._added:
                pieces = [(w, (s, s + len(w)))]
            else:
                pieces = self.model.tokenize_word(w, s)
            for p, span in pieces:
                tid = self.token_to_id(p)
                if tid is None:
                    continue
                ids.append(tid)
                toks.append(p)
                offs.append(span)
                wids.append(wi)
        enc = Encoding(ids, toks, offs, wids)
        if add_special_tokens and self.post_processor is not None:
            enc = self.post_processor.process(enc, self)
        return enc

    def encode_batch(self, inputs, is_pretokenized=False, add_special_tokens=True):
        return [self.encode(x, is_pretokenized=is_pretokenized, add_special_tokens=add_special_tokens) for x in inputs]

    def decode(self, ids, skip_special_tokens=True):
        specials = {i for t, (i, sp) in self._added.items() if sp}
        toks = [self.id_to_token(i) for i in ids if not (skip_special_tokens and i in specials)]
        toks = [t for t in toks if t is not None]
        if self.decoder is not None:
            return self.decoder.decode(toks)
        return " ".join(toks)

    def decode_batch(self, sequences, skip_special_tokens=True):
        return [self.decode(s, skip_special_tokens) for s in sequences]

    def enable_padding(self, direction="right", pad_id=0, pad_type_id=0, pad_token="[PAD]", length=None, pad_to_multiple_of=None):
        self.padding = {"direction": direction, "pad_id": pad_id, "pad_token": pad_token, "length": length}

    def no_padding(self):
        self.padding = None

    def enable_truncation(self, max_length, stride=0, strategy="longest_first", direction="right"):
        self.truncation = {"max_length": max_length, "stride": stride, "strategy": strategy, "direction": direction}

    def no_truncation(self):
        self.truncation = None

    # -- training and files --
    def train_from_iterator(self, iterator, trainer=None, length=None):
        trainer = trainer or self.model.default_trainer()
        texts = []
        for item in iterator:
            texts.extend([item] if isinstance(item, str) else list(item))
        words = [w for t in texts for w, _ in self._split(t)]
        trainer.fit(self.model, words)
        self._added = {}
        self._add(trainer.special_tokens_as_str(), True)
        # Real trainers put the special tokens first in the model's vocabulary.
        ordered = trainer.special_tokens_as_str() + [t for t in self.model.vocab if t not in trainer.special_tokens_as_str()]
        self.model.vocab = {t: i for i, t in enumerate(ordered)}
        self._added = {t: (self.model.vocab[t], True) for t in trainer.special_tokens_as_str()}

    def train(self, files, trainer=None):
        def lines():
            for path in files:
                with open(path, encoding="utf-8") as f:
                    for line in f:
                        yield line.rstrip("\n")

        self.train_from_iterator(lines(), trainer)

    def to_str(self, pretty=False):
        data = {"version": "1.0", "added_tokens": [{"id": i, "content": t, "special": sp} for t, (i, sp) in sorted(self._added.items(), key=lambda kv: kv[1][0])],
                "model": {"type": type(self.model).__name__, "vocab": self.model.vocab, "unk_token": getattr(self.model, "unk_token", None)},
                "pre_tokenizer": None if self.pre_tokenizer is None else {"type": type(self.pre_tokenizer).__name__}}
        return _json.dumps(data, indent=2 if pretty else None, ensure_ascii=False)

    def save(self, path, pretty=True):
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.to_str(pretty))

    @staticmethod
    def from_str(json):
        data = _json.loads(json)
        m = data.get("model") or {}
        cls = getattr(models, m.get("type") or "WordLevel", models.WordLevel)
        tok = Tokenizer(cls(vocab=dict(m.get("vocab") or {}), unk_token=m.get("unk_token")))
        pt = (data.get("pre_tokenizer") or {}).get("type")
        if pt and hasattr(pre_tokenizers, pt):
            tok.pre_tokenizer = getattr(pre_tokenizers, pt)()
        for a in data.get("added_tokens") or []:
            tok._added[a["content"]] = (a["id"], bool(a.get("special")))
        return tok

    @staticmethod
    def from_file(path):
        with open(path, encoding="utf-8") as f:
            return Tokenizer.from_str(f.read())

    @staticmethod
    def from_pretrained(identifier, revision="main", token=None):
        raise Exception("Model \"%s\" on the Hub doesn't have a tokenizer" % identifier)


__all__ = ["AddedToken", "Encoding", "Tokenizer", "decoders", "models", "normalizers", "pre_tokenizers", "processors", "trainers"]
