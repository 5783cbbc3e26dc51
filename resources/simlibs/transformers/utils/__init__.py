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
