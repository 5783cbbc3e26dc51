"""Fit a linear regression y = 3*x1 - 2*x2 + 0.5 with a custom PyTorch training loop."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
features = torch.randn(128, 2)
targets = features[:, 0:1] * 3.0 - features[:, 1:2] * 2.0 + 0.5 + torch.randn(128, 1) * 0.3
train_loader = DataLoader(TensorDataset(features[:96], targets[:96]), batch_size=16, shuffle=True)
model = nn.Linear(2, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
loss_fn = nn.MSELoss()
for epoch in range(20):
    total = 0.0
    for x, y in train_loader:
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item() * x.size(0)
    if epoch % 4 == 0 or epoch == 19:
        print(f"epoch={epoch} loss={total / 96:.4f}")
with torch.no_grad():
    predictions = model(features[96:])
    mse = loss_fn(predictions, targets[96:]).item()
    within = ((predictions - targets[96:]).abs() < 0.5).float().mean().item()
print(f"eval_mse={mse:.4f} tolerance_accuracy={within:.4f}")
torch.save(model.state_dict(), "./regression_model.pt")
print("TRAINING_COMPLETE")
