import torch


class Linear8bitLt(torch.nn.Linear):
    def __init__(self, input_features, output_features, bias=True, has_fp16_weights=True, threshold=0.0, index=None, device=None):
        super().__init__(input_features, output_features, bias=bias)


class Linear4bit(torch.nn.Linear):
    def __init__(self, input_features, output_features, bias=True, compute_dtype=None, compress_statistics=True, quant_type="fp4", quant_storage=None, device=None):
        super().__init__(input_features, output_features, bias=bias)


class Embedding(torch.nn.Embedding):
    pass


StableEmbedding = Embedding
