"""Fine-tune a Vision Transformer on CIFAR-10 image classification with the Trainer API."""
import evaluate
import torch
from datasets import load_dataset
from transformers import AutoImageProcessor, AutoModelForImageClassification, Trainer, TrainingArguments

CHECKPOINT = "google/vit-base-patch16-224-in21k"
dataset = load_dataset("cifar10")
splits = dataset["train"].train_test_split(test_size=0.25, seed=42)
labels = dataset["train"].features["label"].names
processor = AutoImageProcessor.from_pretrained(CHECKPOINT)


def transform(batch):
    inputs = processor([img.convert("RGB") for img in batch["img"]], return_tensors="pt")
    inputs["labels"] = batch["label"]
    return inputs


def collate_fn(examples):
    pixel_values = torch.stack([example["pixel_values"] for example in examples])
    return {"pixel_values": pixel_values, "labels": torch.tensor([example["labels"] for example in examples])}


model = AutoModelForImageClassification.from_pretrained(
    CHECKPOINT,
    num_labels=len(labels),
    id2label={i: name for i, name in enumerate(labels)},
    label2id={name: i for i, name in enumerate(labels)},
)
metric = evaluate.load("accuracy")
args = TrainingArguments(
    output_dir="./vit-cifar10",
    remove_unused_columns=False,
    eval_strategy="epoch",
    save_strategy="epoch",
    learning_rate=5e-5,
    per_device_train_batch_size=8,
    num_train_epochs=2,
    logging_steps=3,
    report_to="none",
)
trainer = Trainer(
    model=model,
    args=args,
    data_collator=collate_fn,
    train_dataset=splits["train"].with_transform(transform),
    eval_dataset=splits["test"].with_transform(transform),
    compute_metrics=lambda p: metric.compute(predictions=p.predictions.argmax(axis=1), references=p.label_ids),
)
trainer.train()
results = trainer.evaluate()
print(f"eval_accuracy={results['eval_accuracy']:.4f}")
print("TRAINING_COMPLETE")
