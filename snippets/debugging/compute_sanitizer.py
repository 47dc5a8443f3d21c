# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { skip = "runs NVIDIA's compute-sanitizer, which checks GPU memory accesses", skip-zh = "运行的是 NVIDIA 的 compute-sanitizer，它检查的是 GPU 上的内存访问" }
# timeout = 600
# also-needs = "NVIDIA's compute-sanitizer, which comes with the CUDA toolkit (on the PATH or in /usr/local/cuda/bin); the file says so and stops without it"
# also-needs-zh = "NVIDIA 的 compute-sanitizer，随 CUDA toolkit 一起安装（在 PATH 上或 /usr/local/cuda/bin 里）；找不到时文件会说明原因并退出"
# ///
"""compute-sanitizer against a kernel that forgets the mask on its load.

Claim: with PyTorch's caching allocator, memcheck reports nothing, because the read past the end
of the tensor lands inside a larger block the allocator reserved; with
PYTORCH_NO_CUDA_MEMORY_CACHING=1 each tensor is its own allocation and memcheck reports the read.
Runs the buggy kernel in a child process under the sanitizer, both ways.
On a machine with a CUDA GPU and the CUDA toolkit:  python compute_sanitizer.py
"""

import os
import re
import shutil
import subprocess
import sys

import torch
import triton
import triton.language as tl

N = 1020  # float32 elements: 4,080 bytes; the kernel reads 1,024 of them


# --8<-- [start:kernel]
@triton.jit
def copy_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr + offsets)  # (1)!
    tl.store(out_ptr + offsets, x, mask=offsets < n_elements)


def child() -> None:
    x = torch.rand(N, device="cuda")
    out = torch.empty_like(x)
    copy_kernel[(1,)](x, out, N, BLOCK_SIZE=1024)  # (2)!
    torch.cuda.synchronize()
    torch.testing.assert_close(out, x, rtol=0, atol=0)


# --8<-- [end:kernel]


# --8<-- [start:sanitize]
def find_sanitizer() -> str:
    for candidate in (shutil.which("compute-sanitizer"), "/usr/local/cuda/bin/compute-sanitizer"):
        if candidate and os.path.exists(candidate):
            return candidate
    raise SystemExit("compute-sanitizer not found: it comes with the CUDA toolkit")


def sanitize(caching: bool) -> str:
    """Run child() under memcheck; return its report, one line per line, without prefixes."""
    env = {k: v for k, v in os.environ.items() if k != "PYTORCH_NO_CUDA_MEMORY_CACHING"}
    if not caching:
        env["PYTORCH_NO_CUDA_MEMORY_CACHING"] = "1"  # (1)!
    command = [find_sanitizer(), "--tool", "memcheck", "--print-limit", "1"]  # (2)!
    proc = subprocess.run(
        [*command, sys.executable, __file__, "--child"],
        env=env,
        capture_output=True,
        text=True,
        timeout=280,
    )
    lines = (proc.stdout + proc.stderr).splitlines()
    return "\n".join(re.sub(r"^=+ ?\s*", "", line) for line in lines)  # (3)!


# --8<-- [end:sanitize]


def first(pattern: str, report: str) -> re.Match | None:
    return re.search(pattern, report)


def error_count(report: str) -> int:
    found = first(r"ERROR SUMMARY: (\d+) error", report)
    if found is None:
        raise AssertionError(f"no ERROR SUMMARY in the sanitizer's output:\n{report}")
    return int(found.group(1))


if __name__ == "__main__":
    if sys.argv[1:] == ["--child"]:
        child()
        sys.exit(0)
    if not torch.cuda.is_available():
        raise SystemExit("This snippet needs a CUDA GPU and compute-sanitizer.")
    # --8<-- [start:run]
    cached = sanitize(caching=True)
    print(f"with the caching allocator: ERROR SUMMARY: {error_count(cached)} errors")
    uncached = sanitize(caching=False)
    label = "without the caching allocator:"
    print(f"{label} ERROR SUMMARY: {error_count(uncached)} errors")
    read = first(r"Invalid __global__ read of size \d+ bytes", uncached)
    where = first(r"by thread \(\d+,\d+,\d+\) in block \(\d+,\d+,\d+\)", uncached)
    past = first(
        r"is out of bounds\s+and is (\d+) bytes after the nearest allocation"
        r" at 0x[0-9a-fA-F]+ of size ([\d,]+) bytes",
        uncached,
    )
    failure = first(r"CUDA error: [^\n]+", uncached)
    print(f"{label} {read.group(0) if read else '(no invalid read reported)'}")
    print(f"{label} {where.group(0) if where else '(no thread and block reported)'}")
    if past:
        print(
            f"{label} the address is out of bounds and is {past.group(1)} bytes after "
            f"the nearest allocation, of size {past.group(2)} bytes"
        )
    else:
        print(f"{label} (no nearest allocation reported)")
    print(f"{label} the program failed with {failure.group(0) if failure else 'no CUDA error'}")
    # --8<-- [end:run]
    assert error_count(cached) == 0, cached
    assert error_count(uncached) > 0 and read is not None, uncached
    print("compute_sanitizer: all checks passed")
