"""tokenizers.trainers: collect a vocabulary (special tokens first, then words by frequency)."""
import collections


class Trainer:
    _chars = True  # sub-word trainers start from the alphabet; WordLevel keeps whole words only

    def __init__(self, vocab_size=30000, min_frequency=0, show_progress=True, special_tokens=None, **kwargs):
        self.vocab_size, self.min_frequency, self.show_progress = vocab_size, min_frequency, show_progress
        self.special_tokens = list(special_tokens or [])
        for k, v in kwargs.items():
            setattr(self, k, v)

    def special_tokens_as_str(self):
        return [str(t) for t in self.special_tokens]

    def fit(self, model, words):
        counts = collections.Counter(words)
        chars = collections.Counter(c for w in words for c in w)
        specials = self.special_tokens_as_str()
        vocab = list(specials)
        ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        char_list = sorted(c for c in chars if c not in vocab) if self._chars else []
        budget = max(self.vocab_size - len(vocab), 0)
        for c in char_list[:budget]:
            vocab.append(c)
        for w, n in ranked:
            if len(vocab) >= self.vocab_size:
                break
            if n >= max(self.min_frequency, 1) and w not in vocab:
                vocab.append(w)
        model.vocab = {t: i for i, t in enumerate(vocab)}


class WordLevelTrainer(Trainer):
    _chars = False


class BpeTrainer(Trainer):
    pass


class WordPieceTrainer(Trainer):
    pass


class UnigramTrainer(Trainer):
    def __init__(self, vocab_size=8000, show_progress=True, special_tokens=None, unk_token=None, **kwargs):
        super().__init__(vocab_size=vocab_size, show_progress=show_progress, special_tokens=special_tokens, **kwargs)
        self.unk_token = unk_token
