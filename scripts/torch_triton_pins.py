"""Which triton each torch release pins, read from the wheels' own metadata on PyPI.

    python scripts/torch_triton_pins.py            # write snippets/compatibility/pins.json
    python scripts/torch_triton_pins.py --check    # fail if the committed file is out of date

For every final torch release from 2.5.0 to the newest on the index, it reads the METADATA file of
the CPython 3.11 Linux wheels (x86_64 and aarch64) and keeps the ``Requires-Dist: triton...`` line
with its environment marker and ``Requires-Python``. For every triton release those lines name, it
reads the Linux x86_64 wheel's METADATA (``Requires-Python``, the Python classifiers) and lists the
wheel tags the index offers. The result, with the date it was read, is the data file the
compatibility page's table comes from (``snippets/compatibility/pins_table.py`` prints it).

How: PyPI's JSON Simple API (PEP 691) lists each release's files, and PyPI serves a wheel's
METADATA file next to the wheel (PEP 658: ``<wheel url>.metadata``), the same bytes as the
``*.dist-info/METADATA`` inside the wheel. Where it does not (some torch wheels answered 404 when
this was written), the script reads that member from the wheel itself with HTTP range requests:
the zip directory and one small file, not the whole wheel (about half a GB for torch). No pip:
this machine's pip configuration caps torch below the newest release, and pip would resolve for
this machine only. Standard library only.
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import re
import sys
import urllib.error
import urllib.request
import zipfile
from email.parser import Parser
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
OUT = REPO_ROOT / "snippets" / "compatibility" / "pins.json"
INDEX = "https://pypi.org/simple/{name}/"
FIRST_TORCH = (2, 5, 0)
PYTHON_TAG = "cp311"  # every torch release from 2.5 to today has CPython 3.11 wheels
MACHINES = ("x86_64", "aarch64")


def fetch(url: str, accept: str | None = None, byte_range: str | None = None) -> bytes:
    headers = {"Accept": accept} if accept else {}
    if byte_range:
        headers["Range"] = f"bytes={byte_range}"
    request = urllib.request.Request(url, headers=headers)
    with urllib.request.urlopen(request, timeout=120) as response:
        return response.read()


class RemoteFile(io.RawIOBase):
    """A wheel on the index, read through HTTP range requests, as zipfile asks for its parts."""

    def __init__(self, url: str, size: int) -> None:
        self.url, self.size, self.pos = url, size, 0

    def seekable(self) -> bool:
        return True

    def readable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        self.pos = {io.SEEK_SET: 0, io.SEEK_CUR: self.pos, io.SEEK_END: self.size}[whence] + offset
        return self.pos

    def read(self, n: int = -1) -> bytes:
        end = self.size if n is None or n < 0 else min(self.size, self.pos + n)
        if end <= self.pos:
            return b""
        data = fetch(self.url, byte_range=f"{self.pos}-{end - 1}")
        self.pos += len(data)
        return data

    def readinto(self, buffer) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def metadata_text(file: dict) -> str:
    """A wheel's METADATA: the PEP 658 file next to the wheel, or, where the index does not serve
    it, the *.dist-info/METADATA member read from the wheel itself with range requests."""
    try:
        return fetch(file["url"] + ".metadata").decode("utf-8")
    except urllib.error.HTTPError as exc:
        if exc.code != 404:
            raise
    with zipfile.ZipFile(RemoteFile(file["url"], file["size"])) as whl:
        name = next(n for n in whl.namelist() if re.fullmatch(r"[^/]+\.dist-info/METADATA", n))
        return whl.read(name).decode("utf-8")


def project_files(name: str) -> dict:
    """The PEP 691 JSON page of a project: its versions and files."""
    return json.loads(fetch(INDEX.format(name=name), "application/vnd.pypi.simple.v1+json"))


def release(version: str) -> tuple[int, ...] | None:
    """(2, 11, 0) for a final release, None for a pre-release, dev or post release."""
    return tuple(map(int, version.split("."))) if re.fullmatch(r"\d+(\.\d+)*", version) else None


def wheel_metadata(file: dict) -> dict:
    """The METADATA of one wheel (PEP 658), parsed: Requires-Dist, Requires-Python, Classifier."""
    message = Parser().parsestr(metadata_text(file), headersonly=True)
    return {
        "requires_dist": message.get_all("Requires-Dist") or [],
        "requires_python": message.get("Requires-Python"),
        "classifiers": message.get_all("Classifier") or [],
    }


def build_number(build_tag: str | None) -> tuple[int, str]:
    """A wheel's build tag as pip orders it (PEP 427: a number, then the rest as a string);
    no build tag sorts before any."""
    if build_tag is None:
        return (-1, "")
    digits = re.match(r"\d+", build_tag)[0]
    return (int(digits), build_tag[len(digits) :])


def linux_wheel(files: list[dict], name: str, version: str, machine: str) -> dict | None:
    """The CPython 3.11 Linux wheel of one release for one machine. Where wheels differ only in
    their build tag (``torch-2.10.0-3-cp311-...`` beside ``torch-2.10.0-cp311-...``), the one pip
    installs: the highest build number."""
    pattern = re.compile(
        rf"{name}-{re.escape(version)}(?:-(\d[^-]*))?-{PYTHON_TAG}-{PYTHON_TAG}"
        rf"-manylinux\S*_{machine}\.whl"
    )
    found = [
        (build_number(match[1]), i, f)
        for i, f in enumerate(files)
        if (match := pattern.fullmatch(f["filename"])) and not f.get("yanked")
    ]
    # the highest build; among equal builds, the first listed (as before build tags were read)
    return max(found, key=lambda item: (item[0], -item[1]))[2] if found else None


def triton_requirement(requires_dist: list[str]) -> dict | None:
    """The wheel's Requires-Dist line for triton: as written, and its requirement normalised
    (older wheels write ``triton (==3.1.0)``, newer ones ``triton==3.6.0``)."""
    for line in requires_dist:
        spec, _, marker = line.partition(";")
        if re.match(r"triton\b", spec.strip()):
            return {
                "requires_dist": line,
                "requirement": re.sub(r"[\s()]", "", spec),
                "marker": marker.strip(),
            }
    return None


def read_pins() -> dict:
    torch_index = project_files("torch")
    versions = sorted(
        (v for v in torch_index["versions"] if release(v) and release(v) >= FIRST_TORCH),
        key=release,
    )
    torch_rows = []
    for version in versions:
        row: dict = {"version": version}
        for machine in MACHINES:
            wheel = linux_wheel(torch_index["files"], "torch", version, machine)
            if wheel is None:
                row[machine] = None
                continue
            meta = wheel_metadata(wheel)
            row[machine] = {
                "wheel": wheel["filename"],
                "triton": triton_requirement(meta["requires_dist"]),
            }
            row["requires_python"] = meta["requires_python"]
        torch_rows.append(row)
        print(f"torch {version}: {row['x86_64'] and row['x86_64']['triton']}", file=sys.stderr)

    triton_index = project_files("triton")
    named = set()
    for row in torch_rows:
        for machine in MACHINES:
            triton = (row.get(machine) or {}).get("triton")
            if triton:
                named.add(re.fullmatch(r"triton(==|~=)([\d.]+)", triton["requirement"])[2])
    triton_rows = []
    for version in sorted(named, key=release):
        files = [
            f
            for f in triton_index["files"]
            if f["filename"].startswith(f"triton-{version}-")
            and f["filename"].endswith(".whl")
            and not f.get("yanked")
        ]
        tags = sorted(
            {"-".join(f["filename"][:-4].split("-")[2:4]) for f in files},
            key=lambda tag: (int(re.match(r"cp3(\d+)", tag)[1]), tag),
        )
        platforms = sorted({f["filename"][:-4].split("-")[4] for f in files})
        x86 = [f for f in files if f["filename"].endswith("_x86_64.whl")]
        meta = wheel_metadata(x86[0]) if x86 else {"requires_python": None, "classifiers": []}
        python_classifiers = [
            c.rsplit(" :: ", 1)[1]
            for c in meta["classifiers"]
            if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)
        ]
        triton_rows.append(
            {
                "version": version,
                "requires_python": meta["requires_python"],
                "python_classifiers": python_classifiers,
                "wheel_tags": tags,
                "platforms": platforms,
            }
        )
        print(f"triton {version}: {meta['requires_python']} {tags}", file=sys.stderr)
    newest = {
        name: max((v for v in index["versions"] if release(v)), key=release)
        for name, index in (("torch", torch_index), ("triton", triton_index))
    }
    return {
        "read": dt.datetime.now(dt.timezone.utc).date().isoformat(),
        "source": (
            "PyPI: the JSON Simple API (PEP 691) for the files, and each wheel's METADATA, from "
            "the PEP 658 file or else from the wheel with range requests "
            "(scripts/torch_triton_pins.py)"
        ),
        "python_tag": PYTHON_TAG,
        "newest": newest,
        "torch": torch_rows,
        "triton": triton_rows,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="read the index again and fail if anything but the date differs from the file",
    )
    args = parser.parse_args(argv)
    pins = read_pins()
    if args.check:
        committed = json.loads(OUT.read_text(encoding="utf-8"))
        same = {**committed, "read": None} == {**pins, "read": None}
        print(
            f"{OUT.relative_to(REPO_ROOT)} (read {committed['read']}): "
            + ("up to date" if same else "out of date; run without --check and commit it")
        )
        return 0 if same else 1
    OUT.write_text(json.dumps(pins, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {OUT.relative_to(REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
