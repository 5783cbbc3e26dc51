"""transformers.utils (simulated): logging and a few availability probes."""
from . import logging


def is_torch_available():
    return True


def is_datasets_available():
    return True


def is_peft_available():
    return True


def is_accelerate_available():
    return True


def is_bitsandbytes_available():
    return False


def is_flash_attn_2_available():
    return False


# --- what example scripts import from transformers.utils --------------------------------------
from enum import Enum as _Enum  # noqa: E402


class ExplicitEnum(str, _Enum):
    @classmethod
    def _missing_(cls, value):
        raise ValueError("%r is not a valid %s, please select one of %s" % (value, cls.__name__, list(cls._value2member_map_.keys())))


class PaddingStrategy(ExplicitEnum):
    LONGEST = "longest"
    MAX_LENGTH = "max_length"
    DO_NOT_PAD = "do_not_pad"


class TensorType(ExplicitEnum):
    PYTORCH = "pt"
    TENSORFLOW = "tf"
    NUMPY = "np"
    JAX = "jax"


def is_liger_kernel_available():
    return False


def is_torch_bf16_gpu_available():
    return False


def is_torch_bf16_cpu_available():
    return True


def is_torch_tpu_available(check_device=True):
    return False


def is_torch_xla_available(check_is_tpu=False, check_is_gpu=False):
    return False


def is_wandb_available():
    return False


def is_tensorboard_available():
    return False


def is_sagemaker_mp_enabled():
    return False


def is_offline_mode():
    return True


def check_min_version(min_version):
    from _forgeenv_sim import versions as _v

    if _v.below("transformers", min_version.split(".dev")[0]):
        raise ImportError(
            "This example requires a source install from HuggingFace Transformers (see `https://huggingface.co/docs/transformers/installation#install-from-source`), "
            "but the version found is %s.\nCheck out https://github.com/huggingface/transformers/tree/main/examples#important-note for the examples corresponding "
            "to other versions of HuggingFace Transformers." % _v.version("transformers")
        )


def send_example_telemetry(example_name, *example_args, framework="pytorch"):
    return None


def get_full_repo_name(model_id, organization=None, token=None):
    return "%s/%s" % (organization or "user", model_id)


def cached_file(path_or_repo_id, filename, **kwargs):
    return None


WEIGHTS_NAME = "pytorch_model.bin"
SAFE_WEIGHTS_NAME = "model.safetensors"
CONFIG_NAME = "config.json"
