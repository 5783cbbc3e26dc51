"""torchvision.transforms (simulated): geometry is recorded lazily on the image; ToTensor samples
3 x SIM_RES x SIM_RES values (see transformers/image_processing.py)."""
import enum

import torch

SIM_RES = 8


class InterpolationMode(enum.Enum):
    NEAREST = "nearest"
    NEAREST_EXACT = "nearest-exact"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"
    BOX = "box"
    HAMMING = "hamming"
    LANCZOS = "lanczos"


def _size(size):
    return (size, size) if isinstance(size, int) else tuple(size)


class Compose:
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img


class _Geometry:
    def __init__(self, size, *args, **kwargs):
        self.size = _size(size)

    def __call__(self, img):
        if isinstance(img, torch.Tensor):
            return img
        h, w = self.size
        return img.resize((w, h))


class Resize(_Geometry):
    def __init__(self, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=True):
        super().__init__(size)


class CenterCrop(_Geometry):
    pass


class RandomResizedCrop(_Geometry):
    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0), interpolation=InterpolationMode.BILINEAR, antialias=True):
        super().__init__(size)


class RandomCrop(_Geometry):
    def __init__(self, size, padding=None, pad_if_needed=False, fill=0, padding_mode="constant"):
        super().__init__(size)


class _Identity:
    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, img):
        return img


class RandomHorizontalFlip(_Identity):
    pass


class RandomVerticalFlip(_Identity):
    pass


class ColorJitter(_Identity):
    pass


class RandomRotation(_Identity):
    pass


class Lambda:
    def __init__(self, lambd):
        self.lambd = lambd

    def __call__(self, img):
        return self.lambd(img)


class ToTensor:
    def __call__(self, pic):
        if isinstance(pic, torch.Tensor):
            return pic
        img = pic if pic.mode in ("RGB", "L") else pic.convert("RGB")
        w, h = img.size
        ch = 3 if img.mode == "RGB" else 1
        vals = []
        for c in range(ch):
            for y in range(SIM_RES):
                for x in range(SIM_RES):
                    v = img.getpixel((x * w // SIM_RES, y * h // SIM_RES))
                    vals.append((v[c] if isinstance(v, tuple) else v) / 255.0)
        return torch.tensor(vals).reshape(ch, SIM_RES, SIM_RES)


class PILToTensor(ToTensor):
    pass


class Normalize:
    def __init__(self, mean, std, inplace=False):
        self.mean, self.std = list(mean), list(std)

    def __call__(self, t):
        c = t.shape[0]
        if len(self.mean) not in (1, c):
            raise ValueError("mean must have %d elements if it is an iterable, got %d" % (c, len(self.mean)))
        n = len(t.data) // c
        out = [(v - self.mean[i // n % len(self.mean)]) / self.std[i // n % len(self.std)] for i, v in enumerate(t.data)]
        return torch.tensor(out).reshape(*t.shape)


class ToPILImage:
    def __init__(self, mode=None):
        self.mode = mode

    def __call__(self, pic):
        from _forgeenv_sim.imaging import Image

        c, h, w = pic.shape
        data = pic.data
        return Image("RGB", (w, h), lambda x, y: tuple(int(255 * data[k * h * w + y * w + x]) for k in range(3)))
