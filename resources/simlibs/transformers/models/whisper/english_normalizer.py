"""Whisper's BasicTextNormalizer: lower-case, drop bracketed text and symbols, collapse spaces."""
import re
import unicodedata


def remove_symbols(s):
    return "".join(" " if unicodedata.category(c)[0] in "MSP" else c for c in unicodedata.normalize("NFKC", s))


class BasicTextNormalizer:
    def __init__(self, remove_diacritics=False, split_letters=False):
        self.clean = remove_symbols
        self.split_letters = split_letters

    def __call__(self, s):
        s = s.lower()
        s = re.sub(r"[<\[][^>\]]*[>\]]", "", s)
        s = re.sub(r"\(([^)]+?)\)", "", s)
        s = self.clean(s).lower()
        return re.sub(r"\s+", " ", s)
