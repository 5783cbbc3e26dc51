"""Small deterministic synthetic stand-ins for the Hub datasets the corpus uses.

Each builder returns {split: (columns, features_spec)}; `datasets` turns that into a DatasetDict.
Column names, feature types, label names and splits follow the real datasets; the rows are made
up (a few dozen per split) and are the same on every run.
"""
import random

from .hashing import stable_hash
from .imaging import Image

N_TRAIN, N_EVAL = 64, 32

POS = ["great", "wonderful", "charming", "brilliant", "moving", "delightful", "superb", "funny", "warm", "gripping"]
NEG = ["dull", "boring", "clumsy", "awful", "tedious", "bland", "messy", "weak", "lifeless", "predictable"]
NEUTRAL = [
    "the", "film", "movie", "story", "a", "with", "its", "cast", "plot", "and", "director", "this", "is", "of",
    "performance", "script", "scenes", "music", "an", "ending", "characters", "camera", "pace", "in", "at", "all",
]
TOPIC = [
    "city", "council", "market", "river", "school", "energy", "report", "team", "season", "government", "company",
    "research", "village", "festival", "museum", "election", "weather", "hospital", "bridge", "library", "harbor",
]
VERBS = ["announced", "opened", "reported", "approved", "visited", "expanded", "closed", "launched", "studied", "won"]
NAMES = {
    "PER": ["John", "Maria", "Chen", "Fatima", "Lukas", "Aiko", "Pedro", "Olga"],
    "ORG": ["Reuters", "Siemens", "UNICEF", "Acme", "Interpol", "Fifa"],
    "LOC": ["Paris", "Kenya", "Ohio", "Berlin", "Lima", "Osaka", "Cairo"],
    "MISC": ["German", "Olympic", "Christmas", "Nobel", "Euro"],
}
NER_NAMES = ["O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC", "B-MISC", "I-MISC"]
CIFAR_NAMES = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"]


def _rng(*parts):
    return random.Random(stable_hash(*parts))


def _sentiment_text(rng, label, n_words, end=" "):
    lex = POS if label == 1 else NEG
    words = [rng.choice(NEUTRAL) for _ in range(n_words)]
    for _ in range(1 + rng.randrange(2)):
        words.insert(rng.randrange(len(words) + 1), rng.choice(lex))
    return " ".join(words) + end


def _splits(spec):
    return {name: n for name, n in spec}


def sst2(split_sizes, test_unlabelled=True):
    out = {}
    for split, n in split_sizes.items():
        rng = _rng("sst2", split)
        rows = {"sentence": [], "label": [], "idx": []}
        for i in range(n):
            label = rng.randrange(2)
            rows["sentence"].append(_sentiment_text(rng, label, 4 + rng.randrange(6)))
            rows["label"].append(-1 if split == "test" and test_unlabelled else label)
            rows["idx"].append(i)
        out[split] = (rows, {"sentence": ("string",), "label": ("class", ["negative", "positive"]), "idx": ("int32",)})
    return out


def sentiment_text(name, split_sizes, label_names=("neg", "pos"), unlabelled=()):
    out = {}
    for split, n in split_sizes.items():
        rng = _rng(name, split)
        rows = {"text": [], "label": []}
        for _ in range(n):
            label = rng.randrange(2)
            sentences = [_sentiment_text(rng, label, 6 + rng.randrange(8), end=".") for _ in range(2 + rng.randrange(3))]
            rows["text"].append(" ".join(s[0].upper() + s[1:] for s in sentences))
            rows["label"].append(-1 if split in unlabelled else label)
        out[split] = (rows, {"text": ("string",), "label": ("class", list(label_names))})
    return out


def topic_text(name, split_sizes, label_names):
    out = {}
    k = len(label_names)
    for split, n in split_sizes.items():
        rng = _rng(name, split)
        rows = {"text": [], "label": []}
        for _ in range(n):
            label = rng.randrange(k)
            words = [rng.choice(TOPIC) for _ in range(8 + rng.randrange(8))]
            words.insert(rng.randrange(len(words)), TOPIC[label % len(TOPIC)])
            rows["text"].append(" ".join(words) + ".")
            rows["label"].append(label)
        out[split] = (rows, {"text": ("string",), "label": ("class", list(label_names))})
    return out


