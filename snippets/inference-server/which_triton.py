# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { skip = "inspects the installed packages; nothing runs on a GPU", skip-zh = "只检查已安装的包，不在 GPU 上运行任何东西" }
# cpu = { interpreter = false }
# ///
"""Which Triton is this? `import triton` is the language and compiler; the Inference Server's
Python packages have other names.

    python which_triton.py

Asks the installed metadata which distribution provides `import triton`, checks that it is the
language (triton.jit, triton.language), and looks for the Inference Server's client and
in-process packages and the Python backend's module. Exits non-zero when `import triton` is not
the language.
"""

from importlib import metadata, util

# --8<-- [start:which]
import triton
import triton.language as tl

providers = metadata.packages_distributions().get("triton", [])  # (1)!
print(f"distributions that provide import triton: {providers}")
assert providers == ["triton"], providers

assert callable(triton.jit) and callable(tl.program_id) and callable(tl.load)  # (2)!
assert issubclass(triton.CompilationError, Exception)
print("import triton: the language and compiler (triton.jit, triton.language, CompilationError)")

SERVER_SIDE = {  # (3)!
    "tritonclient": "Inference Server client library, HTTP/REST and gRPC",
    "tritonserver": "Inference Server in-process Python API",
}
for name, what in SERVER_SIDE.items():
    try:
        files = metadata.files(name) or []
        state = "installed; provides import triton: " + str(
            any(str(f).startswith("triton/") for f in files)
        )
    except metadata.PackageNotFoundError:
        state = "not installed here"
    print(f"pip package {name} ({what}): {state}")

found = util.find_spec("triton_python_backend_utils") is not None  # (4)!
print(f"import triton_python_backend_utils: {'found' if found else 'not found here'}")
# --8<-- [end:which]
print("which_triton: all checks passed")
