"""tokenizers.pre_tokenizers: split a string into (word, (start, end)) pieces."""
import re


def check_keywords(module, cls_name, kwargs):
    """The Rust classes take their recorded attributes as constructor keywords (the API data lists
    them): another keyword is pyo3's TypeError, worded as the real release words it."""
    try:
        from _forgeenv_sim import surface_data

        obj = surface_data.find_object("tokenizers.%s.%s" % (module, cls_name))
    except Exception:  # noqa: BLE001 - no data: accept
        return
    known = set((obj or {}).get("attributes") or ())
    if not known:
        return
    for k in kwargs:
        if k not in known:
            raise TypeError("%s.__new__() got an unexpected keyword argument '%s'" % (cls_name, k))


class PreTokenizer:
    _pattern = re.compile(r"\S+")

    def pre_tokenize_str(self, sequence):
        return [(m.group(0), (m.start(), m.end())) for m in self._pattern.finditer(sequence)]


class Whitespace(PreTokenizer):
    _pattern = re.compile(r"\w+|[^\w\s]+")


class WhitespaceSplit(PreTokenizer):
    pass


class BertPreTokenizer(PreTokenizer):
    _pattern = re.compile(r"\w+|[^\w\s]")


class Punctuation(PreTokenizer):
    _pattern = re.compile(r"[^\W_]+|\s+|[^\w\s]|_")

    def __init__(self, behavior="isolated"):
        self.behavior = behavior


class Digits(PreTokenizer):
    _pattern = re.compile(r"\d|\D+")

    def __init__(self, individual_digits=False):
        self.individual_digits = individual_digits


class ByteLevel(PreTokenizer):
    def __init__(self, add_prefix_space=True, trim_offsets=True, use_regex=True):
        self.add_prefix_space, self.trim_offsets, self.use_regex = add_prefix_space, trim_offsets, use_regex

    def pre_tokenize_str(self, sequence):
        out = []
        for i, m in enumerate(re.finditer(r"\S+", sequence)):
            spaced = m.start() > 0 and sequence[m.start() - 1].isspace()
            out.append((("Ġ" if spaced or (i == 0 and self.add_prefix_space) else "") + m.group(0), (m.start(), m.end())))
        return out

    @staticmethod
    def alphabet():
        return [chr(c) for c in range(33, 127)]


class Metaspace(PreTokenizer):
    def __init__(self, replacement="▁", **kwargs):
        # tokenizers < 0.19: add_prefix_space (and prepend_scheme from 0.15); >= 0.19: prepend_scheme, split.
        check_keywords("pre_tokenizers", "Metaspace", kwargs)
        self.replacement = replacement
        self.add_prefix_space = kwargs.get("add_prefix_space", True)
        self.prepend_scheme = kwargs.get("prepend_scheme", "always" if self.add_prefix_space else "never")
        self.split = kwargs.get("split", True)

    def pre_tokenize_str(self, sequence):
        text = sequence.replace(" ", self.replacement)
        if self.prepend_scheme != "never" and not text.startswith(self.replacement):
            text = self.replacement + text
        if not self.split:
            return [(text, (0, len(sequence)))]
        return [(m.group(0), (max(m.start() - 1, 0), m.end() - 1)) for m in re.finditer(re.escape(self.replacement) + r"[^" + re.escape(self.replacement) + r"]*", text)]


class CharDelimiterSplit(PreTokenizer):
    def __init__(self, delimiter):
        self.delimiter = delimiter
        self._pattern = re.compile(r"[^" + re.escape(delimiter) + r"]+")


class Split(PreTokenizer):
    def __init__(self, pattern, behavior, invert=False):
        self.pattern, self.behavior, self.invert = pattern, behavior, invert
        self._pattern = re.compile(r"[^\s]+")


class Sequence(PreTokenizer):
    def __init__(self, pretokenizers):
        self.pretokenizers = list(pretokenizers)

    def pre_tokenize_str(self, sequence):
        pieces = [(sequence, (0, len(sequence)))]
        for p in self.pretokenizers:
            nxt = []
            for w, (s, _e) in pieces:
                nxt.extend((x, (s + a, s + b)) for x, (a, b) in p.pre_tokenize_str(w))
            pieces = nxt
        return pieces
