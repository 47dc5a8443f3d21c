"""Stop early, with a clear message, on a Python the pins do not cover."""

import sys

if sys.version_info < (3, 10):  # noqa: UP036 (this check is for interpreters older than the target)
    sys.exit(f"Python >= 3.10 is needed; this is {sys.version.split()[0]} ({sys.executable}).")
