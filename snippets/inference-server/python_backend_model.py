# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = true }
# ///
"""Where the two Tritons meet: an Inference Server model whose execute() runs a Triton kernel.

In a server: this file is <model_repository>/add_one/1/model.py, beside the config.pbtxt that
model_repository.py writes; the Python backend imports it and calls TritonPythonModel.
Here, without a server:
    python python_backend_model.py                      # NVIDIA GPU, CC 8.0+
    TRITON_INTERPRET=1 python python_backend_model.py   # CPU
runs execute() through a small stand-in for the server's triton_python_backend_utils module and
checks every answer against PyTorch. No Inference Server is started.
"""

import contextlib
import os

import numpy as np
import torch
import triton
import triton.language as tl
from torch.utils.dlpack import from_dlpack, to_dlpack

try:
    import triton_python_backend_utils as pb_utils  # only inside the Inference Server
except ImportError:
    pb_utils = None  # the self-test below puts a stand-in here

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"


# --8<-- [start:kernel]
@triton.jit
def add_one_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + 1.0, mask=mask)


def add_one(x: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    """x + 1 for a float32 tensor of any shape, by the Triton kernel."""
    if x.dtype != torch.float32:
        raise TypeError(f"add_one takes float32, got {x.dtype}")  # (1)!
    if x.device.type != ("cpu" if INTERPRETED else "cuda"):
        raise ValueError(f"add_one got a tensor on {x.device}")
    x = x.contiguous()
    if out is None:
        out = torch.empty_like(x)
    elif out.shape != x.shape or out.dtype != x.dtype or not out.is_contiguous():
        raise ValueError("out must be a contiguous float32 tensor of the input's shape")
    n = x.numel()
    grid = (triton.cdiv(n, 1024),)
    with torch.cuda.device(x.device) if x.is_cuda else contextlib.nullcontext():
        add_one_kernel[grid](x, out, n, BLOCK_SIZE=1024)
    return out


# --8<-- [end:kernel]


# --8<-- [start:model]
class TritonPythonModel:  # (1)!
    def initialize(self, args: dict) -> None:
        if INTERPRETED:
            self.device = torch.device("cpu")
        elif args["model_instance_kind"] == "GPU":  # (2)!
            self.device = torch.device("cuda", int(args["model_instance_device_id"]))
        else:
            raise RuntimeError("add_one needs a GPU instance (instance_group kind: KIND_GPU)")

    def execute(self, requests: list) -> list:
        responses = []
        for request in requests:  # (3)!
            try:
                tensor = pb_utils.get_input_tensor_by_name(request, "INPUT0")
                x = from_dlpack(tensor.to_dlpack()).to(self.device)  # (4)!
                y = add_one(x)
                output = pb_utils.Tensor.from_dlpack("OUTPUT0", to_dlpack(y))
                responses.append(pb_utils.InferenceResponse(output_tensors=[output]))
            except (TypeError, ValueError) as exc:
                error = pb_utils.TritonError(str(exc))  # (5)!
                responses.append(pb_utils.InferenceResponse(error=error))
        return responses


# --8<-- [end:model]


# --8<-- [start:stand-in]
class StandIn:
    """The calls this model makes to triton_python_backend_utils, for a run without a server."""

    class Tensor:
        def __init__(self, name: str, data: torch.Tensor) -> None:
            self._name, self._data = name, data

        @staticmethod
        def from_dlpack(name: str, capsule) -> "StandIn.Tensor":
            return StandIn.Tensor(name, from_dlpack(capsule))

        def to_dlpack(self):
            return to_dlpack(self._data)

        def as_numpy(self) -> np.ndarray:
            return self._data.cpu().numpy()

        def name(self) -> str:
            return self._name

    class InferenceRequest:  # what the server builds; not the constructor BLS code calls
        def __init__(self, inputs: list) -> None:
            self.inputs = inputs

    class InferenceResponse:
        def __init__(self, output_tensors: list | None = None, error=None) -> None:
            self.output_tensors, self.error = output_tensors or [], error

    class TritonError(Exception):
        pass

    @staticmethod
    def get_input_tensor_by_name(request, name: str):
        return next((t for t in request.inputs if t.name() == name), None)

    @staticmethod
    def get_output_tensor_by_name(response, name: str):
        return next((t for t in response.output_tensors if t.name() == name), None)


# --8<-- [end:stand-in]


def request_of(array: np.ndarray) -> "StandIn.InferenceRequest":
    """What the server hands execute(): inputs on the CPU (the backend's default)."""
    return StandIn.InferenceRequest([StandIn.Tensor("INPUT0", torch.from_numpy(array))])


def guarded_add_one(x: torch.Tensor) -> torch.Tensor:
    """add_one() into a view of a larger buffer; fail if anything outside the view changed."""
    n, pad = x.numel(), 1024
    buffer = torch.full((pad + n + pad,), 12345.0, device=x.device)
    out = buffer[pad : pad + n].view(x.shape)
    add_one(x, out=out)
    assert bool((buffer[:pad] == 12345.0).all() and (buffer[pad + n :] == 12345.0).all())
    return out


# --8<-- [start:check]
if __name__ == "__main__":
    if not INTERPRETED and not torch.cuda.is_available():
        raise SystemExit(
            "No CUDA GPU here. On a CPU: TRITON_INTERPRET=1 python python_backend_model.py"
        )
    pb_utils = StandIn  # (1)!
    model = TritonPythonModel()
    model.initialize({"model_instance_kind": "GPU", "model_instance_device_id": "0"})
    rng = np.random.default_rng(0)
    batch = [  # (2)!
        rng.standard_normal((3, 7)).astype(np.float32),
        np.zeros((1, 0), np.float32),
        np.array([[np.nan, np.inf, -np.inf, -1.0]], np.float32),
        rng.standard_normal((2, 1025)).astype(np.float32),
        np.ones((2, 3), np.float64),
    ]
    assert all(a.ndim == 2 and 1 <= a.shape[0] <= 8 for a in batch)  # [batch, n], batch <= 8
    responses = model.execute([request_of(a) for a in batch])
    assert len(responses) == len(batch)  # (3)!
    for array, response in zip(batch[:-1], responses[:-1], strict=True):
        got = pb_utils.get_output_tensor_by_name(response, "OUTPUT0").as_numpy()
        np.testing.assert_array_equal(got, array + np.float32(1))  # (4)!
    assert responses[-1].error is not None and not responses[-1].output_tensors
    print(f"requests answered: {len(batch) - 1} equal to x + 1, 1 error: {responses[-1].error}")
    # --8<-- [end:check]
    device = model.device
    for n in (0, 1, 7, 1024, 1025, 98_432):
        x = torch.randn(n, generator=torch.Generator().manual_seed(n)).to(device)
        torch.testing.assert_close(guarded_add_one(x), x + 1, rtol=0, atol=0)
    strided = torch.randn(64, 130).to(device)[:, ::2]
    torch.testing.assert_close(add_one(strided), strided + 1, rtol=0, atol=0)
    print("add_one: sizes 0 to 98432 and a strided view equal to x + 1, nothing written outside")
    print("python_backend_model: all checks passed")
