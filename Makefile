# Two commands do everything on a fresh Debian 12 machine (as root):
#   make run    set up, then measure the default suite on local ranks and summarize
#   make test   set up, then run every test
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test setup system engines clean

run: setup
	$(BIN)/mpiscope run --suite quick
	$(BIN)/mpiscope report latest -o mpiscope-runs/report.html

test: setup
	$(BIN)/pytest -q

setup: system $(VENV)/.installed engines

system:
	@bash scripts/setup-system.sh

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	touch $@

engines:
	@$(MAKE) -s -C engine MPI=openmpi BUILD=$(CURDIR)/build/openmpi
	@$(MAKE) -s -C engine MPI=mpich BUILD=$(CURDIR)/build/mpich
	@$(MAKE) -s -C cluster BUILD=$(CURDIR)/build/cluster

clean:
	rm -rf build $(VENV)
