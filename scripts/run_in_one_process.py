"""Run snippet files one after another in this one process, each as its own ``__main__``, and
print one JSON line per file: its exit code, what it printed to stdout and to stderr.

    TRITON_INTERPRET=1 python scripts/run_in_one_process.py a.py b.py b.py:zh ...

Why: starting Python and importing torch and triton costs about 3 s of CPU a process, more than
an exercise file's own checks. The test suite runs the exercise files this way, once per lock
(tests/conftest.py), and so keeps CI within its budget; the runner (scripts/verify_snippets.py)
still runs every file in a process of its own, as a reader does, for the records. A file here
runs from its text, with ``__file__`` its path; ``path:zh`` runs the copy the Chinese page offers
(snippet_copies.localized: its LANGUAGE line says "zh"). Files that register operators in
torch.library (the same name twice fails) must not share a process.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import snippet_copies as copies  # noqa: E402


def run_file(path: str, language: str) -> dict:
    text = copies.localized(Path(path).read_text(encoding="utf-8"), language)
    out, err = io.StringIO(), io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = compile(text, path, "exec")
            exec(code, {"__name__": "__main__", "__file__": path, "__builtins__": __builtins__})
            returncode = 0
        except SystemExit as exc:  # what `python file.py` turns into an exit status
            if exc.code is None or isinstance(exc.code, int):
                returncode = exc.code or 0
            else:
                print(exc.code, file=sys.stderr)
                returncode = 1
        except BaseException:  # noqa: BLE001 - a file that raises: its traceback, exit 1
            traceback.print_exc()
            returncode = 1
    seconds = time.perf_counter() - start
    printed = {"stdout": out.getvalue(), "stderr": err.getvalue()}
    return {"path": path, "language": language, "returncode": returncode, **printed,
            "seconds": round(seconds, 3)}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("runs", nargs="+", help="a file to run, or file:zh for its Chinese copy")
    for run in parser.parse_args(argv).runs:
        path, _, language = run.partition(":")
        print(json.dumps(run_file(path, language or "en"), ensure_ascii=False), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
