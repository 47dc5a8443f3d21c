# Entry points (see README.md):
#   make serve        bilingual site on http://127.0.0.1:8000, live reload (docs toolchain only)
#   make test         the whole CPU test suite, what CI runs (.ci/run)
#   make check        the fast part for authors: snippets, build, parity, no browser, no deploy
#   make records-cpu  re-run the snippets on this CPU for every lock and rewrite their CPU records
#   make publish      build every lock as a mike version into the local gh-pages branch and serve it
#   make gpu-verify   on a CUDA machine with the current lock: run every snippet, write the record
#   make history      every CPU claim under each torch release from 2.5 on (not CI; GBs of downloads)
#   make add-lock TORCH=2.16.0   write, install and run a new lock from the index's metadata
# Each environment is created or refreshed from exact pins in requirements/ (uv pip sync).

PYTHON ?= python3
UV_VENV := .venv-uv
UV := $(UV_VENV)/bin/uv
DOCS_VENV := .venv-docs
TEST_VENV := .venv
LOCK_VENVS := $(patsubst requirements/lock-%.txt,.venv-locks/%/.synced,$(wildcard requirements/lock-*.txt))
PIP_FLAGS := --disable-pip-version-check --no-input --quiet

.PHONY: serve test check envs build records-cpu publish gpu-verify history add-lock clean

$(UV):
	$(PYTHON) scripts/check_python.py
	$(PYTHON) -m venv $(UV_VENV)
	$(UV_VENV)/bin/python -m pip install $(PIP_FLAGS) uv==0.13.8

$(DOCS_VENV)/.synced: requirements/docs.txt | $(UV)
	test -x $(DOCS_VENV)/bin/python || $(UV) venv --quiet --python $(PYTHON) $(DOCS_VENV)
	$(UV) pip sync --quiet --compile-bytecode --python $(DOCS_VENV)/bin/python requirements/docs.txt
	touch $@

$(TEST_VENV)/.synced: requirements/test.txt | $(UV)
	test -x $(TEST_VENV)/bin/python || $(UV) venv --quiet --python $(PYTHON) $(TEST_VENV)
	$(UV) pip sync --quiet --compile-bytecode --python $(TEST_VENV)/bin/python requirements/test.txt
	touch $@

# One environment per lock other than the current one (the current lock's is .venv itself):
# torch, triton and numpy at that lock's pins, to run the snippets on the CPU.
.venv-locks/%/.synced: requirements/lock-%.txt | $(UV)
	test -x .venv-locks/$*/bin/python || $(UV) venv --quiet --python $(PYTHON) .venv-locks/$*
	$(UV) pip sync --quiet --compile-bytecode --python .venv-locks/$*/bin/python $<
	touch $@

# axe-core for the accessibility check in the browser test (package-lock.json pins it).
node_modules/.synced: package.json package-lock.json
	npm ci --no-audit --no-fund --silent
	touch $@

serve: $(DOCS_VENV)/.synced
	$(DOCS_VENV)/bin/mkdocs serve --dev-addr 127.0.0.1:8000 --livereload

build: $(DOCS_VENV)/.synced
	$(DOCS_VENV)/bin/mkdocs build --strict

test: $(TEST_VENV)/.synced $(LOCK_VENVS) node_modules/.synced
	$(TEST_VENV)/bin/python -m pytest

check: $(TEST_VENV)/.synced $(LOCK_VENVS)
	$(TEST_VENV)/bin/python -m pytest -m "not browser and not slow"

# The Python environments alone (.ci/run makes them while apt installs the browser).
envs: $(TEST_VENV)/.synced $(LOCK_VENVS)

records-cpu: $(TEST_VENV)/.synced $(LOCK_VENVS)
	$(TEST_VENV)/bin/python scripts/verify_snippets.py --cpu
	for venv in $(dir $(LOCK_VENVS)); do \
	  $$venv/bin/python scripts/verify_snippets.py --cpu --lock $$(basename $$venv) || exit 1; \
	done

publish: $(TEST_VENV)/.synced
	$(TEST_VENV)/bin/python scripts/deploy_docs.py --all --serve

# On a CUDA machine with the lock's torch/triton: run every snippet natively, write the record.
gpu-verify: $(TEST_VENV)/.synced
	$(TEST_VENV)/bin/python scripts/verify_snippets.py

# Every CPU claim under the newest patch of each torch minor from 2.5 on, with the triton it pins:
# locks/history/torch-<version>.json. Resumable; one environment per release, deleted after it.
RELEASE ?=
history: | $(UV)
	$(PYTHON) scripts/history_run.py $(if $(RELEASE),--release $(RELEASE))

# A new lock in one command: lock file and requirements from the index's metadata, its
# environment, its CPU records, and every claim whose output changed against the current lock.
TORCH ?=
add-lock: | $(UV)
	$(PYTHON) scripts/add_lock.py --torch $(TORCH)

clean:
	rm -rf site build
