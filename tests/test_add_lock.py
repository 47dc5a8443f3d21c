"""scripts/add_lock.py: a new lock from an index's metadata, tried against a local fake index.

The fake index is a folder of tiny wheels (torch 9.9.0 whose METADATA pins triton 9.9.1 and
requires a CUDA 13.4 runtime); uv resolves them offline. The real install and CPU run are what
`make add-lock` does; here the command stops after writing the lock (--no-install), and the diff
of claims is checked on small records.
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

import pytest
import tomllib

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import add_lock  # noqa: E402
import snippet_records as records  # noqa: E402

UV = records.REPO_ROOT / ".venv-uv" / "bin" / "uv"


def fake_wheel(folder: Path, name: str, version: str, requires: list[str], python: str) -> Path:
    dist = f"{name.replace('-', '_')}-{version}"
    wheel = folder / f"{dist}-py3-none-any.whl"
    metadata = [
        "Metadata-Version: 2.1",
        f"Name: {name}",
        f"Version: {version}",
        f"Requires-Python: {python}",
        *(f"Requires-Dist: {r}" for r in requires),
    ]
    with zipfile.ZipFile(wheel, "w") as whl:
        whl.writestr(f"{name.replace('-', '_')}/__init__.py", f'__version__ = "{version}"\n')
        whl.writestr(f"{dist}.dist-info/METADATA", "\n".join(metadata) + "\n")
        whl.writestr(
            f"{dist}.dist-info/WHEEL",
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        )
        whl.writestr(f"{dist}.dist-info/RECORD", "")
    return wheel


@pytest.fixture
def fake_index(tmp_path: Path) -> Path:
    index = tmp_path / "index"
    index.mkdir()
    linux = 'platform_system == "Linux" and platform_machine == "x86_64"'
    fake_wheel(
        index,
        "torch",
        "9.9.0",
        [f"triton==9.9.1; {linux}", 'cuda-toolkit==13.4.1; platform_system == "Linux"'],
        ">=3.11",
    )
    fake_wheel(index, "triton", "9.9.1", [], ">=3.11,<3.16")
    fake_wheel(index, "cuda-toolkit", "13.4.1", [], ">=3.8")
    return index


@pytest.mark.skipif(not UV.exists(), reason="needs the checkout's uv (.venv-uv)")
def test_writes_a_valid_lock_from_the_index_metadata(fake_index: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    argv = ["--torch", "9.9.0", "--find-links", str(fake_index), "--bare", "--no-install"]
    assert add_lock.main([*argv, "--out-dir", str(out), "--today", "2026-12-03"]) == 0
    lock_id = "torch-9.9.0-triton-9.9.1"
    toml = (out / "locks" / f"{lock_id}.toml").read_text(encoding="utf-8")
    lock = records.parse_lock(tomllib.loads(toml), f"{lock_id}.toml")
    assert (lock.torch, lock.triton, lock.cuda) == ("9.9.0", "9.9.1", "13.4")
    assert lock.python == ">=3.11,<3.16"  # torch's and triton's Requires-Python together
    assert lock.status == "supported" and lock.devices == () and lock.gpu_reason
    assert lock.mike_version == "triton-9.9"
    assert str(lock.reviewed) == "2026-12-03" and lock.next_review > lock.reviewed
    pinned = (out / "requirements" / f"lock-{lock_id}.in").read_text(encoding="utf-8")
    assert "torch==9.9.0" in pinned and "triton==9.9.1" in pinned
    resolved = (out / "requirements" / f"lock-{lock_id}.txt").read_text(encoding="utf-8")
    assert "cuda-toolkit==13.4.1" in resolved and "triton==9.9.1" in resolved
    assert f"requirements/lock-{lock_id}.in -o requirements/lock-{lock_id}.txt" in resolved
    assert not list((out / "requirements").glob("*triton-new*"))  # the provisional files went
    # the checkout's own locks were copied beside it, untouched in the checkout
    assert (out / "locks" / f"{records.current_lock_id()}.toml").is_file()
    assert not (records.REPO_ROOT / "locks" / f"{lock_id}.toml").exists()


def test_a_release_the_index_lacks_is_an_error(fake_index: Path, tmp_path: Path) -> None:
    argv = ["--torch", "9.8.0", "--find-links", str(fake_index), "--bare", "--no-install"]
    assert add_lock.main([*argv, "--out-dir", str(tmp_path / "out")]) == 2


def test_reads_pins_and_cuda_from_requires_dist() -> None:
    old = ['triton (==3.1.0) ; platform_system == "Linux" and platform_machine == "x86_64"',
           "nvidia-cuda-runtime-cu12 (==12.4.127) ; platform_system == \"Linux\""]  # fmt: skip
    new = ['triton~=3.8.0; platform_system == "Linux"', "cuda-toolkit[cudart]==13.2.2; extra"]
    assert add_lock.triton_pin(old) == "triton==3.1.0" and add_lock.cuda_version(old) == "12.4"
    assert add_lock.triton_pin(new) == "triton~=3.8.0" and add_lock.cuda_version(new) == "13.2"
    assert add_lock.python_range([">=3.10", ">=3.11,<3.16"], []) == ">=3.11,<3.16"
    assert add_lock.python_range([">=3.9.0", None], []) == ">=3.10"
    # numpy 2.2.6 has wheels for CPython 3.10 to 3.13 only: the lock's range stops there
    assert add_lock.python_range([">=3.10"], [(10, 14), (None, None)]) == ">=3.10,<3.14"


def test_reads_the_python_range_from_the_wheel_tags() -> None:
    numpy = [
        "numpy-2.4.6-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl",
        "numpy-2.4.6-cp314-cp314t-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl",
        "numpy-2.4.6-cp314-cp314-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl",
        "numpy-2.4.6-cp315-cp315-win_amd64.whl",  # not for Linux: not counted
    ]
    assert add_lock.wheel_python_range(numpy) == (11, 15)
    triton = ["triton-3.9.0-cp311-cp311-manylinux_2_27_x86_64.whl",
              "triton-3.9.0-cp312-abi3-manylinux_2_27_x86_64.whl"]  # fmt: skip
    assert add_lock.wheel_python_range(triton) == (11, None)  # abi3: every newer CPython
    assert add_lock.wheel_python_range(["pytest-9.2.0-py3-none-any.whl"]) == (None, None)


def row(path: str, status: str, stdout: list[str], reason: str = "") -> dict:
    return {"path": path, "status": status, "stdout": stdout, "reason": reason}


def test_prints_each_claim_whose_output_changed() -> None:
    old = {"snippets": [
        row("snippets/a/claim_same.py", "passed", ["x: 1"]),
        row("snippets/a/claim_line.py", "passed", ["accepts: no", "done"]),
        row("snippets/a/claim_fails.py", "passed", ["ok"]),
        row("snippets/a/kernel.py", "passed", ["figures moved"]),
    ]}  # fmt: skip
    new = {"snippets": [
        row("snippets/a/claim_same.py", "passed", ["x: 1"]),
        row("snippets/a/claim_line.py", "passed", ["accepts: yes", "done"]),
        row("snippets/a/claim_fails.py", "failed", [], "AssertionError: extend this claim"),
        row("snippets/a/kernel.py", "passed", ["figures moved again"]),
        row("snippets/a/claim_new.py", "passed", ["new"]),
    ]}  # fmt: skip
    changed = dict(add_lock.claims_changed(old, new))
    assert set(changed) == {
        "snippets/a/claim_line.py",
        "snippets/a/claim_fails.py",
        "snippets/a/claim_new.py",
    }
    assert changed["snippets/a/claim_line.py"] == ["- accepts: no", "+ accepts: yes"]
    assert any("extend this claim" in line for line in changed["snippets/a/claim_fails.py"])
