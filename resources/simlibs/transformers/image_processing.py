"""Simulated image processors. Output pixel_values are 3 x SIM_RES x SIM_RES whatever `size` says
(a real ViT processor gives 3 x 224 x 224; pure Python cannot afford that)."""
import json
import os

import torch

from _forgeenv_sim import warn as _warn

from . import _families

SIM_RES = 8


class BatchFeature(dict):
    def __init__(self, data=None, tensor_type=None):
        super().__init__(data or {})

    def __getattr__(self, item):
        try:
            return self[item]
        except KeyError:
            raise AttributeError(item) from None

    def to(self, *args, **kwargs):
        return self


class BaseImageProcessor:
    model_input_names = ["pixel_values"]

    def __init__(self, do_resize=True, size=None, resample=2, do_rescale=True, rescale_factor=1 / 255, do_normalize=True, image_mean=None, image_std=None, do_convert_rgb=None, **kwargs):
        self.do_resize, self.size, self.resample = do_resize, size or {"height": 224, "width": 224}, resample
        self.do_rescale, self.rescale_factor, self.do_normalize = do_rescale, rescale_factor, do_normalize
        self.image_mean = image_mean or [0.5, 0.5, 0.5]
        self.image_std = image_std or [0.5, 0.5, 0.5]
        self.do_convert_rgb = do_convert_rgb

    def _pixels(self, img):
        if hasattr(img, "getpixel"):
            if img.mode != "RGB":
                if self.do_convert_rgb:
                    img = img.convert("RGB")
                else:
                    raise ValueError("mean must have 1 elements if it is an iterable, got 3")
            w, h = img.size
            vals = []
            for c in range(3):
                for y in range(SIM_RES):
                    for x in range(SIM_RES):
                        vals.append(img.getpixel((x * w // SIM_RES, y * h // SIM_RES))[c])
            return vals
        if isinstance(img, torch.Tensor):
            t = img
            if t.dim() == 3 and t.shape[-1] == 3:
                t = t.permute(2, 0, 1)
            if t.dim() != 3 or t.shape[0] != 3:
                raise ValueError("Unable to infer channel dimension format")
            h, w = t.shape[1], t.shape[2]
            return [t.data[c * h * w + (y * h // SIM_RES) * w + (x * w // SIM_RES)] for c in range(3) for y in range(SIM_RES) for x in range(SIM_RES)]
        raise ValueError(
            "Invalid image type. Must be of type PIL.Image.Image, numpy.ndarray, torch.Tensor, tf.Tensor or jax.ndarray."
        )

    def preprocess(self, images, do_resize=None, size=None, resample=None, do_rescale=None, rescale_factor=None, do_normalize=None, image_mean=None,
                   image_std=None, return_tensors=None, data_format="channels_first", input_data_format=None, do_convert_rgb=None, **kwargs):
        if kwargs:
            _warn.log("Unused or unrecognized kwargs: %s." % ", ".join(kwargs))
        single = not isinstance(images, (list, tuple))
        imgs = [images] if single else list(images)
        rescale = self.do_rescale if do_rescale is None else do_rescale
        norm = self.do_normalize if do_normalize is None else do_normalize
        out = []
        for img in imgs:
            vals = self._pixels(img)
            n = SIM_RES * SIM_RES
            res = []
            for c in range(3):
                for v in vals[c * n : (c + 1) * n]:
                    x = float(v) * (self.rescale_factor if rescale else 1.0)
                    if norm:
                        x = (x - self.image_mean[c]) / self.image_std[c]
                    res.append(x)
            out.append(torch.Tensor._make(res, (3, SIM_RES, SIM_RES), torch.float32))
        if return_tensors in ("pt", "np"):
            return BatchFeature({"pixel_values": torch.stack(out)})
        return BatchFeature({"pixel_values": out})

    def __call__(self, images, **kwargs):
        return self.preprocess(images, **kwargs)

    def save_pretrained(self, save_directory, push_to_hub=False, **kwargs):
        os.makedirs(save_directory, exist_ok=True)
        with open(os.path.join(save_directory, "preprocessor_config.json"), "w", encoding="utf-8") as f:
            json.dump({"image_processor_type": type(self).__name__, "size": self.size, "image_mean": self.image_mean, "image_std": self.image_std}, f, indent=2)

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, **kwargs):
        return _load(pretrained_model_name_or_path, kwargs)


class ViTImageProcessor(BaseImageProcessor):
    pass


ViTImageProcessorFast = type("ViTImageProcessorFast", (ViTImageProcessor,), {})
ViTFeatureExtractor = type("ViTFeatureExtractor", (ViTImageProcessor,), {})


def _load(name, kwargs):
    name = str(name)
    if "use_auth_token" in kwargs:
        kwargs.pop("use_auth_token")
        _warn.future("The `use_auth_token` argument is deprecated and will be removed in v5 of Transformers. Please use `token` instead.", stacklevel=4)
    for k in ("cache_dir", "force_download", "local_files_only", "token", "revision", "trust_remote_code", "use_fast"):
        kwargs.pop(k, None)
    if os.path.isdir(name):
        if not os.path.exists(os.path.join(name, "preprocessor_config.json")):
            raise OSError("Can't load image processor for '%s'. Make sure that the path is a directory containing a preprocessor_config.json file" % name)
        return ViTImageProcessor(**kwargs)
    hit = _families.resolve(name)
    if hit is None:
        raise OSError("%s is not a local folder and is not a valid model identifier listed on 'https://huggingface.co/models'" % name)
    if _families.FAMILIES[hit[0]]["style"] != "image":
        raise OSError("Can't load image processor for '%s'. %s does not appear to have a file named preprocessor_config.json." % (name, name))
    return ViTImageProcessor(**kwargs)


class AutoImageProcessor:
    def __init__(self):
        raise EnvironmentError("AutoImageProcessor is designed to be instantiated using the `AutoImageProcessor.from_pretrained(pretrained_model_name_or_path)` method.")

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, *inputs, **kwargs):
        return _load(pretrained_model_name_or_path, kwargs)


AutoFeatureExtractor = type("AutoFeatureExtractor", (AutoImageProcessor,), {})
