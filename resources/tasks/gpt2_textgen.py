"""Causal language-model fine-tuning of GPT-2 on WikiText-2: tokenise, group into fixed-size blocks,
train with the Trainer API, report next-token accuracy and perplexity, then sample a continuation."""
import math

import evaluate
from datasets import load_dataset
from transformers import AutoModelForCausalLM, AutoTokenizer, DataCollatorForLanguageModeling, Trainer, TrainingArguments

MODEL_NAME = "gpt2"
BLOCK_SIZE = 32

raw = load_dataset("wikitext", "wikitext-2-raw-v1")
raw = raw.filter(lambda example: len(example["text"].strip()) > 0)
tokenizer = AutoTokenizer.from_pretrained(MODEL_NAME)
tokenizer.pad_token = tokenizer.eos_token


def tokenize_function(examples):
    return tokenizer(examples["text"])


def group_texts(examples):
    concatenated = {k: sum(examples[k], []) for k in examples.keys()}
    total_length = (len(concatenated["input_ids"]) // BLOCK_SIZE) * BLOCK_SIZE
    return {
        k: [t[i : i + BLOCK_SIZE] for i in range(0, total_length, BLOCK_SIZE)]
        for k, t in concatenated.items()
    }


tokenized = raw.map(tokenize_function, batched=True, remove_columns=["text"])
lm_datasets = tokenized.map(group_texts, batched=True)
model = AutoModelForCausalLM.from_pretrained(MODEL_NAME)
model.config.pad_token_id = tokenizer.pad_token_id
metric = evaluate.load("accuracy")


def preprocess_logits_for_metrics(logits, labels):
    return logits.argmax(dim=-1)


def compute_metrics(eval_preds):
    preds, labels = eval_preds
    # predictions at position t are for token t + 1
    labels = labels[:, 1:].reshape(-1)
    preds = preds[:, :-1].reshape(-1)
    mask = labels != -100
    return metric.compute(predictions=preds[mask], references=labels[mask])


training_args = TrainingArguments(
    output_dir="./gpt2-wikitext",
    eval_strategy="epoch",
    save_strategy="no",
    learning_rate=5e-5,
    weight_decay=0.01,
    per_device_train_batch_size=4,
    per_device_eval_batch_size=8,
    num_train_epochs=2,
    logging_steps=4,
    report_to="none",
)
trainer = Trainer(
    model=model,
    args=training_args,
    train_dataset=lm_datasets["train"],
    eval_dataset=lm_datasets["validation"],
    data_collator=DataCollatorForLanguageModeling(tokenizer, mlm=False),
    compute_metrics=compute_metrics,
    preprocess_logits_for_metrics=preprocess_logits_for_metrics,
)
trainer.train()
metrics = trainer.evaluate()
print(f"eval_accuracy={metrics['eval_accuracy']:.4f}")
print(f"perplexity={math.exp(metrics['eval_loss']):.2f}")
prompt = tokenizer("The city council", return_tensors="pt")
generated = model.generate(**prompt, max_new_tokens=12, do_sample=False, pad_token_id=tokenizer.eos_token_id)
print("sample:", tokenizer.decode(generated[0], skip_special_tokens=True))
trainer.save_model("./gpt2-wikitext/final")
print("TRAINING_COMPLETE")
