"""Extractive question answering on SQuAD with ALBERT: answer spans mapped to token positions through
the tokenizer's offset mapping, then fine-tuned with the Trainer API."""
from datasets import load_dataset
from transformers import AutoModelForQuestionAnswering, AutoTokenizer, DefaultDataCollator, Trainer, TrainingArguments

MODEL_NAME = "albert-base-v2"
MAX_LENGTH = 96

squad = load_dataset("squad")
tokenizer = AutoTokenizer.from_pretrained(MODEL_NAME)


def preprocess(examples):
    questions = [q.strip() for q in examples["question"]]
    inputs = tokenizer(
        questions,
        examples["context"],
        max_length=MAX_LENGTH,
        truncation="only_second",
        return_offsets_mapping=True,
        padding="max_length",
    )
    offset_mapping = inputs.pop("offset_mapping")
    start_positions, end_positions = [], []
    for i, offsets in enumerate(offset_mapping):
        answer = examples["answers"][i]
        start_char = answer["answer_start"][0]
        end_char = start_char + len(answer["text"][0])
        sequence_ids = inputs.sequence_ids(i)
        context_start = sequence_ids.index(1)
        context_end = len(sequence_ids) - 1 - sequence_ids[::-1].index(1)
        if offsets[context_start][0] > start_char or offsets[context_end][1] < end_char:
            start_positions.append(0)
            end_positions.append(0)
            continue
        idx = context_start
        while idx <= context_end and offsets[idx][0] <= start_char:
            idx += 1
        start_positions.append(idx - 1)
        idx = context_end
        while idx >= context_start and offsets[idx][1] >= end_char:
            idx -= 1
        end_positions.append(idx + 1)
    inputs["start_positions"] = start_positions
    inputs["end_positions"] = end_positions
    return inputs


train_set = squad["train"].map(preprocess, batched=True, remove_columns=squad["train"].column_names)
eval_set = squad["validation"].map(preprocess, batched=True, remove_columns=squad["validation"].column_names)


def compute_metrics(eval_pred):
    (start_logits, end_logits), (start_labels, end_labels) = eval_pred.predictions, eval_pred.label_ids
    start_pred = start_logits.argmax(axis=-1)
    end_pred = end_logits.argmax(axis=-1)
    exact = ((start_pred == start_labels) & (end_pred == end_labels)).mean()
    return {"span_accuracy": float(exact), "start_accuracy": float((start_pred == start_labels).mean())}


model = AutoModelForQuestionAnswering.from_pretrained(MODEL_NAME)
training_args = TrainingArguments(
    output_dir="./albert-squad",
    eval_strategy="epoch",
    save_strategy="no",
    learning_rate=3e-5,
    per_device_train_batch_size=8,
    per_device_eval_batch_size=16,
    num_train_epochs=2,
    weight_decay=0.01,
    logging_steps=4,
    report_to="none",
)
trainer = Trainer(
    model=model,
    args=training_args,
    train_dataset=train_set,
    eval_dataset=eval_set,
    processing_class=tokenizer,
    data_collator=DefaultDataCollator(),
    compute_metrics=compute_metrics,
)
trainer.train()
metrics = trainer.evaluate()
print(f"eval_span_accuracy={metrics['eval_span_accuracy']:.4f}")
print(f"eval_start_accuracy={metrics['eval_start_accuracy']:.4f}")
trainer.save_model("./albert-squad/final")
print("TRAINING_COMPLETE")
