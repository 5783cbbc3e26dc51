"""Stand-in nltk (ForgeEnv fallback): download() is a no-op and sent_tokenize splits on sentence ends."""
import re

__version__ = "3.8.1"


def download(info_or_id=None, download_dir=None, quiet=False, **kwargs):
    return True


def sent_tokenize(text, language="english"):
    return [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s]


def word_tokenize(text, language="english", preserve_line=False):
    return re.findall(r"\w+|[^\w\s]", text)


class _Tokenize:
    sent_tokenize = staticmethod(sent_tokenize)
    word_tokenize = staticmethod(word_tokenize)


tokenize = _Tokenize()
