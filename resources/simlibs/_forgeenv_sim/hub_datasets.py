"""More Hub datasets for the simulated `load_dataset`: each id maps to its real column names and
splits, built by a small schema-driven generator (rows are made up and deterministic). Ids not in
any table but spelled like a Hub id (`owner/name`) get a `text,label` default."""
from .hashing import stable_hash
from .imaging import Image
from .synthetic import N_EVAL, N_TRAIN, NAMES, TOPIC, VERBS, _rng

ROLES = ("user", "assistant")


def _sentence(rng):
    return "The %s of %s %s a %s ." % (rng.choice(TOPIC), rng.choice(NAMES["LOC"]), rng.choice(VERBS), rng.choice(TOPIC))


def _question(rng):
    return "What happened to the %s in %s?" % (rng.choice(TOPIC), rng.choice(NAMES["LOC"]))


def _audio(rng, seed, rate=48000):
    n = (rate // 10) * (2 + rng.randrange(3))  # 0.2-0.4 s
    return {"path": "clip_%08x.mp3" % (seed % (1 << 32)), "array": [((seed >> (i % 16)) % 200 - 100) / 1000.0 for i in range(n)], "sampling_rate": rate}


def _image(label, seed, size=(32, 32)):
    def fn(x, y, label=label, seed=seed):
        base = (label * 37 + (x + y) * 3) % 256
        noise = ((x * 2654435761) ^ (y * 40503) ^ seed) % 32
        return ((base + noise) % 256, (base * 2 + noise) % 256, (255 - base + noise) % 256)

    return Image("RGB", size, fn)


UF_MODELS = ("gpt-3.5-turbo", "llama-2-7b-chat", "llama-2-70b-chat", "falcon-40b-instruct")


def _value(kind, rng, seed, i):
    """One cell: (python value, feature spec)."""
    if kind == "text":
        return " ".join(_sentence(rng) for _ in range(1 + rng.randrange(2))), ("string",)
    if kind == "long_text":  # the preferred answer of synthetic preference pairs: longer than "text"
        return " ".join(_sentence(rng) for _ in range(3 + rng.randrange(2))), ("string",)
    if kind == "question":
        return _question(rng), ("string",)
    if kind == "id":
        return "%016x" % (seed % (1 << 64)), ("string",)
    if kind == "int":
        return rng.randrange(100), ("int64",)
    if kind == "float":
        return rng.random(), ("float64",)
    if kind == "bool":
        return bool(i % 2), ("bool",)
    if kind == "uf_models":
        return list(UF_MODELS), ("seq", ("string",))
    if kind == "uf_completions":
        return [{"model": m, "response": _sentence(rng), "annotations": {a: {"Rating": str(1 + (i + j + len(a)) % 5), "Rationale": "simulated"}
                 for a in ("helpfulness", "honesty", "instruction_following", "truthfulness")}} for j, m in enumerate(UF_MODELS)], None
    if kind == "car_label":
        return i % 4, ("class", ["AM General Hummer SUV 2000", "Acura RL Sedan 2012", "Acura TL Sedan 2012", "Acura TL Type-S 2008"])
    if kind == "label2":
        return i % 2, ("class", ["neg", "pos"])
    if kind == "messages":
        q = _question(rng)
        return [{"role": "user", "content": q}, {"role": "assistant", "content": _sentence(rng)}], None
    if kind == "prompt_msgs":
        return [{"role": "user", "content": _question(rng)}], None
    if kind == "completion_msgs":
        return [{"role": "assistant", "content": _sentence(rng)}], None
    if kind == "gsm8k_answer":
        a, b = rng.randrange(2, 20), rng.randrange(2, 20)
        return "They have %d and %d more, so %d + %d = <<%d+%d=%d>>%d.\n#### %d" % (a, b, a, b, a, b, a + b, a + b, a + b), ("string",)
    if kind == "math_problem":
        a, b = rng.randrange(2, 20), rng.randrange(2, 20)
        return "What is %d + %d?" % (a, b), ("string",)
    if kind == "math_solution":
        return "Adding gives $\\boxed{%d}$." % rng.randrange(4, 40), ("string",)
    if kind == "image":
        return _image(i % 4, seed), ("image",)
    if kind == "images":
        return [_image(i % 4, seed)], None
    if kind == "audio":  # Common Voice ships 48 kHz mp3s
        return _audio(rng, seed), ("audio", 48000)
    if kind == "tags":
        return [rng.choice(TOPIC) for _ in range(2)], ("seq", ("string",))
    if kind == "dialogue":
        a, b = rng.choice(NAMES["PER"]), rng.choice(NAMES["PER"])
        return "%s: %s\r\n%s: %s" % (a, _question(rng), b, _sentence(rng)), ("string",)
    if kind == "caption":
        return "A %s pokemon with %s eyes." % (rng.choice(["red", "blue", "green", "yellow"]), rng.choice(["big", "small"])), ("string",)
    if kind == "ground_truth":
        return '{"gt_parse": {"menu": {"nm": "%s", "price": "%d"}}}' % (rng.choice(TOPIC), rng.randrange(100)), ("string",)
    raise ValueError(kind)


def schema(name, columns, splits):
    def build(config=None):
        out = {}
        for split, n in splits.items():
            rng = _rng(name, split)
            rows = {c: [] for c in columns}
            spec = {}
            for i in range(n):
                seed = stable_hash(name, split, i)
                for col, kind in columns.items():
                    v, s = _value(kind, rng, seed, i)
                    rows[col].append(v)
                    if s is not None:
                        spec[col] = s
            out[split] = (rows, spec)
        return out

    return build


S_TRAIN = {"train": N_TRAIN}
S_TT = {"train": N_TRAIN, "test": N_EVAL}
S_TV = {"train": N_TRAIN, "validation": N_EVAL}
S_TVT = {"train": N_TRAIN, "validation": N_EVAL, "test": N_EVAL}

# id -> (configs or None, builder). Columns follow the real datasets.
TABLE = {
    "lvwerra/stack-exchange-paired": (None, schema("stack-exchange-paired", {"qid": "int", "question": "question", "date": "id", "metadata": "tags", "response_j": "long_text", "response_k": "text"}, S_TRAIN)),
    "trl-internal-testing/hh-rlhf-helpful-base-trl-style": (None, schema("hh-rlhf-trl", {"chosen": "messages", "rejected": "messages", "prompt": "question"}, S_TT)),
    "trl-lib/ultrafeedback_binarized": (None, schema("ultrafeedback_binarized", {"chosen": "messages", "rejected": "messages", "score_chosen": "float", "score_rejected": "float"}, S_TT)),
    "openbmb/UltraFeedback": (None, schema("UltraFeedback", {"source": "id", "instruction": "question", "models": "uf_models", "completions": "uf_completions", "correct_answers": "tags", "incorrect_answers": "tags"}, S_TRAIN)),
    "trl-lib/kto-mix-14k": (None, schema("kto-mix-14k", {"prompt": "prompt_msgs", "completion": "completion_msgs", "label": "bool"}, S_TT)),
    "trl-lib/tldr": (None, schema("tldr", {"prompt": "text", "completion": "text"}, S_TVT)),
    "trl-lib/tldr-preference": (None, schema("tldr-preference", {"prompt": "text", "chosen": "text", "rejected": "text"}, S_TVT)),
    "AI-MO/NuminaMath-TIR": (None, schema("NuminaMath-TIR", {"problem": "math_problem", "solution": "math_solution", "messages": "messages"}, S_TT)),
    "HuggingFaceH4/llava-instruct-mix-vsft": (None, schema("llava-instruct-mix-vsft", {"messages": "messages", "images": "images"}, S_TT)),
    "trl-lib/llava-instruct-mix": (None, schema("llava-instruct-mix", {"images": "images", "prompt": "prompt_msgs", "completion": "completion_msgs"}, S_TT)),
    "trl-internal-testing/descriptiveness-sentiment-trl-style": (None, lambda c: {
        k: v for k, v in schema("descriptiveness", {"prompt": "question", "chosen": "messages", "rejected": "messages"}, {"descriptiveness": 160, "sentiment": 160})(c).items()}),
    "mozilla-foundation/common_voice_11_0": (None, schema("common_voice_11", {"client_id": "id", "path": "id", "audio": "audio", "sentence": "text", "up_votes": "int", "down_votes": "int", "age": "id", "gender": "id", "accent": "id", "locale": "id", "segment": "id"}, {"train": N_TRAIN, "validation": N_EVAL, "test": N_EVAL, "other": 8, "invalidated": 8})),
    "common_voice": (None, schema("common_voice", {"client_id": "id", "path": "id", "audio": "audio", "sentence": "text", "up_votes": "int", "down_votes": "int", "age": "id", "gender": "id", "accent": "id", "locale": "id", "segment": "id"}, {"train": N_TRAIN, "validation": N_EVAL, "test": N_EVAL, "other": 8, "invalidated": 8})),
    "samsum": (None, schema("samsum", {"id": "id", "dialogue": "dialogue", "summary": "text"}, S_TVT)),
    "Abirate/english_quotes": (None, schema("english_quotes", {"quote": "text", "author": "id", "tags": "tags"}, S_TRAIN)),
    "yahma/alpaca-cleaned": (None, schema("alpaca-cleaned", {"output": "text", "input": "text", "instruction": "question"}, S_TRAIN)),
    "gsm8k": (["main", "socratic"], schema("gsm8k", {"question": "math_problem", "answer": "gsm8k_answer"}, S_TT)),
    "GabeHD/pokemon-type-captions": (None, schema("pokemon-type-captions", {"image": "image", "text": "caption"}, S_TRAIN)),
    # The real row count: scripts select(range(10000)) from it.
    "philschmid/dolly-15k-oai-style": (None, schema("dolly-15k-oai-style", {"messages": "messages"}, {"train": 15011})),
    "naver-clova-ix/cord-v2": (None, schema("cord-v2", {"image": "image", "ground_truth": "ground_truth"}, S_TVT)),
    "tanganke/stanford_cars": (None, schema("stanford_cars", {"image": "image", "label": "car_label"}, S_TT)),
    "ought/raft": (["twitter_complaints", "ade_corpus_v2", "banking_77"], schema("raft", {"Tweet text": "text", "ID": "int", "Label": "label2"}, S_TT)),
    "Anthropic/hh-rlhf": (None, schema("hh-rlhf", {"chosen": "text", "rejected": "text"}, S_TT)),
    "HuggingFaceH4/ultrachat_200k": (None, schema("ultrachat_200k", {"prompt": "question", "prompt_id": "id", "messages": "messages"}, {"train_sft": N_TRAIN, "test_sft": N_EVAL})),
}
ALIASES = {
    "openai/gsm8k": "gsm8k",
    "knkarthick/samsum": "samsum",
    "Samsung/samsum": "samsum",
}

DEFAULT = schema("default", {"text": "text", "label": "label2"}, S_TT)


def lookup(path):
    """(configs, builder) for a Hub id, or None when the simulation should report it missing."""
    path = ALIASES.get(path, path)
    if path in TABLE:
        return TABLE[path]
    if "/" in path and not path.startswith((".", "/")):
        return (None, DEFAULT)
    return None
