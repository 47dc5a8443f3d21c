# /// script
# requires-python = ">=3.10"
# dependencies = ["torch"]
#
# [tool.snippet]
# gpu = { skip = "asks PyTorch's rule about stand-in GPUs of several compute capabilities; no GPU is involved", skip-zh = "用几种计算能力的模拟 GPU 去问 PyTorch 的规则，不需要真实 GPU" }
# cpu = { interpreter = false }
# ///
"""Claim: from which compute capability PyTorch's torch.compile generates Triton kernels.

On any machine:  python claim_triton_min_cc.py
Asks torch._dynamo's CUDA device interface, the check torch.compile makes before it emits a
Triton kernel, about stand-in NVIDIA GPUs of compute capability 6.1 to 9.0, and prints the error
torch.compile raises below the threshold. Fails the day a release moves it.
"""

from types import SimpleNamespace
from unittest import mock

import torch
from torch._dynamo.device_interface import CudaInterface
from torch._inductor.exc import GPUTooOldForTriton


# --8<-- [start:claim]
def triton_capable(major: int, minor: int) -> bool:
    """CudaInterface.is_triton_capable() for a stand-in NVIDIA GPU of capability major.minor."""
    props = SimpleNamespace(name=f"GPU {major}.{minor}", major=major, minor=minor)
    fake = staticmethod(lambda device=None: props)
    patches = [mock.patch.object(torch.version, "hip", None)]  # an NVIDIA build of torch
    patches.append(mock.patch.object(torch.cuda, "get_device_properties", fake))
    if hasattr(CudaInterface, "Worker"):  # (1)!
        patches.append(mock.patch.object(CudaInterface.Worker, "get_device_properties", fake))
    for patch in patches:
        patch.start()
    try:
        return CudaInterface.is_triton_capable()
    finally:
        for patch in patches:
            patch.stop()


capabilities = [(6, 1), (7, 0), (7, 5), (8, 0), (9, 0)]
answers = {f"{a}.{b}": triton_capable(a, b) for a, b in capabilities}
print(f"torch.compile emits Triton kernels for compute capability: {answers}")
too_old = GPUTooOldForTriton(SimpleNamespace(name="a 6.1 GPU", major=6, minor=1), None)
print(f"below that, torch.compile raises: {str(too_old).splitlines()[0]}")  # (2)!
# --8<-- [end:claim]

assert answers == {"6.1": False, "7.0": True, "7.5": True, "8.0": True, "9.0": True}, answers
assert "CUDA Capability >= 7.0" in str(too_old), str(too_old)
print("claim_triton_min_cc: all checks passed")
