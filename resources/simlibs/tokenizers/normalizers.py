"""tokenizers.normalizers."""
import unicodedata


class Normalizer:
    def normalize_str(self, sequence):
        return sequence


class Lowercase(Normalizer):
    def normalize_str(self, sequence):
        return sequence.lower()


class NFD(Normalizer):
    def normalize_str(self, sequence):
        return unicodedata.normalize("NFD", sequence)


class NFC(Normalizer):
    def normalize_str(self, sequence):
        return unicodedata.normalize("NFC", sequence)


class NFKC(Normalizer):
    def normalize_str(self, sequence):
        return unicodedata.normalize("NFKC", sequence)


class NFKD(Normalizer):
    def normalize_str(self, sequence):
        return unicodedata.normalize("NFKD", sequence)


class StripAccents(Normalizer):
    def normalize_str(self, sequence):
        return "".join(c for c in unicodedata.normalize("NFD", sequence) if unicodedata.category(c) != "Mn")


class Strip(Normalizer):
    def __init__(self, left=True, right=True):
        self.left, self.right = left, right

    def normalize_str(self, sequence):
        if self.left:
            sequence = sequence.lstrip()
        return sequence.rstrip() if self.right else sequence


class BertNormalizer(Normalizer):
    def __init__(self, clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True):
        self.lowercase = lowercase

    def normalize_str(self, sequence):
        return sequence.lower() if self.lowercase else sequence


class Sequence(Normalizer):
    def __init__(self, normalizers):
        self.normalizers = list(normalizers)

    def normalize_str(self, sequence):
        for n in self.normalizers:
            sequence = n.normalize_str(sequence)
        return sequence
