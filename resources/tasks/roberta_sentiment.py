"""Sentiment classification of IMDB movie reviews with RoBERTa and the Trainer API."""
from datasets import load_dataset
from transformers import AutoModelForSequenceClassification, AutoTokenizer, Trainer, TrainingArguments

tokenizer = AutoTokenizer.from_pretrained("roberta-base")
dataset = load_dataset("imdb")
encoded = dataset.map(lambda batch: tokenizer(batch["text"], truncation=True, padding="max_length", max_length=96), batched=True)
model = AutoModelForSequenceClassification.from_pretrained("roberta-base", num_labels=2)

args = TrainingArguments(
    output_dir="./output",
    eval_strategy="no",
    learning_rate=2e-5,
    per_device_train_batch_size=8,
    num_train_epochs=2,
    logging_steps=4,
    report_to="none",
)
trainer = Trainer(model=model, args=args, train_dataset=encoded["train"], processing_class=tokenizer)
trainer.train()

predictions = trainer.predict(encoded["test"])
accuracy = (predictions.predictions.argmax(-1) == predictions.label_ids).mean()
print(f"eval_accuracy={float(accuracy):.4f}")
trainer.save_model("./output/roberta-imdb")
print("TRAINING_COMPLETE")
