"""A stand-in for the few PIL.Image methods that dataset rows and image processors use.

Pixels are computed lazily from (label, seed, position), so that building a dataset of images is
cheap and processors that sample a few pixels stay fast.
"""


def _rgb(v):
    return v[:3] if isinstance(v, tuple) else (v,) * 3


class Image:
    def __init__(self, mode, size, fn=None, pixels=None):
        self.mode = mode
        self.size = tuple(size)
        self._fn = fn
        self._pixels = pixels
        self.format = "PNG"

    @property
    def width(self):
        return self.size[0]

    @property
    def height(self):
        return self.size[1]

    @property
    def channels(self):
        return {"RGB": 3, "RGBA": 4}.get(self.mode, 1)

    def getpixel(self, xy):
        x, y = xy
        if self._pixels is not None:
            v = self._pixels[y * self.size[0] + x]
        else:
            v = self._fn(x, y)
        return v

    def getdata(self):
        if self._pixels is None:
            w, h = self.size
            self._pixels = [self._fn(x, y) for y in range(h) for x in range(w)]
        return list(self._pixels)

    def convert(self, mode):
        if mode == self.mode:
            return self
        src = self
        if mode == "RGBA":
            return Image("RGBA", self.size, lambda x, y: tuple(_rgb(src.getpixel((x, y)))) + (255,))
        if mode == "RGB" and self.mode == "RGBA":
            return Image("RGB", self.size, lambda x, y: tuple(src.getpixel((x, y))[:3]))
        if mode == "RGB":
            return Image("RGB", self.size, lambda x, y: (src.getpixel((x, y)),) * 3)
        if mode == "L":
            return Image("L", self.size, lambda x, y: sum(src.getpixel((x, y))) // 3)
        raise ValueError("conversion from %s to %s not supported" % (self.mode, mode))

    def resize(self, size, resample=None, box=None, reducing_gap=None):
        w, h = self.size
        nw, nh = size
        src = self
        return Image(self.mode, (nw, nh), lambda x, y: src.getpixel((x * w // nw, y * h // nh)))

    def copy(self):
        return self

    def __repr__(self):
        return "<PIL.PngImagePlugin.PngImageFile image mode=%s size=%dx%d>" % (self.mode, self.size[0], self.size[1])
