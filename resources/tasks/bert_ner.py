"""Named-entity recognition on CoNLL-2003 with BERT: sub-word label alignment, a token-classification
collator, seqeval metrics and the Trainer API."""
import evaluate
from datasets import load_dataset
from transformers import (
    AutoModelForTokenClassification,
    AutoTokenizer,
    DataCollatorForTokenClassification,
    Trainer,
    TrainingArguments,
)

MODEL_NAME = "bert-base-cased"
MAX_LENGTH = 48

raw_datasets = load_dataset("conll2003")
label_names = raw_datasets["train"].features["ner_tags"].feature.names
id2label = {i: label for i, label in enumerate(label_names)}
label2id = {label: i for i, label in id2label.items()}
tokenizer = AutoTokenizer.from_pretrained(MODEL_NAME)


def align_labels_with_tokens(labels, word_ids):
    aligned = []
    previous_word = None
    for word_id in word_ids:
        if word_id is None:
            aligned.append(-100)
        elif word_id != previous_word:
            aligned.append(labels[word_id])
        else:
            # continuation sub-tokens of a B- entity become I- of the same type
            label = labels[word_id]
            if label % 2 == 1:
                label += 1
            aligned.append(label)
        previous_word = word_id
    return aligned


def tokenize_and_align_labels(examples):
    tokenized = tokenizer(
        examples["tokens"],
        truncation=True,
        max_length=MAX_LENGTH,
        is_split_into_words=True,
    )
    all_labels = examples["ner_tags"]
    tokenized["labels"] = [
        align_labels_with_tokens(labels, tokenized.word_ids(i)) for i, labels in enumerate(all_labels)
    ]
    return tokenized


tokenized_datasets = raw_datasets.map(
    tokenize_and_align_labels,
    batched=True,
    remove_columns=raw_datasets["train"].column_names,
)
data_collator = DataCollatorForTokenClassification(tokenizer=tokenizer)
metric = evaluate.load("seqeval")


def compute_metrics(eval_preds):
    logits, labels = eval_preds
    predictions = logits.argmax(axis=-1).tolist()
    labels = labels.tolist()
    true_labels = [[label_names[l] for l in label if l != -100] for label in labels]
    true_predictions = [
        [label_names[p] for (p, l) in zip(prediction, label) if l != -100]
        for prediction, label in zip(predictions, labels)
    ]
    results = metric.compute(predictions=true_predictions, references=true_labels)
    return {
        "precision": results["overall_precision"],
        "recall": results["overall_recall"],
        "f1": results["overall_f1"],
        "accuracy": results["overall_accuracy"],
    }


model = AutoModelForTokenClassification.from_pretrained(MODEL_NAME, id2label=id2label, label2id=label2id)
args = TrainingArguments(
    output_dir="./bert-ner",
    eval_strategy="epoch",
    save_strategy="no",
    learning_rate=3e-5,
    per_device_train_batch_size=16,
    num_train_epochs=3,
    weight_decay=0.01,
    logging_steps=2,
    report_to="none",
)
trainer = Trainer(
    model=model,
    args=args,
    train_dataset=tokenized_datasets["train"],
    eval_dataset=tokenized_datasets["validation"],
    data_collator=data_collator,
    compute_metrics=compute_metrics,
    processing_class=tokenizer,
)
trainer.train()
metrics = trainer.evaluate()
print(f"eval_accuracy={metrics['eval_accuracy']:.4f}")
print(f"eval_f1={metrics['eval_f1']:.4f}")
trainer.save_model("./bert-ner/final")
print("TRAINING_COMPLETE")
