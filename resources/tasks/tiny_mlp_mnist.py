"""Train a tiny MLP on MNIST digits (downsampled to 7x7) with a custom PyTorch loop."""
import torch
import torch.nn.functional as F
from datasets import load_dataset
from torch import nn
from torch.utils.data import DataLoader

torch.manual_seed(42)
mnist = load_dataset("mnist")
train_set = mnist["train"].with_format("torch")
test_set = mnist["test"].with_format("torch")


def to_features(images):
    # 28x28 uint8 -> 7x7 averages in [0, 1]: small enough for a tiny MLP
    pixels = images.float().unsqueeze(1) / 255.0
    return F.avg_pool2d(pixels, kernel_size=4).flatten(start_dim=1)


class TinyMLP(nn.Module):
    def __init__(self, hidden=16, num_classes=10):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(49, hidden), nn.ReLU(), nn.Linear(hidden, num_classes))

    def forward(self, x):
        return self.net(x)


model = TinyMLP()
optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
criterion = nn.CrossEntropyLoss()
loader = DataLoader(train_set, batch_size=16, shuffle=True)

for epoch in range(5):
    model.train()
    running = 0.0
    for batch in loader:
        optimizer.zero_grad()
        logits = model(to_features(batch["image"]))
        loss = criterion(logits, batch["label"])
        loss.backward()
        optimizer.step()
        running += loss.item()
    print(f"epoch={epoch + 1} loss={running / len(loader):.4f}")

model.eval()
correct = 0
with torch.no_grad():
    for batch in DataLoader(test_set, batch_size=32):
        predictions = model(to_features(batch["image"])).argmax(dim=-1)
        correct += (predictions == batch["label"]).sum().item()
accuracy = correct / len(test_set)
print(f"eval_accuracy={accuracy:.4f}")
torch.save(model.state_dict(), "./tiny_mlp.pt")
print("TRAINING_COMPLETE")
