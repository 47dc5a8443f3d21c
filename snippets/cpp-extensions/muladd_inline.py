# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "ninja"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = false }
# timeout = 300
# also-needs = "a C++ compiler that links libstdc++ dynamically (the file checks it first and names the fix), and on a GPU machine nvcc of torch's CUDA major version"
# also-needs-zh = "一个以动态方式链接 libstdc++ 的 C++ 编译器（文件会先检查，不合格就说明怎么改），在 GPU 机器上还要与 torch 的 CUDA 主版本一致的 nvcc"
# ///
"""A C++ operator (and a CUDA kernel on a GPU) built with load_inline, made a real PyTorch op.

On a CPU or a CUDA GPU:  python muladd_inline.py
Needs a C++ compiler that links libstdc++ dynamically (checked first) and ninja (pip install
ninja); nvcc too when a GPU is visible. The first run compiles for about a minute; later runs
reuse the build directory. Checks the operator against a * b + c, its bad-input errors,
torch.library.opcheck and torch.compile, and exits non-zero when wrong.
"""

import hashlib
import os
import subprocess
import sys
import tempfile

import torch
from torch.utils.cpp_extension import load_inline

# --8<-- [start:cpp]
CPP_SOURCE = r"""
#include <ATen/Dispatch.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <torch/library.h>

namespace cppext {

// Shared by the CPU and the CUDA kernels: every rejection happens here, with a clear message.
void check_args(const at::Tensor& a, const at::Tensor& b, const at::Tensor& c,
                const at::Tensor& out) {
  for (const at::Tensor* t : {&b, &c, &out}) {
    TORCH_CHECK(t->device() == a.device(),
                "muladd: expected all tensors on one device, got ", a.device(), " and ",
                t->device());
    TORCH_CHECK_TYPE(t->scalar_type() == a.scalar_type(),
                     "muladd: expected one dtype, got ", a.scalar_type(), " and ",
                     t->scalar_type());
    TORCH_CHECK_VALUE(t->sizes() == a.sizes(), "muladd: shapes differ: ", a.sizes(),
                      " and ", t->sizes(), " (no broadcasting)");
  }
  TORCH_CHECK_TYPE(a.scalar_type() == at::kFloat || a.scalar_type() == at::kDouble,
                   "muladd: supports float32 and float64, got ", a.scalar_type());
  TORCH_CHECK_VALUE(out.is_contiguous(), "muladd: out must be contiguous");
  at::assert_no_partial_overlap(out, a);
  at::assert_no_partial_overlap(out, b);
  at::assert_no_partial_overlap(out, c);
}

void muladd_out_cpu(const at::Tensor& a, const at::Tensor& b, const at::Tensor& c,
                    at::Tensor& out) {
  check_args(a, b, c, out);
  TORCH_CHECK(a.device().is_cpu(), "muladd (CPU kernel): got a tensor on ", a.device());
  const at::Tensor ac = a.contiguous(), bc = b.contiguous(), cc = c.contiguous();
  AT_DISPATCH_FLOATING_TYPES(a.scalar_type(), "muladd_cpu", [&] {
    const scalar_t* pa = ac.const_data_ptr<scalar_t>();
    const scalar_t* pb = bc.const_data_ptr<scalar_t>();
    const scalar_t* pc = cc.const_data_ptr<scalar_t>();
    scalar_t* po = out.mutable_data_ptr<scalar_t>();
    const int64_t n = out.numel();
    for (int64_t i = 0; i < n; ++i) po[i] = pa[i] * pb[i] + pc[i];
  });
}

at::Tensor muladd_cpu(const at::Tensor& a, const at::Tensor& b, const at::Tensor& c) {
  at::Tensor out = at::empty(a.sizes(), a.options());  // contiguous, whatever a's layout
  muladd_out_cpu(a, b, c, out);
  return out;
}

TORCH_LIBRARY(cppext, m) {
  m.def("muladd(Tensor a, Tensor b, Tensor c) -> Tensor");
  m.def("muladd_out(Tensor a, Tensor b, Tensor c, Tensor(a!) out) -> ()");
}

TORCH_LIBRARY_IMPL(cppext, CPU, m) {
  m.impl("muladd", &muladd_cpu);
  m.impl("muladd_out", &muladd_out_cpu);
}

}  // namespace cppext
"""  # (1)!
# --8<-- [end:cpp]

