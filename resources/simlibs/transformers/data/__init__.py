"""transformers.data (simulated): the SQuAD processors and metrics of the legacy examples."""
from .processors.squad import SquadExample, SquadFeatures, SquadV1Processor, SquadV2Processor, squad_convert_examples_to_features  # noqa: F401
