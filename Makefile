# archbench: build the C servers, benchmark them with wrk through the papermill
# notebooks, analyse the campaign and build paper/report.pdf.
#
#   make all                  setup, servers, trials, analysis, paper (PROFILE=default)
#   make test                 C build (-Werror) + ctest + pytest
#   make paper                analysis + LaTeX only (from data/raw/reference on a fresh clone)
#   make help                 every target and variable
#
# Variables: PROFILE=smoke|default|full, CAMPAIGN, REPORT_CAMPAIGN, PYTHON, VENV, BUILD_DIR, JOBS.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := all
# The steps of `all` run in the order listed, even under `make -j`.
.NOTPARALLEL:
.DELETE_ON_ERROR:

PROFILE ?= default
ifeq ($(filter $(PROFILE),smoke default full),)
$(error PROFILE must be smoke, default or full (got '$(PROFILE)'))
endif

# Stable across invocations, so that an interrupted `make trials` resumes the same campaign.
HOST_SHORT := $(shell hostname -s 2>/dev/null || uname -n | cut -d. -f1)
CAMPAIGN ?= $(PROFILE)-$(HOST_SHORT)
# The campaign the report is built from: this machine's if it has one, else the
# reference campaign shipped in git. Evaluated when used, i.e. after `trials`.
REPORT_CAMPAIGN ?= $(shell if [ -f 'data/raw/$(CAMPAIGN)/campaign.json' ]; then echo '$(CAMPAIGN)'; else echo reference; fi)

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
VENV_STAMP := $(VENV)/.archbench-setup
BUILD_DIR ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_CONFIGURE := cmake -S servers_c -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release -DARCHBENCH_WERROR=ON

ifneq ($(filter-out build build-%,$(notdir $(abspath $(BUILD_DIR)))),)
$(error BUILD_DIR must be named build or build-something (make clean removes it), got '$(BUILD_DIR)')
endif

SETUP := PYTHON='$(PYTHON)' VENV='$(VENV)' scripts/setup.sh
LATEX_AUX := aux bbl bcf blg fdb_latexmk fls log out run.xml toc synctex.gz
STARTED := $(shell date +%s)

.PHONY: all setup venv servers trials analysis paper test bench clean distclean help

all: setup servers trials analysis paper
	@echo "==> all: done in $$(( $$(date +%s) - $(STARTED) )) s: paper/report.pdf from campaign $(REPORT_CAMPAIGN) (profile $(PROFILE))"

# System tools (apt-get as root, else the command to run) and the pinned .venv.
setup:
	@echo "==> setup: system tools and $(VENV) from requirements.txt (scripts/setup.sh)"
	@$(SETUP) all

# The venv alone: what analysis and paper need. Redone when the pins change.
venv: $(VENV_STAMP)
$(VENV_STAMP): requirements.txt pyproject.toml scripts/setup.sh
	@echo "==> venv: $(VENV) from requirements.txt (scripts/setup.sh venv)"
	@$(SETUP) venv

servers:
	@echo "==> servers: configure servers_c (Release, warnings fatal) and build $(BUILD_DIR)/bin/<architecture>"
	$(CMAKE_CONFIGURE)
	cmake --build $(BUILD_DIR) --parallel $(JOBS)
	@echo "    built: $$(cd $(BUILD_DIR)/bin && ls | grep -v '^test_' | tr '\n' ' ')"

# The executed notebook is kept in data/raw/$(CAMPAIGN)/executed/. (The runner raises
# the open-file soft limit itself as far as the connection counts need, and records it.)
trials: servers $(VENV_STAMP)
	@echo "==> trials: campaign $(CAMPAIGN), profile $(PROFILE) -> data/raw/$(CAMPAIGN)/ (finished trials are kept: re-running resumes)"
	$(PY) -m archbench notebook run_trials --campaign $(CAMPAIGN) -p profile $(PROFILE) -p campaign $(CAMPAIGN)

# Reads data/raw only: its executed copy goes to data/processed/executed/ (regenerable),
# so that `make paper` leaves the reference campaign in git untouched.
analysis: $(VENV_STAMP)
	@echo "==> analysis: notebooks/analyze.ipynb on campaign $(REPORT_CAMPAIGN) -> data/processed/, paper/generated/, paper/figures/"
	@test -f 'data/raw/$(REPORT_CAMPAIGN)/campaign.json' || \
	  { echo "no campaign data/raw/$(REPORT_CAMPAIGN)/campaign.json (run make trials, or set REPORT_CAMPAIGN)" >&2; exit 1; }
	$(PY) -m archbench notebook analyze --campaign $(REPORT_CAMPAIGN) -p campaign $(REPORT_CAMPAIGN) \
	  --output-dir data/processed/executed

paper: analysis
	@echo "==> paper: latexmk in paper/ -> paper/report.pdf"
	cd paper && latexmk -pdf -interaction=nonstopmode -halt-on-error report.tex
	@echo "    wrote paper/report.pdf (campaign $(REPORT_CAMPAIGN))"

test: setup servers
	@echo "==> test: ctest (unit tests and conformance of every architecture)"
	cd $(BUILD_DIR) && ctest --output-on-failure
	@echo "==> test: pytest tests/"
	$(VENV)/bin/pytest -q tests/

# Every architecture and nginx, interleaved, 5 trials each of wrk -t1 -c100 -d5s at pipeline
# depth 1 and 16: a real campaign kept in data/raw/bench-<host>-<UTC>, then the table of
# medians, the ratios to nginx and the issue's targets (about 11 minutes).
bench: servers $(VENV_STAMP)
	@echo "==> bench: python -m archbench bench (a new campaign in data/raw/bench-<host>-<UTC>)"
	$(PY) -m archbench bench

clean:
	@echo "==> clean: $(BUILD_DIR)/, data/processed/, paper/generated/, paper/figures/, LaTeX output (data/raw is kept)"
	rm -rf -- '$(BUILD_DIR)' data/processed paper/generated paper/figures
	rm -f -- paper/report.pdf $(addprefix paper/*.,$(LATEX_AUX))

distclean: clean
	@echo "==> distclean: $(VENV)/"
	rm -rf -- '$(VENV)'

help:
	@echo "Targets:"
	@echo "  all        setup, servers, trials, analysis, paper (PROFILE=$(PROFILE))"
	@echo "  setup      system tools (apt-get as root, else prints the command) and $(VENV) (scripts/setup.sh)"
	@echo "  venv       only $(VENV) from requirements.txt (re-run when the pins change)"
	@echo "  servers    cmake -S servers_c -B $(BUILD_DIR) (Release, -Werror) + build: $(BUILD_DIR)/bin/<architecture>"
	@echo "  trials     notebooks/run_trials.ipynb for CAMPAIGN=$(CAMPAIGN) (resumes if interrupted)"
	@echo "  analysis   notebooks/analyze.ipynb for REPORT_CAMPAIGN=$(REPORT_CAMPAIGN)"
	@echo "  paper      analysis, then latexmk -> paper/report.pdf"
	@echo "  test       C build (-Werror), ctest --output-on-failure, pytest -q tests/"
	@echo "  bench      every architecture and nginx at depth 1 and 16; medians, ratios to nginx, targets"
	@echo "  clean      remove build and generated outputs (never data/raw)"
	@echo "  distclean  clean, and remove $(VENV)"
	@echo "Variables: PROFILE=smoke|default|full  CAMPAIGN  REPORT_CAMPAIGN  PYTHON=$(PYTHON)  VENV  BUILD_DIR  JOBS=$(JOBS)"