def glue_pair(config, split_sizes, a="sentence1", b="sentence2", names=("not_equivalent", "equivalent")):
    out = {}
    for split, n in split_sizes.items():
        rng = _rng("glue", config, split)
        rows = {a: [], b: [], "label": [], "idx": []}
        for i in range(n):
            label = rng.randrange(len(names))
            s1 = " ".join(rng.choice(TOPIC) for _ in range(6 + rng.randrange(5)))
            s2 = s1 if label == len(names) - 1 else " ".join(rng.choice(TOPIC) for _ in range(6 + rng.randrange(5)))
            rows[a].append(s1.capitalize() + " " + rng.choice(VERBS) + ".")
            rows[b].append(s2.capitalize() + " " + rng.choice(VERBS) + ".")
            rows["label"].append(-1 if split == "test" else label)
            rows["idx"].append(i)
        out[split] = (rows, {a: ("string",), b: ("string",), "label": ("class", list(names)), "idx": ("int32",)})
    return out


def cola(split_sizes):
    out = sst2(split_sizes)
    for split, (rows, feats) in out.items():
        feats["label"] = ("class", ["unacceptable", "acceptable"])
    return out


def conll2003(split_sizes):
    out = {}
    for split, n in split_sizes.items():
        rng = _rng("conll2003", split)
        rows = {"id": [], "tokens": [], "pos_tags": [], "chunk_tags": [], "ner_tags": []}
        for i in range(n):
            tokens, tags = [], []
            for _ in range(3 + rng.randrange(3)):
                if rng.random() < 0.4:
                    kind = rng.choice(list(NAMES))
                    parts = [rng.choice(NAMES[kind])] + ([rng.choice(NAMES[kind])] if rng.random() < 0.3 else [])
                    for j, p in enumerate(parts):
                        tokens.append(p)
                        tags.append(NER_NAMES.index(("B-" if j == 0 else "I-") + kind))
                else:
                    w = rng.choice(TOPIC + VERBS + ["the", "in", "of", "said"])
                    tokens.append(w)
                    tags.append(0)
            tokens.append(".")
            tags.append(0)
            rows["id"].append(str(i))
            rows["tokens"].append(tokens)
            rows["ner_tags"].append(tags)
            rows["pos_tags"].append([7 if t == "." else 22 for t in tokens])
            rows["chunk_tags"].append([0 if t == "." else 11 for t in tokens])
        out[split] = (
            rows,
            {
                "id": ("string",),
                "tokens": ("seq", ("string",)),
                "pos_tags": ("seq", ("int32",)),
                "chunk_tags": ("seq", ("int32",)),
                "ner_tags": ("seq", ("class", NER_NAMES)),
            },
        )
    return out


def squad(split_sizes, v2=False):
    out = {}
    for split, n in split_sizes.items():
        rng = _rng("squad", v2, split)
        rows = {"id": [], "title": [], "context": [], "question": [], "answers": []}
        for i in range(n):
            place = rng.choice(NAMES["LOC"])
            who = rng.choice(NAMES["PER"])
            what = rng.choice(TOPIC)
            verb = rng.choice(VERBS)
            filler = " ".join(rng.choice(TOPIC) for _ in range(4 + rng.randrange(6)))
            context = "In %s, the %s was %s by %s after a long debate. Locals mentioned the %s." % (place, what, verb, who, filler)
            if rng.random() < 0.5:
                question, answer = "Who %s the %s in %s?" % (verb.replace("ed", ""), what, place), who
            else:
                question, answer = "Where was the %s %s?" % (what, verb), place
            start = context.index(answer)
            unanswerable = v2 and rng.random() < 0.25
            rows["id"].append("%024x" % stable_hash("squad", split, i))
            rows["title"].append(place)
            rows["context"].append(context)
            rows["question"].append(question)
            rows["answers"].append({"text": [] if unanswerable else [answer], "answer_start": [] if unanswerable else [start]})
        out[split] = (
            rows,
            {
                "id": ("string",),
                "title": ("string",),
                "context": ("string",),
                "question": ("string",),
                "answers": ("seqdict", {"text": ("string",), "answer_start": ("int32",)}),
            },
        )
    return out


