"""What a reader takes from a page to run a snippet elsewhere: its complete file, and, for a
snippet that reads files beside it, one download of exactly the files its record binds.

The rule it enforces: a copy runs on its own. The complete file is the snippet without section
or annotation markers, with the lock's Python range and pins in its PEP 723 block. A snippet
that declares ``files = [...]`` also gets ``<name>.zip``: a folder named after it holding the
complete file and each declared file at its place beside it (a declared file that is itself a
snippet is its complete file too); the same bytes on every build (fixed dates and modes), so a
publish commits no change. ``run_commands`` is how the page says to run it, and what the test
suite runs on the CPU, in an empty folder holding only the archive (tests/conftest.py), and the
browser test checks that the archive served beside the page is that one (tests/test_browser.py).
What no archive carries (a compiler, a second torch install) is the snippet's declared
``also-needs`` sentence, shown beside its complete file (scripts/site_hooks.py).
"""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path

import snippet_records as records

SECTION_MARKER = re.compile(r"^\s*# --8<-- \[(start|end):[\w-]+\]\s*$")
ANNOTATION_MARKER = re.compile(r"\s*# \(\d+\)!")
ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # the earliest a zip can hold: the same bytes on every build


# An exercise file speaks the reader's language: one line, which the Chinese page's copy changes.
LANGUAGE_LINE = re.compile(r'(?m)^LANGUAGE = "en"(?=  #|$)')


def localized(text: str, lang: str) -> str:
    """The file as the page in ``lang`` offers it: an exercise's ``LANGUAGE = "en"`` line says
    "zh" on a Chinese page (its messages and hints are then in Chinese); other files as they are."""
    return LANGUAGE_LINE.sub(f'LANGUAGE = "{lang}"', text, count=1) if lang != "en" else text


def runnable_file(path: str, lock: records.Lock, lang: str = "en") -> str:
    """The file a reader copies: section and annotation markers removed, the lock's pins in.

    Only the PEP 723 block's ``requires-python`` and ``dependencies`` lines differ from the
    source beyond the markers: they carry the lock's Python range and exact versions.
    """
    text = localized((records.REPO_ROOT / path).read_text(encoding="utf-8"), lang)
    needs = records.read_snippet_needs(path)
    block = records.script_metadata_block(text, path)
    header = block.group(0)
    header = re.sub(
        r'(?m)^# requires-python = ".*"$', f'# requires-python = "{lock.python}"', header
    )
    pins = ", ".join(f'"{p}"' for p in lock.pins(needs.dependencies))
    header = re.sub(r"(?m)^# dependencies = \[.*\]$", f"# dependencies = [{pins}]", header)
    text = text[: block.start()] + header + text[block.end() :]
    lines = [
        ANNOTATION_MARKER.sub("", line)
        for line in text.splitlines()
        if not SECTION_MARKER.match(line)
    ]
    return "\n".join(lines).strip() + "\n"


def has_archive(path: str) -> bool:
    """Whether the snippet reads files beside it, and so is offered as a download."""
    return bool(records.read_snippet_needs(path).files)


def archive_name(path: str) -> str:
    return f"{Path(path).stem}.zip"


def archive_members(path: str, lock: records.Lock) -> dict[str, bytes]:
    """The archive's files by their path inside it, ``<stem>/...``: the snippet and the files its
    record binds (records.snippet_sha256), nothing else."""
    needs = records.read_snippet_needs(path)
    folder, stem = path.rsplit("/", 1)[0], Path(path).stem
    snippets = set(records.list_snippets())
    members = {}
    for rel in (path, *needs.files):
        inside = f"{stem}/{rel.removeprefix(folder + '/')}"
        if rel in snippets:
            members[inside] = runnable_file(rel, lock).encode("utf-8")
        else:
            members[inside] = (records.REPO_ROOT / rel).read_bytes()
    return members


def archive_bytes(path: str, lock: records.Lock) -> bytes:
    """The zip a page offers for ``path`` under ``lock``: the same bytes on every build."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in sorted(archive_members(path, lock).items()):
            info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return buffer.getvalue()


def run_commands(path: str) -> list[str]:
    """How the page says to run the download, in the folder it was saved to, on a CPU: unpack
    it with Python's own zipfile (no unzip needed), go into its folder, run the file (through
    the Triton interpreter where the file runs on a CPU that way)."""
    needs = records.read_snippet_needs(path)
    name, stem = Path(path).name, Path(path).stem
    interpret = "TRITON_INTERPRET=1 " if needs.runs_on_cpu and needs.cpu_interpreter else ""
    return [
        f"python -m zipfile -e {archive_name(path)} .",
        f"cd {stem}",
        f"{interpret}python {name}",
    ]
