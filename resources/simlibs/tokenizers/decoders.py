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
    def __init__(self, replacement="▁", **kwargs):
        from .pre_tokenizers import check_keywords

        check_keywords("decoders", "Metaspace", kwargs)
        self.replacement = replacement
        self.add_prefix_space = kwargs.get("add_prefix_space", True)
        self.prepend_scheme = kwargs.get("prepend_scheme", "always" if self.add_prefix_space else "never")
        self.split = kwargs.get("split", True)

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
