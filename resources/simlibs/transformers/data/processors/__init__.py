from .squad import SquadExample, SquadFeatures, SquadResult, SquadV1Processor, SquadV2Processor, squad_convert_examples_to_features  # noqa: F401
