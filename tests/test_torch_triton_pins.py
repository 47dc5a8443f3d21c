"""scripts/torch_triton_pins.py picks the wheel pip would install, build-tagged ones included."""

from __future__ import annotations

import sys

from conftest import REPO

sys.path.insert(0, str(REPO / "scripts"))
import torch_triton_pins as pins  # noqa: E402


def files(*names: str, yanked: str = "") -> list[dict]:
    return [{"filename": n, "yanked": n == yanked} for n in names]


def test_a_build_tagged_wheel_wins_as_pip_takes_it():
    """torch 2.10.0 has torch-2.10.0-3-cp311-...: pip prefers the highest build number."""
    index = files(
        "torch-2.10.0-cp311-cp311-manylinux_2_28_x86_64.whl",
        "torch-2.10.0-3-cp311-cp311-manylinux_2_28_x86_64.whl",
        "torch-2.10.0-2-cp311-cp311-manylinux_2_28_x86_64.whl",
        "torch-2.10.0-3-cp311-cp311-manylinux_2_28_aarch64.whl",
        "torch-2.10.0-12-cp312-cp312-manylinux_2_28_x86_64.whl",
        "torch-2.10.1-9-cp311-cp311-manylinux_2_28_x86_64.whl",
    )
    wheel = pins.linux_wheel(index, "torch", "2.10.0", "x86_64")
    assert wheel["filename"] == "torch-2.10.0-3-cp311-cp311-manylinux_2_28_x86_64.whl"


def test_build_numbers_compare_as_numbers_and_yanked_wheels_are_skipped():
    index = files(
        "torch-2.10.0-9-cp311-cp311-manylinux_2_28_x86_64.whl",
        "torch-2.10.0-10-cp311-cp311-manylinux_2_28_x86_64.whl",
        "torch-2.10.0-11-cp311-cp311-manylinux_2_28_x86_64.whl",
        yanked="torch-2.10.0-11-cp311-cp311-manylinux_2_28_x86_64.whl",
    )
    wheel = pins.linux_wheel(index, "torch", "2.10.0", "x86_64")
    assert wheel["filename"] == "torch-2.10.0-10-cp311-cp311-manylinux_2_28_x86_64.whl"
    assert pins.build_number(None) < pins.build_number("1") < pins.build_number("1a")


def test_without_build_tags_the_first_listed_wheel_is_kept():
    index = files(
        "torch-2.5.0-cp311-cp311-manylinux1_x86_64.whl",
        "torch-2.5.0-cp311-cp311-manylinux_2_17_x86_64.whl",
        "torch-2.5.0-cp310-cp310-manylinux1_x86_64.whl",
    )
    wheel = pins.linux_wheel(index, "torch", "2.5.0", "x86_64")
    assert wheel["filename"] == "torch-2.5.0-cp311-cp311-manylinux1_x86_64.whl"
    assert pins.linux_wheel(index, "torch", "2.5.0", "aarch64") is None
