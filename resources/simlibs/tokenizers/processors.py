"""tokenizers.processors: special tokens around an encoding."""


class PostProcessor:
    def process(self, encoding, tokenizer):
        return encoding


class TemplateProcessing(PostProcessor):
    def __init__(self, single=None, pair=None, special_tokens=None):
        self.single = single.split() if isinstance(single, str) else list(single or ["$A"])
        self.pair, self.special_tokens = pair, list(special_tokens or [])

    def process(self, encoding, tokenizer):
        from . import Encoding

        ids, toks, offs, wids, special = [], [], [], [], []
        for piece in self.single:
            name = piece.split(":")[0]
            if name in ("$A", "$0", "$"):
                ids += encoding.ids
                toks += encoding.tokens
                offs += encoding.offsets
                wids += encoding.word_ids
                special += [0] * len(encoding.ids)
            else:
                tid = dict((t, i) for t, i in self.special_tokens).get(name, tokenizer.token_to_id(name))
                ids.append(tid)
                toks.append(name)
                offs.append((0, 0))
                wids.append(None)
                special.append(1)
        return Encoding(ids, toks, offs, wids, special=special)


class BertProcessing(TemplateProcessing):
    def __init__(self, sep, cls):
        super().__init__("%s $A %s" % (cls[0], sep[0]), None, [cls, sep])


class RobertaProcessing(BertProcessing):
    def __init__(self, sep, cls, trim_offsets=True, add_prefix_space=True):
        super().__init__(sep, cls)


class ByteLevel(PostProcessor):
    def __init__(self, trim_offsets=True):
        self.trim_offsets = trim_offsets
