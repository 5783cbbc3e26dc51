"""tokenizers.decoders: turn tokens back into text."""


class Decoder:
    def decode(self, tokens):
        return " ".join(tokens)


class WordPiece(Decoder):
    def __init__(self, prefix="##", cleanup=True):
        self.prefix, self.cleanup = prefix, cleanup

    def decode(self, tokens):
        out = ""
        for t in tokens:
            out += t[len(self.prefix):] if t.startswith(self.prefix) else ((" " if out else "") + t)
        return out


class ByteLevel(Decoder):
    def __init__(self, **kwargs):
        pass

    def decode(self, tokens):
        return "".join(tokens).replace("Ġ", " ")


class Metaspace(Decoder):
    def __init__(self, replacement="▁", prepend_scheme="always", split=True):
        self.replacement, self.prepend_scheme, self.split = replacement, prepend_scheme, split

    def decode(self, tokens):
        text = "".join(tokens).replace(self.replacement, " ")
        return text[1:] if text.startswith(" ") and self.prepend_scheme != "never" else text


class BPEDecoder(Decoder):
    def __init__(self, suffix="</w>"):
        self.suffix = suffix

    def decode(self, tokens):
        return "".join(t.replace(self.suffix, " ") for t in tokens).strip()


class Sequence(Decoder):
    def __init__(self, decoders):
        self.decoders = list(decoders)
