"""A minimal writer/reader of the real safetensors format (header length, JSON header, raw data)."""
import json
import struct


def save(tensors, path, metadata=None):
    """`tensors`: name -> (shape, flat list of floats). Written as little-endian F32."""
    header = {}
    blobs = []
    offset = 0
    for name in sorted(tensors):
        shape, data = tensors[name]
        blob = struct.pack("<%df" % len(data), *data)
        header[name] = {"dtype": "F32", "shape": list(shape), "data_offsets": [offset, offset + len(blob)]}
        offset += len(blob)
        blobs.append(blob)
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)


def load(path):
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n].decode("utf-8"))
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        count = (end - start) // 4
        out[name] = (tuple(info["shape"]), list(struct.unpack("<%df" % count, raw[base + start : base + end])))
    return out
