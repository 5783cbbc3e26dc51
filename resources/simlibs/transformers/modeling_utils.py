from .modeling import PreTrainedModel  # noqa: F401