def summarization(name, split_sizes, doc="article", summ="highlights", id_col="id"):
    out = {}
    for split, n in split_sizes.items():
        rng = _rng(name, split)
        rows = {doc: [], summ: [], id_col: []}
        for i in range(n):
            place = rng.choice(NAMES["LOC"])
            subject = rng.choice(TOPIC)
            verb = rng.choice(VERBS)
            lead = "The %s of %s %s a new plan on Monday ." % (subject, place, verb)
            body = " ".join(
                "%s %s %s the %s ." % (rng.choice(["Officials", "Residents", "Experts", "Reporters"]), rng.choice(VERBS), rng.choice(["that", "how", "why"]), rng.choice(TOPIC))
                for _ in range(3 + rng.randrange(4))
            )
            rows[doc].append("%s (CNN) -- %s %s" % (place.upper(), lead, body))
            rows[summ].append("%s %s %s a new plan ." % (place, subject, verb))
            rows[id_col].append("%040x" % stable_hash(name, split, i))
        out[split] = (rows, {doc: ("string",), summ: ("string",), id_col: ("string",)})
    return out


def wikitext(split_sizes):
    out = {}
    for split, n in split_sizes.items():
        rng = _rng("wikitext", split)
        rows = {"text": []}
        for i in range(n):
            r = i % 8
            if r == 0:
                rows["text"].append("")
            elif r == 1:
                rows["text"].append(" = %s %s = \n" % (rng.choice(NAMES["LOC"]), rng.choice(TOPIC)))
            else:
                words = [rng.choice(TOPIC + VERBS + NEUTRAL) for _ in range(12 + rng.randrange(16))]
                rows["text"].append(" " + " ".join(words) + " . \n")
        out[split] = (rows, {"text": ("string",)})
    return out


def instruction(name, split_sizes):
    out = {}
    for split, n in split_sizes.items():
        rng = _rng(name, split)
        rows = {"text": []}
        for _ in range(n):
            topic = rng.choice(TOPIC)
            q = "What can you tell me about the %s in %s?" % (topic, rng.choice(NAMES["LOC"]))
            a = "The %s %s a %s program ." % (topic, rng.choice(VERBS), rng.choice(TOPIC))
            rows["text"].append("### Human: %s### Assistant: %s" % (q, a))
        out[split] = (rows, {"text": ("string",)})
    return out


def alpaca(split_sizes):
    out = {}
    for split, n in split_sizes.items():
        rng = _rng("alpaca", split)
        rows = {"instruction": [], "input": [], "output": [], "text": []}
        for _ in range(n):
            ins = "Describe the %s." % rng.choice(TOPIC)
            res = "The %s %s a %s ." % (rng.choice(TOPIC), rng.choice(VERBS), rng.choice(TOPIC))
            rows["instruction"].append(ins)
            rows["input"].append("")
            rows["output"].append(res)
            rows["text"].append("Below is an instruction that describes a task.\n\n### Instruction:\n%s\n\n### Response:\n%s" % (ins, res))
        out[split] = (rows, {k: ("string",) for k in rows})
    return out


def _mnist_pattern(label):
    r = random.Random(stable_hash("mnist-proto", label))
    return [r.random() < 0.45 for _ in range(49)]


