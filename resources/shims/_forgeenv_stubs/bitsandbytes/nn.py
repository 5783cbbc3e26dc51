"""bitsandbytes.nn on the CPU: the layers a quantized load would have made are plain torch layers
(the no-quantization shim loads the model unquantized), so `isinstance(m, bnb.nn.Linear4bit)` holds
for its torch.nn.Linear layers, as it would have for the quantized ones."""
import torch


class _Is(type(torch.nn.Linear)):
    def __instancecheck__(cls, obj):
        return isinstance(obj, cls._torch)


class Linear8bitLt(torch.nn.Linear, metaclass=_Is):
    _torch = torch.nn.Linear

    def __init__(self, input_features, output_features, bias=True, *args, device=None, **kwargs):
        super().__init__(input_features, output_features, bias=bias, device=device)


class Linear4bit(Linear8bitLt):
    pass


LinearNF4 = LinearFP4 = Linear4bit


class StableEmbedding(torch.nn.Embedding, metaclass=_Is):
    _torch = torch.nn.Embedding

    def __init__(self, num_embeddings, embedding_dim, *args, device=None, **kwargs):
        super().__init__(num_embeddings, embedding_dim, device=device)


Embedding = StableEmbedding
