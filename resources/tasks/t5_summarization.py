"""Abstractive summarisation of CNN/DailyMail articles with T5: text_target tokenisation, a seq2seq
collator, generation during evaluation and ROUGE, using Seq2SeqTrainer."""
import evaluate
from datasets import load_dataset
from transformers import (
    AutoModelForSeq2SeqLM,
    AutoTokenizer,
    DataCollatorForSeq2Seq,
    Seq2SeqTrainer,
    Seq2SeqTrainingArguments,
)

CHECKPOINT = "t5-small"
PREFIX = "summarize: "
MAX_INPUT_LENGTH = 96
MAX_TARGET_LENGTH = 24

raw = load_dataset("cnn_dailymail", "3.0.0")
tokenizer = AutoTokenizer.from_pretrained(CHECKPOINT)
model = AutoModelForSeq2SeqLM.from_pretrained(CHECKPOINT)


def preprocess_function(examples):
    inputs = [PREFIX + article for article in examples["article"]]
    model_inputs = tokenizer(inputs, max_length=MAX_INPUT_LENGTH, truncation=True)
    labels = tokenizer(text_target=examples["highlights"], max_length=MAX_TARGET_LENGTH, truncation=True)
    model_inputs["labels"] = labels["input_ids"]
    return model_inputs


tokenized = raw.map(preprocess_function, batched=True, remove_columns=["article", "highlights", "id"])
data_collator = DataCollatorForSeq2Seq(tokenizer=tokenizer, model=model)
rouge = evaluate.load("rouge")


def compute_metrics(eval_pred):
    predictions, labels = eval_pred
    # generated ids are padded with -100 across batches; labels use -100 for padding
    pad = tokenizer.pad_token_id
    predictions = [[t if t != -100 else pad for t in row] for row in predictions.tolist()]
    labels = [[t if t != -100 else pad for t in row] for row in labels.tolist()]
    decoded_preds = tokenizer.batch_decode(predictions, skip_special_tokens=True)
    decoded_labels = tokenizer.batch_decode(labels, skip_special_tokens=True)
    result = rouge.compute(predictions=decoded_preds, references=decoded_labels, use_stemmer=True)
    lengths = [sum(1 for t in row if t != pad) for row in predictions]
    result["gen_len"] = sum(lengths) / len(lengths)
    return {k: round(v, 4) for k, v in result.items()}


training_args = Seq2SeqTrainingArguments(
    output_dir="./t5-summarization",
    eval_strategy="epoch",
    save_strategy="no",
    learning_rate=5e-5,
    per_device_train_batch_size=8,
    per_device_eval_batch_size=16,
    weight_decay=0.01,
    num_train_epochs=2,
    predict_with_generate=True,
    generation_max_length=MAX_TARGET_LENGTH,
    logging_steps=2,
    report_to="none",
)
trainer = Seq2SeqTrainer(
    model=model,
    args=training_args,
    train_dataset=tokenized["train"],
    eval_dataset=tokenized["validation"],
    processing_class=tokenizer,
    data_collator=data_collator,
    compute_metrics=compute_metrics,
)
trainer.train()
metrics = trainer.evaluate()
print(f"eval_rouge1={metrics['eval_rouge1']:.4f}")
print(f"eval_rougeL={metrics['eval_rougeL']:.4f}")
sample = tokenizer(PREFIX + raw["test"][0]["article"], return_tensors="pt", truncation=True, max_length=MAX_INPUT_LENGTH)
summary_ids = model.generate(**sample, max_new_tokens=MAX_TARGET_LENGTH)
print("sample summary:", tokenizer.decode(summary_ids[0], skip_special_tokens=True))
trainer.save_model("./t5-summarization/final")
print("TRAINING_COMPLETE")