def digits(name, split_sizes):
    patterns = [_mnist_pattern(k) for k in range(10)]
    out = {}
    for split, n in split_sizes.items():
        rng = _rng(name, split)
        rows = {"image": [], "label": []}
        for i in range(n):
            label = rng.randrange(10)
            seed = stable_hash(name, split, i)
            pat = patterns[label]

            def fn(x, y, pat=pat, seed=seed):
                noise = ((x * 73856093) ^ (y * 19349663) ^ seed) % 41
                return 190 + noise if pat[(y // 4) * 7 + x // 4] else noise

            rows["image"].append(Image("L", (28, 28), fn))
            rows["label"].append(label)
        out[split] = (rows, {"image": ("image",), "label": ("class", [str(d) for d in range(10)])})
    return out


def cifar10(split_sizes):
    out = {}
    for split, n in split_sizes.items():
        rng = _rng("cifar10", split)
        rows = {"img": [], "label": []}
        for i in range(n):
            label = rng.randrange(10)
            seed = stable_hash("cifar10", split, i)

            def fn(x, y, label=label, seed=seed):
                base = (label * 25 + (x + y) * 3) % 256
                noise = ((x * 2654435761) ^ (y * 40503) ^ seed) % 32
                return ((base + noise) % 256, (base * 2 + noise) % 256, (255 - base + noise) % 256)

            rows["img"].append(Image("RGB", (32, 32), fn))
            rows["label"].append(label)
        out[split] = (rows, {"img": ("image",), "label": ("class", CIFAR_NAMES)})
    return out


S3 = {"train": N_TRAIN, "validation": N_EVAL, "test": N_EVAL}
S2 = {"train": N_TRAIN, "test": N_EVAL}
S2V = {"train": N_TRAIN, "validation": N_EVAL}

GLUE_CONFIGS = ["ax", "cola", "mnli", "mnli_matched", "mnli_mismatched", "mrpc", "qnli", "qqp", "rte", "sst2", "stsb", "wnli"]
WIKITEXT_CONFIGS = ["wikitext-103-raw-v1", "wikitext-103-v1", "wikitext-2-raw-v1", "wikitext-2-v1"]
CNN_CONFIGS = ["1.0.0", "2.0.0", "3.0.0"]

# canonical name -> (configs or None, builder(config) -> splits)
BUILDERS = {
    "glue": (GLUE_CONFIGS, lambda c: {
        "sst2": lambda: sst2(S3),
        "cola": lambda: cola(S3),
        "mrpc": lambda: glue_pair("mrpc", S3),
        "rte": lambda: glue_pair("rte", S3, names=("entailment", "not_entailment")),
        "qnli": lambda: glue_pair("qnli", S3, a="question", b="sentence", names=("entailment", "not_entailment")),
    }.get(c, lambda: None)()),
    "sst2": (None, lambda c: sst2(S3)),
    "imdb": (None, lambda c: sentiment_text("imdb", {"train": N_TRAIN, "test": N_EVAL, "unsupervised": 16}, unlabelled=("unsupervised",))),
    "rotten_tomatoes": (None, lambda c: sentiment_text("rotten_tomatoes", S3)),
    "yelp_polarity": (None, lambda c: sentiment_text("yelp_polarity", S2, ("1", "2"))),
    "emotion": (None, lambda c: topic_text("emotion", S3, ["sadness", "joy", "love", "anger", "fear", "surprise"])),
    "ag_news": (None, lambda c: topic_text("ag_news", S2, ["World", "Sports", "Business", "Sci/Tech"])),
    "conll2003": (None, lambda c: conll2003(S3)),
    "squad": (None, lambda c: squad(S2V)),
    "squad_v2": (None, lambda c: squad(S2V, v2=True)),
    "cnn_dailymail": (CNN_CONFIGS, lambda c: summarization("cnn_dailymail", S3)),
    "xsum": (None, lambda c: summarization("xsum", S3, doc="document", summ="summary")),
    "wikitext": (WIKITEXT_CONFIGS, lambda c: wikitext(S3)),
    "mnist": (None, lambda c: digits("mnist", S2)),
    "fashion_mnist": (None, lambda c: digits("fashion_mnist", S2)),
    "cifar10": (None, lambda c: cifar10(S2)),
    "openassistant-guanaco": (None, lambda c: instruction("guanaco", S2)),
    "alpaca": (None, lambda c: alpaca({"train": N_TRAIN})),
}

# Hub repository ids (and old canonical names) -> canonical name
ALIASES = {
    "nyu-mll/glue": "glue",
    "stanfordnlp/sst2": "sst2",
    "stanfordnlp/imdb": "imdb",
    "cornell-movie-review-data/rotten_tomatoes": "rotten_tomatoes",
    "fancyzhx/yelp_polarity": "yelp_polarity",
    "dair-ai/emotion": "emotion",
    "fancyzhx/ag_news": "ag_news",
    "eriktks/conll2003": "conll2003",
    "rajpurkar/squad": "squad",
    "rajpurkar/squad_v2": "squad_v2",
    "abisee/cnn_dailymail": "cnn_dailymail",
    "EdinburghNLP/xsum": "xsum",
    "Salesforce/wikitext": "wikitext",
    "ylecun/mnist": "mnist",
    "zalando-datasets/fashion_mnist": "fashion_mnist",
    "uoft-cs/cifar10": "cifar10",
    "timdettmers/openassistant-guanaco": "openassistant-guanaco",
    "tatsu-lab/alpaca": "alpaca",
}
