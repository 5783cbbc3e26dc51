"""datasets.features: Value, ClassLabel, Sequence, Image, Features."""
from _forgeenv_sim import versions as _v


class Value:
    def __init__(self, dtype, id=None):
        self.dtype = dtype
        self.id = id

    def __repr__(self):
        return "Value(dtype='%s', id=None)" % self.dtype

    def __eq__(self, other):
        return isinstance(other, Value) and other.dtype == self.dtype


class ClassLabel:
    def __init__(self, num_classes=None, names=None, names_file=None, id=None):
        if names is None and num_classes is None:
            raise ValueError("Please provide either num_classes or names")
        self.names = list(names) if names is not None else [str(i) for i in range(num_classes)]
        self.num_classes = len(self.names)
        self.dtype = "int64"
        self.id = id

    def int2str(self, values):
        if isinstance(values, (list, tuple)):
            return [self.int2str(v) for v in values]
        if not 0 <= int(values) < self.num_classes:
            raise ValueError("Invalid integer class label %s" % values)
        return self.names[int(values)]

    def str2int(self, values):
        if isinstance(values, (list, tuple)):
            return [self.str2int(v) for v in values]
        if values not in self.names:
            raise ValueError("Invalid string class label %s" % values)
        return self.names.index(values)

    def __repr__(self):
        return "ClassLabel(names=%r, id=None)" % (self.names,)

    def __eq__(self, other):
        return isinstance(other, ClassLabel) and other.names == self.names


class Sequence:
    def __new__(cls, feature=None, length=-1, id=None):
        # datasets >= 4.0: Sequence(feature) builds a List (dict features keep the old type here).
        if cls is Sequence and not isinstance(feature, dict) and _v.changed("datasets-sequence-feature-becomes-list"):
            return object.__new__(List)
        return object.__new__(cls)

    def __init__(self, feature, length=-1, id=None):
        self.feature = feature
        self.length = length
        self.id = id

    def __repr__(self):
        return "Sequence(feature=%r, length=%d, id=None)" % (self.feature, self.length)


class List(Sequence):
    """datasets >= 4.0's list feature (the names it exists under come from the API data)."""

    def __repr__(self):
        return "List(%r%s)" % (self.feature, "" if self.length == -1 else ", length=%d" % self.length)


class Image:
    def __init__(self, mode=None, decode=True, id=None):
        self.mode, self.decode, self.id = mode, decode, id

    def __repr__(self):
        return "Image(mode=None, decode=True, id=None)"


class Audio:
    def __init__(self, sampling_rate=None, mono=True, decode=True, id=None):
        self.sampling_rate, self.mono, self.decode, self.id = sampling_rate, mono, decode, id

    def __repr__(self):
        return "Audio(sampling_rate=%r, mono=%r, decode=%r, id=None)" % (self.sampling_rate, self.mono, self.decode)


class Features(dict):
    def __repr__(self):
        return "{%s}" % ", ".join("%r: %r" % kv for kv in self.items())

    def copy(self):
        return Features(self)


def from_spec(spec):
    kind = spec[0]
    if kind == "class":
        return ClassLabel(names=spec[1])
    if kind == "seq":
        return Sequence(from_spec(spec[1]))
    if kind == "seqdict":
        return Sequence({k: from_spec(v) for k, v in spec[1].items()})
    if kind == "image":
        return Image()
    if kind == "audio":
        return Audio(sampling_rate=spec[1])
    return Value(kind)


def infer(values):
    """The feature the real library would infer from Python values."""
    for v in values:
        if v is None:
            continue
        if isinstance(v, bool):
            return Value("bool")
        if isinstance(v, int):
            return Value("int64")
        if isinstance(v, float):
            return Value("float64")
        if isinstance(v, str):
            return Value("string")
        if isinstance(v, (list, tuple)):
            inner = infer([x for row in values if row for x in row][:64])
            return Sequence(inner if inner is not None else Value("null"))
        if isinstance(v, dict):
            return {k: infer([row.get(k) for row in values if row]) for k in v}
        if type(v).__name__ == "Image":
            return Image()
        return Value("string")
    return Value("null")
