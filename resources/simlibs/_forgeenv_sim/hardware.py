"""The simulated machine. Default: CPU only, as real CPU-only torch reports it. FORGEENV_SIM_CUDA=1
(an opt-in for scripts that query a GPU before doing anything, e.g. `torch.cuda.mem_get_info()`) makes
torch report one CUDA device; tensors and modules still compute on the CPU."""
import os

SIM_CUDA = os.environ.get("FORGEENV_SIM_CUDA") == "1"
DEVICE_NAME = "NVIDIA A100-SXM4-40GB (simulated)"
CAPABILITY = (8, 0)
TOTAL_MEMORY = 40 * 1024 ** 3