# --8<-- [start:cuda]
CUDA_SOURCE = r"""
#include <ATen/Dispatch.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

#include <cstdint>

namespace cppext {

void check_args(const at::Tensor& a, const at::Tensor& b, const at::Tensor& c,
                const at::Tensor& out);  // defined in the C++ source

template <typename scalar_t>
__global__ void muladd_kernel(const scalar_t* a, const scalar_t* b, const scalar_t* c,
                              scalar_t* out, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] * b[i] + c[i];
}

void muladd_out_cuda(const at::Tensor& a, const at::Tensor& b, const at::Tensor& c,
                     at::Tensor& out) {
  check_args(a, b, c, out);
  TORCH_CHECK(a.is_cuda(), "muladd (CUDA kernel): got a tensor on ", a.device());
  const int64_t n = out.numel();
  if (n == 0) return;  // a launch of zero blocks is an error
  const c10::cuda::CUDAGuard guard(a.device());
  const at::Tensor ac = a.contiguous(), bc = b.contiguous(), cc = c.contiguous();
  constexpr int threads = 256;
  const int64_t blocks = (n + threads - 1) / threads;
  TORCH_CHECK(blocks <= INT32_MAX, "muladd: ", n, " elements are too many for one grid");
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  AT_DISPATCH_FLOATING_TYPES(a.scalar_type(), "muladd_cuda", [&] {
    muladd_kernel<scalar_t><<<blocks, threads, 0, stream>>>(
        ac.const_data_ptr<scalar_t>(), bc.const_data_ptr<scalar_t>(),
        cc.const_data_ptr<scalar_t>(), out.mutable_data_ptr<scalar_t>(), n);
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

at::Tensor muladd_cuda(const at::Tensor& a, const at::Tensor& b, const at::Tensor& c) {
  at::Tensor out = at::empty(a.sizes(), a.options());
  muladd_out_cuda(a, b, c, out);
  return out;
}

TORCH_LIBRARY_IMPL(cppext, CUDA, m) {
  m.impl("muladd", &muladd_cuda);
  m.impl("muladd_out", &muladd_out_cuda);
}

}  // namespace cppext
"""  # (1)!
# --8<-- [end:cuda]


# --8<-- [start:compiler]
def check_cxx(library: str | None = None) -> str:
    """The compiler torch.utils.cpp_extension uses (CXX, else c++), if it links libstdc++
    dynamically: reads DT_NEEDED of `library`, or of a tiny library built with it. Else exits."""
    cxx = os.environ.get("CXX", "c++")
    probe = '#include <stdexcept>\nvoid probe() { throw std::runtime_error("x"); }\n'
    with tempfile.TemporaryDirectory() as tmp:
        try:
            if library is None:  # (1)!
                library = os.path.join(tmp, "probe.so")
                command = [cxx, "-shared", "-fPIC", "-x", "c++", "-", "-o", library]
                subprocess.run(command, input=probe, text=True, capture_output=True, check=True)
            command = ["readelf", "-d", library]
            dynamic = subprocess.run(command, text=True, capture_output=True, check=True).stdout
        except (OSError, subprocess.CalledProcessError) as exc:
            sys.exit(f"cannot check the C++ compiler {cxx}: {exc}")
    if "[libstdc++.so" not in dynamic:  # (2)!
        sys.exit(
            f"{cxx} links libstdc++ statically (what it builds does not list libstdc++.so as "
            "needed): such an extension can break inside PyTorch (garbled errors, crashes). "
            "Set CXX to a compiler that links it dynamically (e.g. CXX=/usr/bin/g++) and rerun."
        )
    return cxx


# --8<-- [end:compiler]


# --8<-- [start:build]
def build(with_cuda: bool) -> str:
    """Compile the sources once per source text and torch release; reuse the build after."""
    key = hashlib.sha256(
        "\0".join(
            [CPP_SOURCE, CUDA_SOURCE, torch.__version__, sys.version, str(with_cuda)]
        ).encode()
    ).hexdigest()[:16]
    build_dir = os.path.join(tempfile.gettempdir(), f"cppext-muladd-{key}")  # (1)!
    os.makedirs(build_dir, exist_ok=True)
    return load_inline(
        name="cppext_muladd",
        cpp_sources=[CPP_SOURCE],  # (2)!
        cuda_sources=[CUDA_SOURCE] if with_cuda else None,
        build_directory=build_dir,
        is_python_module=False,  # (3)!
        no_implicit_headers=True,  # (4)!
        extra_cflags=["-O2"],
        extra_cuda_cflags=["-O2"],
    )


# --8<-- [end:build]


