# Two entry points (see README.md):
#   make serve   bilingual site on http://127.0.0.1:8000 with live reload (docs toolchain only)
#   make test    the whole CPU test suite (snippets under TRITON_INTERPRET=1, site build, parity, browser)
# Each creates or refreshes its project-local virtual environment from the exact pins in requirements/.

PYTHON ?= python3
DOCS_VENV := .venv-docs
TEST_VENV := .venv
PIP_FLAGS := --disable-pip-version-check --no-input

.PHONY: serve test build gpu-verify clean

$(DOCS_VENV)/.synced: requirements/docs.txt
	$(PYTHON) scripts/check_python.py
	test -x $(DOCS_VENV)/bin/python || $(PYTHON) -m venv $(DOCS_VENV)
	$(DOCS_VENV)/bin/python -m pip install $(PIP_FLAGS) -r requirements/docs.txt
	touch $@

$(TEST_VENV)/.synced: requirements/test.txt requirements/docs.txt
	$(PYTHON) scripts/check_python.py
	test -x $(TEST_VENV)/bin/python || $(PYTHON) -m venv $(TEST_VENV)
	$(TEST_VENV)/bin/python -m pip install $(PIP_FLAGS) -r requirements/test.txt
	touch $@

serve: $(DOCS_VENV)/.synced
	$(DOCS_VENV)/bin/mkdocs serve --dev-addr 127.0.0.1:8000 --livereload

build: $(DOCS_VENV)/.synced
	$(DOCS_VENV)/bin/mkdocs build --strict

test: $(TEST_VENV)/.synced
	$(TEST_VENV)/bin/python -m pytest

# On a CUDA machine with the lock's torch/triton: run every snippet natively, write the record.
gpu-verify: $(TEST_VENV)/.synced
	$(TEST_VENV)/bin/python scripts/verify_snippets.py

clean:
	rm -rf site build
