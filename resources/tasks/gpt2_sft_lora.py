"""Supervised fine-tuning of GPT-2 on chat-style data with TRL's SFTTrainer and a PEFT LoRA adapter."""
import math

from datasets import load_dataset
from peft import LoraConfig
from transformers import AutoModelForCausalLM, AutoTokenizer
from trl import SFTConfig, SFTTrainer

MODEL_NAME = "gpt2"
dataset = load_dataset("timdettmers/openassistant-guanaco")
tokenizer = AutoTokenizer.from_pretrained(MODEL_NAME)
tokenizer.pad_token = tokenizer.eos_token
model = AutoModelForCausalLM.from_pretrained(MODEL_NAME)

peft_config = LoraConfig(
    r=8,
    lora_alpha=16,
    lora_dropout=0.05,
    target_modules=["c_attn"],
    bias="none",
    task_type="CAUSAL_LM",
)
sft_config = SFTConfig(
    output_dir="./gpt2-sft-lora",
    dataset_text_field="text",
    max_seq_length=64,
    per_device_train_batch_size=8,
    learning_rate=2e-4,
    num_train_epochs=2,
    logging_steps=2,
    save_strategy="no",
    report_to="none",
)
trainer = SFTTrainer(
    model=model,
    args=sft_config,
    train_dataset=dataset["train"],
    eval_dataset=dataset["test"],
    processing_class=tokenizer,
    peft_config=peft_config,
)
trainer.model.print_trainable_parameters()
trainer.train()
metrics = trainer.evaluate()
print(f"perplexity={math.exp(metrics['eval_loss']):.2f}")
trainer.save_model("./gpt2-sft-lora/adapter")
print("TRAINING_COMPLETE")
