from .. import LoraConfig, LoraLayer  # noqa: F401
from .._more import AdaLoraConfig, PrefixTuningConfig, PromptEncoderConfig, PromptTuningConfig  # noqa: F401
