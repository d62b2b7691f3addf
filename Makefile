# Two set-up commands on a fresh machine: `make demo` and `make test` (ruff, then the whole test suite).
# Each creates .venv on first use and reinstalls when pyproject.toml changes.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-dev
DOCS_STAMP := $(VENV)/.installed-docs

.PHONY: demo test docs bench venv clean

# pip byte-compiles what it installs one file at a time (~25 s of a fresh venv's ~60 s): installed without, the
# packages are byte-compiled after on every core (unchanged files are skipped)
INSTALL  := $(BIN)/python -m pip install --quiet --no-compile
BYTECODE := $(BIN)/python -m compileall -qq -j 0 $(VENV)/lib

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(INSTALL) --upgrade pip
	$(INSTALL) -e '.[dev]'
	$(BYTECODE)
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/python missions/advitiy_detumble.py

# pytest: a worker per core and one more, a file per worker, the slowest tests said. The suite waits at times (run
# time limits, child processes, Chromium), which left 10-14 % of two cores idle with a worker per core (342 -> 318 s
# on 2 cores, warm)
test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/attsim compile --jobs $$(nproc 2>/dev/null || echo 2)  # every compiled unit once, in parallel: the suite then loads them
	$(BIN)/python -m pytest -n $$(( $$(nproc 2>/dev/null || echo 2) + 1 )) --dist loadfile --durations=15

$(DOCS_STAMP): pyproject.toml $(STAMP)
	$(INSTALL) -e '.[docs]'
	$(BYTECODE)
	touch $(DOCS_STAMP)

# The documentation site in docs/_build/html (open index.html; works offline). Warnings are errors. The guide's
# examples run while it builds, interpreted (no compiler) and without the background compile.
docs: $(DOCS_STAMP)
	ATTSIM_BACKEND=interpreted ATTSIM_BACKGROUND_COMPILE=0 \
		$(BIN)/sphinx-build -W --keep-going -q -b html docs docs/_build/html
	@echo "docs: open docs/_build/html/index.html"

# Benchmarks: the peer (Basilisk, package `bsk`) is optional; when it cannot be
# installed the scripts still run and say that the peer was skipped.
bench: $(STAMP)
	-$(BIN)/python -m pip install --quiet -e '.[bench]'
	$(BIN)/python tools/bench_plant.py
	$(BIN)/python tools/study_integrators.py
	$(BIN)/python tools/bench_mission.py
	$(BIN)/python tools/bench_report.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache docs/_build
