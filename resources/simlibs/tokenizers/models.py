"""tokenizers.models: vocabularies (sub-word merging simplified: whole word if known, else characters)."""


class Model:
    prefix = ""

    def __init__(self, vocab=None, unk_token=None):
        self.vocab = dict(vocab or {})
        self.unk_token = unk_token

    def inverse(self):
        return {i: t for t, i in self.vocab.items()}

    def tokenize_word(self, word, start):
        if word in self.vocab:
            return [(word, (start, start + len(word)))]
        pieces = []
        for j, ch in enumerate(word):
            t = ch if (j == 0 or not self.prefix) else self.prefix + ch
            pieces.append((t if t in self.vocab else None, (start + j, start + j + 1)))
        if pieces and all(p is not None for p, _ in pieces):
            return pieces
        return [(self.unk_token, (start, start + len(word)))] if self.unk_token else []

    def tokenize(self, sequence):
        return [_Token(self.vocab.get(t), t, span) for t, span in self.tokenize_word(sequence, 0)]

    def token_to_id(self, token):
        return self.vocab.get(token)

    def id_to_token(self, id):  # noqa: A002
        return self.inverse().get(id)

    def get_trainer(self):
        return self.default_trainer()

    def default_trainer(self):
        from . import trainers

        return trainers.WordLevelTrainer()


class _Token:
    def __init__(self, id, value, offsets):  # noqa: A002
        self.id, self.value, self.offsets = id, value, offsets


class WordLevel(Model):
    def __init__(self, vocab=None, unk_token=None):
        super().__init__(vocab, unk_token)

    @staticmethod
    def read_file(vocab):
        with open(vocab, encoding="utf-8") as f:
            import json

            return json.load(f)

    @classmethod
    def from_file(cls, vocab, unk_token=None):
        return cls(cls.read_file(vocab), unk_token)


class WordPiece(Model):
    prefix = "##"

    def __init__(self, vocab=None, unk_token="[UNK]", max_input_chars_per_word=100, continuing_subword_prefix="##"):
        super().__init__(vocab, unk_token)
        self.prefix = continuing_subword_prefix
        self.max_input_chars_per_word = max_input_chars_per_word

    def default_trainer(self):
        from . import trainers

        return trainers.WordPieceTrainer()


class BPE(Model):
    def __init__(self, vocab=None, merges=None, cache_capacity=None, dropout=None, unk_token=None, continuing_subword_prefix=None,
                 end_of_word_suffix=None, fuse_unk=None, byte_fallback=False, ignore_merges=False):
        super().__init__(vocab, unk_token)
        self.merges = list(merges or [])
        self.prefix = continuing_subword_prefix or ""
        self.dropout, self.fuse_unk, self.byte_fallback = dropout, fuse_unk, byte_fallback

    def default_trainer(self):
        from . import trainers

        return trainers.BpeTrainer()


class Unigram(Model):
    def __init__(self, vocab=None, unk_id=None, byte_fallback=False):
        pairs = list(vocab or [])
        super().__init__({t: i for i, (t, _score) in enumerate(pairs)}, pairs[unk_id][0] if unk_id is not None and pairs else None)

    def default_trainer(self):
        from . import trainers

        return trainers.UnigramTrainer()
