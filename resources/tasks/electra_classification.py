"""Fine-tune ELECTRA-small on Rotten Tomatoes reviews with a hand-written PyTorch training loop."""
import torch
from datasets import load_dataset
from torch.utils.data import DataLoader
from transformers import AutoModelForSequenceClassification, AutoTokenizer, DataCollatorWithPadding
from transformers import get_linear_schedule_with_warmup

MODEL_NAME = "google/electra-small-discriminator"
torch.manual_seed(7)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

tokenizer = AutoTokenizer.from_pretrained(MODEL_NAME)
reviews = load_dataset("rotten_tomatoes")
encoded = reviews.map(lambda b: tokenizer(b["text"], truncation=True, max_length=64), batched=True, remove_columns=["text"])
encoded = encoded.rename_column("label", "labels")
collator = DataCollatorWithPadding(tokenizer=tokenizer)
train_loader = DataLoader(encoded["train"], batch_size=16, shuffle=True, collate_fn=collator)
eval_loader = DataLoader(encoded["validation"], batch_size=32, collate_fn=collator)

model = AutoModelForSequenceClassification.from_pretrained(MODEL_NAME, num_labels=2).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01)
epochs = 2
scheduler = get_linear_schedule_with_warmup(optimizer, num_warmup_steps=0, num_training_steps=epochs * len(train_loader))

step = 0
for epoch in range(epochs):
    model.train()
    for batch in train_loader:
        batch = {k: v.to(device) for k, v in batch.items()}
        outputs = model(**batch)
        outputs.loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        step += 1
        print(f"step={step} loss={outputs.loss.item():.4f}")

model.eval()
correct, total = 0, 0
with torch.no_grad():
    for batch in eval_loader:
        logits = model(**batch).logits
        correct += (logits.argmax(dim=-1) == batch["labels"]).sum().item()
        total += batch["labels"].size(0)
print(f"eval_accuracy={correct / total:.4f}")
model.save_pretrained("./output/electra-rt")
tokenizer.save_pretrained("./output/electra-rt")
print("TRAINING_COMPLETE")
