"""transformers.trainer_pt_utils (simulated): get_parameter_names."""
from torch import nn


def get_parameter_names(model, forbidden_layer_types, forbidden_layer_names=None):
    forbidden_layer_names = forbidden_layer_names or []
    result = []
    for name, child in model.named_children():
        result += [
            "%s.%s" % (name, n)
            for n in get_parameter_names(child, forbidden_layer_types, forbidden_layer_names)
            if not isinstance(child, tuple(forbidden_layer_types)) and not any(f in "%s.%s" % (name, n) for f in forbidden_layer_names)
        ]
    result += [k for k, _ in model.named_parameters(recurse=False)] if hasattr(model, "named_parameters") else []
    return result


ALL_LAYERNORM_LAYERS = [nn.LayerNorm]