# --8<-- [start:no-fake]
def compile_fullgraph(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> list[str]:
    """What torch.compile(fullgraph=True) puts in its graph around the operator."""
    graphs = []

    def capture(gm: torch.fx.GraphModule, example_inputs):  # (1)!
        graphs.append(gm)
        return gm.forward

    def f(a, b, c):
        return torch.ops.cppext.muladd(a, b, c).relu()

    torch._dynamo.reset()
    torch.testing.assert_close(
        torch.compile(f, backend=capture, fullgraph=True)(a, b, c), f(a, b, c)
    )
    nodes = [n for n in graphs[0].graph.nodes if n.op in ("call_function", "call_method")]
    return [str(n.target) for n in nodes]


def show_compile_without_fake(device: str) -> None:
    x = torch.ones(8, device=device)
    try:
        compile_fullgraph(x, x, x)
    except torch._dynamo.exc.Unsupported as exc:  # (2)!
        print(f"torch.compile before register_fake: {type(exc).__name__}")
    else:
        raise AssertionError("torch.compile traced the op without a fake kernel: update the page")


def in_a_new_process(flag: str) -> str:  # (3)!
    proc = subprocess.run(
        [sys.executable, __file__, flag], capture_output=True, text=True, check=True
    )
    return proc.stdout.strip().splitlines()[-1]


# --8<-- [end:no-fake]


# --8<-- [start:register]
def check_same(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, out: torch.Tensor) -> None:
    """The checks of the C++ check_args, for fake tensors (shapes, dtypes, devices only)."""
    for t in (b, c, out):
        torch._check(t.device == a.device, lambda t=t: f"muladd: devices {a.device}, {t.device}")
        torch._check_type(t.dtype == a.dtype, lambda t=t: f"muladd: dtypes {a.dtype}, {t.dtype}")
        torch._check_value(t.shape == a.shape, lambda t=t: f"muladd: shapes {a.shape}, {t.shape}")
    torch._check_type(a.dtype in (torch.float32, torch.float64), lambda: f"muladd: {a.dtype}")


def fake_muladd(a, b, c):
    check_same(a, b, c, a)
    return a.new_empty(a.shape)  # (1)!


def fake_muladd_out(a, b, c, out):
    check_same(a, b, c, out)


def setup_context(ctx, inputs, output):
    a, b, _ = inputs
    ctx.save_for_backward(a, b)


def backward(ctx, grad):  # (2)!
    a, b = ctx.saved_tensors
    return grad * b, grad * a, grad


def register_python_parts() -> None:
    torch.library.register_fake("cppext::muladd", fake_muladd)  # (3)!
    torch.library.register_fake("cppext::muladd_out", fake_muladd_out)
    torch.library.register_autograd("cppext::muladd", backward, setup_context=setup_context)


# --8<-- [end:register]


# --8<-- [start:check]
SENTINEL = 12345.0


def guarded_muladd(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    """muladd_out into a view cut from a larger buffer; fail if anything outside it changed."""
    n, pad = a.numel(), 64
    buffer = torch.full((pad + n + pad,), SENTINEL, dtype=a.dtype, device=a.device)
    out = buffer[pad : pad + n].view(a.shape)
    torch.ops.cppext.muladd_out(a, b, c, out)  # (1)!
    outside = torch.cat([buffer[:pad], buffer[pad + n :]])
    assert bool((outside == SENTINEL).all()), f"muladd_out wrote outside its output (n={n})"
    return out


def check(device: str) -> None:
    torch.manual_seed(0)
    for dtype in (torch.float32, torch.float64):
        for shape in [(0,), (1,), (7,), (1000,), (1025,), (33, 65), (3, 0, 5)]:  # (2)!
            a, b, c = (torch.randn(shape, dtype=dtype).to(device) for _ in range(3))
            want = a * b + c
            torch.testing.assert_close(guarded_muladd(a, b, c), want)  # (3)!
            torch.testing.assert_close(torch.ops.cppext.muladd(a, b, c), want)
    print(
        "values: float32 and float64, empty to 1025 elements, equal to a * b + c, nothing written outside out"
    )

    special = torch.tensor([float("nan"), float("inf"), -float("inf"), 2.0], device=device)
    ones = torch.ones(4, device=device)
    torch.testing.assert_close(
        torch.ops.cppext.muladd(special, ones, special), special + special, equal_nan=True
    )
    print("NaN and Inf propagate like a * b + c")

    base = torch.randn(64, 130, dtype=torch.float64).to(device)
    for view in (base[:, ::2], base.t(), base[8:16, 3:70]):  # (4)!
        got = torch.ops.cppext.muladd(view, view, view)
        torch.testing.assert_close(got, view * view + view)
        assert got.is_contiguous()
    print("non-contiguous inputs (step, transpose, window): correct, contiguous output")

    a, b, c = (
        torch.randn(5, 3, dtype=torch.float64, device=device, requires_grad=True) for _ in range(3)
    )
    torch.autograd.gradcheck(torch.ops.cppext.muladd, (a, b, c))  # (5)!
    print("gradcheck: backward matches finite differences (float64)")


# --8<-- [end:check]


# --8<-- [start:bad-input]
def first_line(exc: Exception) -> str:
    return str(exc).splitlines()[0]


def expect_error(error: type[Exception], call) -> str:
    try:
        call()
    except error as exc:
        return f"{type(exc).__name__}: {first_line(exc)}"
    raise AssertionError(f"expected {error.__name__}, got a result")


def bad_input(device: str) -> None:
    op = torch.ops.cppext.muladd
    x = torch.ones(3, device=device)
    print("wrong dtype:", expect_error(TypeError, lambda: op(x, x, x.double())))
    print("int64:", expect_error(TypeError, lambda: op(*[x.long()] * 3)))
    print("shapes:", expect_error(ValueError, lambda: op(x, x, torch.ones(4, device=device))))
    print("broadcast:", expect_error(ValueError, lambda: op(x, x, torch.ones(1, device=device))))
    cpu, meta = torch.ones(3), torch.ones(3, device="meta")
    print("devices:", expect_error(RuntimeError, lambda: op(cpu, cpu, meta)))  # (1)!
    buffer = torch.zeros(6, device=device)
    overlap = expect_error(
        RuntimeError, lambda: torch.ops.cppext.muladd_out(x, x, buffer[1:4], buffer[2:5])
    )
    print("overlap:", overlap)
    strided_out = torch.zeros(6, device=device)[::2]
    print(
        "out:", expect_error(ValueError, lambda: torch.ops.cppext.muladd_out(x, x, x, strided_out))
    )


def bad_input_cuda() -> None:  # (2)!
    x = torch.ones(3, device="cuda")
    error = expect_error(RuntimeError, lambda: torch.ops.cppext.muladd(x, x, x.cpu()))
    print("CPU tensor to the CUDA kernel:", error)


# --8<-- [end:bad-input]


# --8<-- [start:opcheck]
def run_opcheck(device: str) -> None:
    def make(*shape, requires_grad=False):
        return torch.randn(shape, dtype=torch.float64).to(device).requires_grad_(requires_grad)

    samples = [
        (make(3), make(3), make(3)),
        (make(4, 5, requires_grad=True), make(4, 5), make(4, 5, requires_grad=True)),
        (make(8, 6).t(), make(6, 8), make(6, 8)),  # (1)!
        (make(0), make(0), make(0)),
    ]
    for args in samples:
        result = torch.library.opcheck(torch.ops.cppext.muladd.default, args)  # (2)!
        assert all(v == "SUCCESS" for v in result.values()), result
        out = torch.empty(args[0].shape, dtype=torch.float64, device=device)
        detached = [t.detach() for t in args]
        torch.library.opcheck(torch.ops.cppext.muladd_out.default, (*detached, out))
    print(f"opcheck: {sorted(result)} passed for {len(samples)} samples, muladd_out too")


# --8<-- [end:opcheck]

if __name__ == "__main__":
    with_cuda = torch.cuda.is_available()
    device = "cuda" if with_cuda else "cpu"
    if "--no-fake" in sys.argv:
        build(with_cuda)
        show_compile_without_fake(device)
        sys.exit(0)
    where = torch.cuda.get_device_name() if with_cuda else "CPU"
    print(f"muladd_inline on {where}")
    # --8<-- [start:run]
    cxx = check_cxx()  # (1)!
    version = subprocess.run([cxx, "--version"], capture_output=True, text=True).stdout
    print(
        f"C++ compiler on {where}: {cxx}, {version.splitlines()[0]}, libstdc++ linked dynamically"
    )
    build(with_cuda)  # (2)!
    print(in_a_new_process("--no-fake"))
    register_python_parts()  # (3)!
    check(device)
    bad_input(device)
    if with_cuda:
        bad_input_cuda()
    run_opcheck(device)
    x = torch.randn(4, device=device)
    print(f"graph under torch.compile: {compile_fullgraph(x, x, x)}")
    # --8<-- [end:run]
    print("muladd_inline: all checks passed")
