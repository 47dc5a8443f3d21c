# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { skip = "AOTInductor compiles the triton_op's Triton kernel for the GPU; on CPU tensors the operator's function refuses to compile (see claim_compile_cpu_tensors.py)", skip-zh = "AOTInductor 要为 GPU 编译 triton_op 里的 Triton 内核；对 CPU 张量，算子的函数在编译时就会拒绝（见 claim_compile_cpu_tensors.py）" }
# timeout = 300
# also-needs = "a C++ compiler, the one named by CXX or else g++: AOTInductor builds the package's library with it"
# also-needs-zh = "一个 C++ 编译器，用 CXX 指定的那个，没有指定就用 g++：AOTInductor 用它构建包里的库"
# ///
"""Compile a model that calls a triton_op ahead of time with AOTInductor, load the package, and
load it again in a fresh process that never registers the operator.

On a CUDA GPU:  python aot_inductor.py   (needs a C++ compiler, as AOTInductor builds a library)
Checks the package's output against eager mode in both processes; exits non-zero when wrong.
"""

import json
import os
import subprocess
import sys
import tempfile
import zipfile

import torch
import triton
import triton.language as tl
from torch.library import triton_op, wrap_triton

# The operator of the triton-op chapter, shortened: Triton kernel for CUDA tensors, a PyTorch
# kernel for CPU tensors, a fake for tracing. Full checks and autograd: ../triton-op/.
DTYPES = (torch.float16, torch.bfloat16, torch.float32)


@triton.jit
def sigmoid_mul_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0).to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    y = tl.load(y_ptr + offsets, mask=mask).to(tl.float32)
    tl.store(out_ptr + offsets, (x * tl.sigmoid(y)).to(out_ptr.dtype.element_ty), mask=mask)


def check_inputs(x: torch.Tensor, y: torch.Tensor) -> None:
    if x.shape != y.shape or x.dtype != y.dtype or x.device != y.device:
        raise ValueError("x and y need one shape, one dtype and one device")
    if x.dtype not in DTYPES:
        raise TypeError(f"{x.dtype} is not supported; supported: {DTYPES}")


def sigmoid_mul_cpu(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    check_inputs(x, y)
    return (x.float() * torch.sigmoid(y.float())).to(x.dtype).contiguous()


def sigmoid_mul_fake(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    check_inputs(x, y)
    return torch.empty(x.shape, dtype=x.dtype, device=x.device)


@triton_op("mylib::sigmoid_mul", mutates_args=())
def sigmoid_mul(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    check_inputs(x, y)
    if x.device.type != "cuda":
        raise ValueError(f"the Triton kernel needs CUDA tensors, got {x.device}")
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n = out.numel()
    with torch.cuda.device(x.device):
        wrap_triton(sigmoid_mul_kernel)[(triton.cdiv(n, 1024),)](
            x.contiguous(), y.contiguous(), out, n, BLOCK_SIZE=1024
        )
    return out


sigmoid_mul.register_kernel("cpu")(sigmoid_mul_cpu)
sigmoid_mul.register_fake(sigmoid_mul_fake)


class Gate(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.relu(torch.ops.mylib.sigmoid_mul(x * 2.0 + 1.0, y)) * 3.0


# --8<-- [start:fresh]
FRESH_PROCESS = """
import sys, torch
package, tensors = sys.argv[1], sys.argv[2]
try:
    torch.ops.mylib.sigmoid_mul
    print("mylib::sigmoid_mul registered: True")
except AttributeError:
    print("mylib::sigmoid_mul registered: False")  # (1)!
x, y, expected = (t.cuda() for t in torch.load(tensors))
out = torch._inductor.aoti_load_package(package)(x, y)
torch.testing.assert_close(out, expected)
print("ran, same values as eager mode")
"""
# --8<-- [end:fresh]


def names_in_package(package: str, name: bytes) -> list[str]:
    """The kinds of file (by suffix) in the .pt2 archive whose bytes contain `name`."""
    with zipfile.ZipFile(package) as archive:
        found = {
            os.path.splitext(info.filename)[1] or info.filename
            for info in archive.infolist()
            if name in archive.read(info)
        }
    return sorted(found)


if __name__ == "__main__":
    if not torch.cuda.is_available():
        raise SystemExit("This snippet needs a CUDA GPU: AOTInductor compiles the Triton kernel.")
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as tmp:
        # --8<-- [start:compile]
        x, y = torch.randn(4096, device="cuda"), torch.randn(4096, device="cuda")
        exported = torch.export.export(Gate(), (x, y))  # (1)!
        package = torch._inductor.aoti_compile_and_package(
            exported, package_path=os.path.join(tmp, "gate.pt2")
        )  # (2)!
        loaded = torch._inductor.aoti_load_package(package)
        torch.testing.assert_close(loaded(x, y), Gate()(x, y))
        print("AOTInductor package, loaded in the process that compiled it: same values as eager")
        # --8<-- [end:compile]
        kernel_files = names_in_package(package, b"sigmoid_mul_kernel")
        op_files = names_in_package(package, b"mylib")
        print(f"files in the package that name the Triton kernel: {kernel_files}")
        print(f"files in the package that name the mylib namespace: {op_files}")

        # --8<-- [start:run-fresh]
        tensors = os.path.join(tmp, "inputs.pt")
        torch.save([t.cpu() for t in (x, y, Gate()(x, y))], tensors)
        child = subprocess.run(
            [sys.executable, "-c", FRESH_PROCESS, package, tensors],
            capture_output=True,
            text=True,
            timeout=240,
        )  # (1)!
        # --8<-- [end:run-fresh]
    lines = child.stdout.strip().splitlines()
    if child.returncode != 0:
        last = (child.stderr.strip().splitlines() or ["(no message)"])[-1]
        lines.append(f"failed, exit {child.returncode}: {last}")
    print("a fresh process that never imports this file: " + "; ".join(lines))
    assert lines[:1] == ["mylib::sigmoid_mul registered: False"], lines
    assert child.returncode == 0, json.dumps({"stdout": child.stdout, "stderr": child.stderr})
    assert kernel_files, "the package should hold the compiled Triton kernel"
    print("aot_inductor: all checks passed")
