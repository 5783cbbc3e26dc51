from torch import nn

ALL_LAYERNORM_LAYERS = [nn.LayerNorm]
