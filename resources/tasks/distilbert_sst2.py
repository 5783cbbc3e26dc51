"""Fine-tune DistilBERT on GLUE SST-2 sentiment classification with the Trainer API."""
import evaluate
from datasets import load_dataset
from transformers import AutoModelForSequenceClassification, AutoTokenizer
from transformers import DataCollatorWithPadding, Trainer, TrainingArguments

MODEL_NAME = "distilbert-base-uncased"

raw = load_dataset("glue", "sst2")
tokenizer = AutoTokenizer.from_pretrained(MODEL_NAME)


def tokenize(examples):
    return tokenizer(examples["sentence"], truncation=True, max_length=64)


tokenized = raw.map(tokenize, batched=True)
model = AutoModelForSequenceClassification.from_pretrained(MODEL_NAME, num_labels=2)
accuracy = evaluate.load("accuracy")


def compute_metrics(eval_pred):
    logits, labels = eval_pred
    predictions = logits.argmax(axis=-1)
    return accuracy.compute(predictions=predictions, references=labels)


args = TrainingArguments(
    output_dir="./output",
    eval_strategy="epoch",
    save_strategy="no",
    learning_rate=5e-5,
    per_device_train_batch_size=16,
    per_device_eval_batch_size=32,
    num_train_epochs=3,
    weight_decay=0.01,
    logging_steps=2,
    report_to="none",
)

trainer = Trainer(
    model=model,
    args=args,
    train_dataset=tokenized["train"],
    eval_dataset=tokenized["validation"],
    processing_class=tokenizer,
    data_collator=DataCollatorWithPadding(tokenizer=tokenizer),
    compute_metrics=compute_metrics,
)
trainer.train()
metrics = trainer.evaluate()
print(f"eval_accuracy={metrics['eval_accuracy']:.4f}")
trainer.save_model("./output/final_model")
print("TRAINING_COMPLETE")
