"""Stop early, with a clear message, on a Python the docs and test toolchain does not support.

The toolchain (mkdocs-material 9.8, pymdown-extensions 13.1) needs Python 3.11.5 or newer. A
reader's Python for the snippets is another matter: each lock states its own range.
"""

import sys

if sys.version_info < (3, 11, 5):  # noqa: UP036 (this check is for interpreters older than that)
    sys.exit(
        f"Python >= 3.11.5 is needed for the docs toolchain; this is {sys.version.split()[0]} "
        f"({sys.executable}). Use another one: make test PYTHON=python3.12"
    )
