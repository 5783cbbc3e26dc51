from .modeling import (  # noqa: F401
    BaseModelOutput,
    CausalLMOutputWithCrossAttentions,
    CausalLMOutputWithPast,
    ImageClassifierOutput,
    MaskedLMOutput,
    ModelOutput,
    QuestionAnsweringModelOutput,
    Seq2SeqLMOutput,
    SequenceClassifierOutput,
    TokenClassifierOutput,
)
