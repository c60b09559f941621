# archbench: build the C servers, benchmark them with wrk through the papermill
# notebooks, analyse the campaign and build paper/report.pdf.
#
# `make help` lists every target and variable from this file's own `## ` comments: after a target's
# prerequisites (`target: prerequisites ## what it does`), and on a line of its own for a variable. A target
# without one is an internal step. tests/test_catalogue.py checks the study targets and their help against the
# campaign catalogue (archbench/config/catalogue.py and the studies' profiles; python -m archbench campaigns
# --catalogue prints it).

# This file, before any -include adds to MAKEFILE_LIST: what `make help` reads.
SELF := $(lastword $(MAKEFILE_LIST))
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := all
# The steps of `all` run in the order listed, even under `make -j`.
.NOTPARALLEL:
.DELETE_ON_ERROR:

## PROFILE=smoke|default|full  the main campaign's profile for all, trials and studies (default: default)
PROFILE ?= default
ifeq ($(filter $(PROFILE),smoke default full),)
$(error PROFILE must be smoke, default or full (got '$(PROFILE)'))
endif

# Where the trials run and on which CPUs (empty: the defaults, i.e. loopback and the split computed from this
# machine's CPU topology, which on 2 CPUs is server CPU 0, load CPU 1, wrk -t1).
## PLACEMENT=loopback|netns|ssh  LINK='1gbit' (netns only)  HOSTS=hosts.toml (ssh: the inventory)
## SERVER_CPUS=0-7  LOAD_CPUS=8-15  LOAD_THREADS=8  (default: from this machine's CPU topology)
PLACEMENT ?=
LINK ?=
HOSTS ?=
SERVER_CPUS ?=
LOAD_CPUS ?=
LOAD_THREADS ?=
TRIAL_OPTIONS := $(if $(PLACEMENT),-p placement '$(PLACEMENT)') $(if $(LINK),-p link '$(LINK)') \
  $(if $(HOSTS),-p hosts '$(HOSTS)') \
  $(if $(SERVER_CPUS),-p server_cpus '$(SERVER_CPUS)') $(if $(LOAD_CPUS),-p load_cpus '$(LOAD_CPUS)') \
  $(if $(LOAD_THREADS),-p load_threads '$(LOAD_THREADS)')

# Stable across invocations, so that an interrupted `make trials` resumes the same campaign; a campaign in
# network namespaces is another campaign than the loopback one.
HOST_SHORT := $(shell hostname -s 2>/dev/null || uname -n | cut -d. -f1)
## CAMPAIGN=NAME  the campaign make trials writes (default: <profile>[-<placement>]-<host>)
CAMPAIGN ?= $(PROFILE)$(if $(filter netns ssh,$(PLACEMENT)),-$(PLACEMENT))-$(HOST_SHORT)
# Every campaign the report can read is declared in the catalogue (archbench/config/catalogue.py), and chosen in
# one place, `python -m archbench campaigns`, the same for make, the notebooks and the command line: this
# machine's (CAMPAIGN first for the main comparison), else the one shipped in git. CAMPAIGNS overrides any of
# them in one mapping:
#   make paper CAMPAIGNS='main=reference,echo=echo-lab,latency=latency-lab'
# (keys: main and each study with a campaign of its own; `python -m archbench campaigns` lists them).
## CAMPAIGNS='main=NAME,echo=NAME,...'  which campaign each part of the report reads (default: this machine's,
##     else the shipped one; python -m archbench campaigns prints the keys and the choice)
CAMPAIGNS ?=

## PYTHON=python3  VENV=.venv  BUILD_DIR=build  JOBS=<CPUs>  the interpreter, the venv, the build, its jobs
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
.PHONY: test-sanitize fuzz lint test-unit test-slow check FORCE

# After each step of `all`, how long it took (all-after-STEP), and the list of them at the end: where the time
# of `make all` goes. The recipe is expanded when it runs, so $(shell date) is the time the step ended.
ALL_STEPS := setup servers trials studies analysis paper
STEP_ENDED := $(STARTED)
STEP_TIMES :=
comma := ,
space := $(subst ,, )
all: $(foreach step,$(ALL_STEPS),$(step) all-after-$(step)) ## setup, servers, trials, studies, analysis, paper (PROFILE; about 15 min for default)
	@echo "==> all: done in $$(( $$(date +%s) - $(STARTED) )) s ($(subst ~, ,$(subst $(space),$(comma)$(space),$(strip $(STEP_TIMES))))): paper/report.pdf (profile $(PROFILE); campaigns in data/processed/campaigns.json)"

all-after-%:
	$(eval STEP_NOW := $(shell date +%s))
	$(eval STEP_TOOK := $(shell echo $$(( $(STEP_NOW) - $(STEP_ENDED) ))))
	@echo "    $* took $(STEP_TOOK) s ($$(( $(STEP_NOW) - $(STARTED) )) s since make all started)"
	$(eval STEP_TIMES += $*~$(STEP_TOOK)~s)
	$(eval STEP_ENDED := $(STEP_NOW))

# System tools (apt-get as root, else the command to run), the pinned .venv and oha. `make all` leaves oha out
# (scripts/setup.sh measure) unless PROFILE=full: nothing it measures runs oha (the latency study's client is the
# project's open_loop), and building it is most of a bare machine's set-up time (4 to 7 minutes on 2 CPUs).
# `make test` leaves it out too: its one test that runs oha is marked slow, and `make test-slow` builds oha first.
SETUP_MODE ?= all
all: SETUP_MODE = $(if $(filter full,$(PROFILE)),all,measure)
test: SETUP_MODE = measure
setup: ## system tools (apt-get as root, else prints the command), the venv and oha (scripts/setup.sh)
	@echo "==> setup: system tools and $(VENV) from requirements.txt$(if $(filter all,$(SETUP_MODE)), and oha) (scripts/setup.sh $(SETUP_MODE))"
	@$(SETUP) $(SETUP_MODE)

# oha alone (scripts/setup.sh tools): the latency study runs it with -p load_generator oha, instead of open_loop.
.PHONY: tools
tools: ## oha alone, an open-loop load generator the latency study can use instead of open_loop
	@$(SETUP) tools

# The venv alone: what analysis and paper need. Redone when the pins change.
venv: $(VENV_STAMP) ## only the venv from requirements.txt (redone when the pins change)
$(VENV_STAMP): requirements.txt pyproject.toml scripts/setup.sh
	@echo "==> venv: $(VENV) from requirements.txt (scripts/setup.sh venv)"
	@$(SETUP) venv

servers: ## cmake servers_c (Release, -Werror) and build BUILD_DIR/bin/<architecture>
	@echo "==> servers: configure servers_c (Release, warnings fatal) and build $(BUILD_DIR)/bin/<architecture>"
	$(CMAKE_CONFIGURE)
	cmake --build $(BUILD_DIR) --parallel $(JOBS)
	@echo "    built: $$(cd $(BUILD_DIR)/bin && ls | grep -v '^test_' | tr '\n' ' ')"

# The executed notebook is kept in data/raw/$(CAMPAIGN)/executed/. (The runner raises
# the open-file soft limit itself as far as the connection counts need, and records it.)
trials: servers $(VENV_STAMP) ## notebooks/run_trials.ipynb: campaign CAMPAIGN of PROFILE (resumes if interrupted)
	@echo "==> trials: campaign $(CAMPAIGN), profile $(PROFILE) -> data/raw/$(CAMPAIGN)/ (finished trials are kept: re-running resumes)"
	$(PY) -m archbench notebook run_trials --campaign $(CAMPAIGN) -p profile $(PROFILE) -p campaign $(CAMPAIGN) \
	  $(TRIAL_OPTIONS)
	$(PY) -m archbench manifest --update

# Reads data/raw only: its executed copy goes to data/processed/executed/ (regenerable), so that `make paper`
# leaves the campaigns in git untouched. `python -m archbench campaigns` prints which campaign each study reads
# and why, and writes CAMPAIGNS_MK: the chosen campaigns and every file they hold. The analysis is redone (in a
# second make that reads that fragment) only when one of its inputs changed: those files, the package, the
# templates, the notebook, or the choice itself.
ANALYSIS_STAMP := data/processed/.analysis.stamp
CAMPAIGNS_MK := data/processed/.campaigns.mk
ANALYSIS_SOURCES := $(shell find archbench paper/templates -type f \( -name '*.py' -o -name '*.j2' -o -name '*.toml' -o -name '*.lua' \) 2>/dev/null) notebooks/analyze.ipynb \
  $(wildcard data/external/*.csv)
-include $(CAMPAIGNS_MK)

analysis: $(VENV_STAMP) ## notebooks/analyze.ipynb on the campaigns python -m archbench campaigns chooses
	@echo "==> analysis: which campaign each part of the report reads (python -m archbench campaigns)"
	@$(PY) -m archbench campaigns --measured-main '$(CAMPAIGN)' $(if $(CAMPAIGNS),--set '$(CAMPAIGNS)') --makefile $(CAMPAIGNS_MK)
	@$(MAKE) --no-print-directory $(ANALYSIS_STAMP)

$(ANALYSIS_STAMP): $(CAMPAIGNS_MK) $(ANALYSIS_SOURCES) $(ANALYSIS_RAW) $(VENV_STAMP)
	@echo "==> analysis: notebooks/analyze.ipynb on $(ANALYSIS_CAMPAIGNS) -> data/processed/, paper/generated/, paper/figures/"
	$(PY) -m archbench notebook analyze --campaign '$(ANALYSIS_MAIN)' -p campaigns '$(ANALYSIS_CAMPAIGNS)' \
	  --output-dir data/processed/executed
	@# The notebooks appendix again, now that analyze.ipynb itself is exported to paper/notebooks/ too.
	$(PY) -m archbench.studies.notebooks.index
	@touch $@

# latexmk is itself incremental; make runs it only when the generated inputs or the TeX sources changed.
PAPER_SOURCES := paper/report.tex paper/references.bib $(wildcard paper/templates/*/section.tex)
paper: analysis ## analysis, then latexmk -> paper/report.pdf
	@$(MAKE) --no-print-directory paper/report.pdf
paper/report.pdf: $(ANALYSIS_STAMP) $(PAPER_SOURCES)
	@echo "==> paper: latexmk in paper/ -> paper/report.pdf"
	cd paper && latexmk -pdf -interaction=nonstopmode -halt-on-error report.tex
	@touch $@
	@echo "    wrote paper/report.pdf (campaigns $(ANALYSIS_CAMPAIGNS))"

# Style and structure: ruff (lint and format), the stages' import contract (pyproject.toml) and the C
# sources' format (.clang-format). Part of `make test`.
C_SOURCES := $(shell find servers_c -name '*.[ch]' -not -path '*/corpus/*' 2>/dev/null)
lint: $(VENV_STAMP) ## ruff check and format --check, lint-imports (the stages' layers), clang-format
	@echo "==> lint: ruff check, ruff format --check, lint-imports (stage layers), clang-format"
	$(VENV)/bin/ruff check archbench tests servers_c scripts
	$(VENV)/bin/ruff format --check archbench tests servers_c scripts
	$(VENV)/bin/lint-imports
	clang-format --dry-run --Werror $(C_SOURCES)

# The tests that need no build, no wrk and no nginx (pytest marker `integration` marks the others).
test-unit: $(VENV_STAMP) ## pytest -m 'not integration': the tests that need no build, wrk or nginx (< 1 min)
	@echo "==> test-unit: pytest -m 'not integration' tests/"
	$(VENV)/bin/pytest -q -m 'not integration' tests/

# ctest runs CTEST_JOBS tests at a time: the conformance suites mostly wait on sockets and timers. pytest runs on
# PYTEST_JOBS workers (pytest-xdist); the tests that run servers on loopback all go to one of them, one after the
# other (tests/conftest.py, xdist group "loopback"). The tests marked slow are left to test-slow.
CTEST_JOBS ?= 4
PYTEST_JOBS ?= 3
test: setup servers lint ## lint, C build, ctest, pytest -m 'not slow' with the abuse suite (about 5 min)
	@echo "==> test: ctest -j $(CTEST_JOBS) (unit tests and conformance of every architecture)"
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(CTEST_JOBS)
	@echo "==> test: pytest -m 'not slow' tests/ on $(PYTEST_JOBS) workers (make test-slow runs the rest)"
	$(VENV)/bin/pytest -q -m 'not slow' -n $(PYTEST_JOBS) --dist loadgroup tests/

# The long integration tests (pytest marker `slow`), one at a time: network namespaces, ssh placement, notebook
# kernels and JupyterLab, interrupts, the whole smoke pipeline to the PDF, the PDFs of the reports built from
# unusual campaigns, and a real oha trial (oha is built first: make tools). (The abuse suite stays in `make test`:
# it writes the report's robustness appendix.)
test-slow: servers $(VENV_STAMP) tools ## pytest -m slow: namespaces, ssh, notebooks, interrupts, pipeline, PDFs, oha
	@echo "==> test-slow: pytest -m slow tests/ (namespaces, ssh, notebooks, interrupts, pipeline, PDFs, an oha trial)"
	$(VENV)/bin/pytest -q -m slow tests/

# Every check: make test, the slow tests, the sanitizers with the abuse suite under them, and the fuzzers (CI runs
# these same targets, then builds the paper).
check: SANITIZE_ABUSE := 1
check: test test-slow test-sanitize fuzz ## test, test-slow, test-sanitize with the abuse suite, fuzz: CI but the paper
	@echo "==> check: done in $$(( $$(date +%s) - $(STARTED) )) s"

# The C suites (ctest: units, HTTP and echo conformance, echo_client checks) under
# AddressSanitizer+UndefinedBehaviorSanitizer for every architecture (build-asan/),
# then under ThreadSanitizer for the units and the threaded architectures
# (ctest label `threaded`, build-tsan/). The first report halts the process with
# a non-zero status, and the conformance scripts also fail on any report on a
# server's stderr. No suppressions.
SANITIZE_ASAN_OPTIONS := halt_on_error=1:abort_on_error=0:exitcode=86:detect_leaks=1:strict_string_checks=1
SANITIZE_UBSAN_OPTIONS := halt_on_error=1:print_stacktrace=1:exitcode=87
SANITIZE_TSAN_OPTIONS := halt_on_error=1:exitcode=66:second_deadlock_stack=1
SANITIZE_JOBS ?= 2
# SANITIZE_ABUSE=1 also runs the abuse suite (tests/test_abuse.py) against each build.
SANITIZE_ABUSE ?= 0
test-sanitize: ## ctest under ASan+UBSan (build-asan) and TSan (build-tsan, threaded architectures)
	@echo "==> test-sanitize: ASan+UBSan build (build-asan), ctest on everything"
	cmake -S servers_c -B build-asan -DCMAKE_BUILD_TYPE=Asan -DARCHBENCH_WERROR=ON
	cmake --build build-asan --parallel $(JOBS)
	cd build-asan && ASAN_OPTIONS='$(SANITIZE_ASAN_OPTIONS)' UBSAN_OPTIONS='$(SANITIZE_UBSAN_OPTIONS)' \
	  ctest --output-on-failure -j $(SANITIZE_JOBS)
	@echo "==> test-sanitize: TSan build (build-tsan), ctest on the units and the threaded architectures"
	cmake -S servers_c -B build-tsan -DCMAKE_BUILD_TYPE=Tsan -DARCHBENCH_WERROR=ON
	cmake --build build-tsan --parallel $(JOBS)
	cd build-tsan && TSAN_OPTIONS='$(SANITIZE_TSAN_OPTIONS)' ctest --output-on-failure -j $(SANITIZE_JOBS) -L 'unit|threaded'
	@if [ '$(SANITIZE_ABUSE)' = 1 ]; then \
	  for b in asan tsan; do \
	    echo "==> test-sanitize: abuse suite against build-$$b"; \
	    ASAN_OPTIONS='$(SANITIZE_ASAN_OPTIONS)' UBSAN_OPTIONS='$(SANITIZE_UBSAN_OPTIONS)' \
	    TSAN_OPTIONS='$(SANITIZE_TSAN_OPTIONS)' ARCHBENCH_ABUSE_BUILD_DIR=build-$$b \
	    ARCHBENCH_ROBUSTNESS_OUT=build-$$b/robustness.json $(VENV)/bin/pytest -q tests/test_abuse.py || exit 1; \
	  done; \
	fi

# libFuzzer harnesses (servers_c/fuzz/) built with clang into build-fuzz/, each run
# for FUZZ_SECONDS from its committed seed corpus; a crash or a broken invariant
# fails the target (the input is kept in build-fuzz/artifacts/).
FUZZ_SECONDS ?= 60
FUZZ_HARNESSES := http_parser session
fuzz: ## libFuzzer harnesses for the parser and the session, FUZZ_SECONDS each (clang)
	@echo "==> fuzz: clang -fsanitize=fuzzer,address,undefined (build-fuzz), $(FUZZ_SECONDS) s per harness"
	cmake -S servers_c -B build-fuzz -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo -DARCHBENCH_FUZZ=ON
	cmake --build build-fuzz --parallel $(JOBS) --target $(addprefix fuzz_,$(FUZZ_HARNESSES))
	mkdir -p build-fuzz/artifacts
	@for h in $(FUZZ_HARNESSES); do \
	  mkdir -p build-fuzz/corpus/$$h; \
	  echo "    fuzz_$$h: $(FUZZ_SECONDS) s"; \
	  build-fuzz/bin/fuzz_$$h -max_total_time=$(FUZZ_SECONDS) -max_len=12000 -timeout=10 -rss_limit_mb=2048 \
	    -print_final_stats=1 -artifact_prefix=build-fuzz/artifacts/$$h- \
	    build-fuzz/corpus/$$h servers_c/fuzz/corpus/$$h 2>build-fuzz/fuzz_$$h.log \
	    || { tail -60 build-fuzz/fuzz_$$h.log; exit 1; }; \
	  { grep -E 'DONE|^stat::(number_of_executed_units|peak_rss_mb)' build-fuzz/fuzz_$$h.log || true; } | tr -s ' \t\n' ' '; echo; \
	done

# Every architecture and nginx, interleaved, 5 trials each of wrk -t1 -c100 -d5s at pipeline
# depth 1 and 16: a real campaign kept in data/raw/bench-<host>-<UTC>, then the table of
# medians, the ratios to nginx and the issue's targets.
bench: servers $(VENV_STAMP) ## every architecture and nginx at depth 1 and 16: medians, ratios to nginx (about 11 min)
	@echo "==> bench: python -m archbench bench (a new campaign in data/raw/bench-<host>-<UTC>)"
	$(PY) -m archbench bench $(if $(SERVER_CPUS),--server-cpus '$(SERVER_CPUS)') $(if $(LOAD_CPUS),--load-cpus '$(LOAD_CPUS)')
	$(PY) -m archbench manifest --update

# Which design for your own workload, decided on this machine within a time budget (python -m archbench pick,
# docs/running.md): make pick WORK_US=200 BLOCK_US=5000 IDLE=2000 BUDGET=3m. Each run is a new campaign under
# data/raw/pick-<host>-<UTC>, its page in data/processed/pick/; the answer is printed at the end.
## WORK_US=N BLOCK_US=N BLOCK_DIST=fixed|exp IDLE=K CHURN=1 RESPONSE=bytes:N CONNECTIONS=N PIPELINE=D  make pick's
##     workload (the servers' own flags); BUDGET=3m DELTA=0.10 PICK_SERVERS='epoll io_uring'  its decision
.PHONY: pick
pick: servers $(VENV_STAMP) ## which design for your workload, measured here within BUDGET (a new pick campaign)
	$(PY) -m archbench pick $(if $(WORK_US),--work-us '$(WORK_US)') $(if $(BLOCK_US),--block-us '$(BLOCK_US)') \
	  $(if $(BLOCK_DIST),--block-dist '$(BLOCK_DIST)') $(if $(IDLE),--idle '$(IDLE)') $(if $(CHURN),--churn) \
	  $(if $(RESPONSE),--response '$(RESPONSE)') $(if $(CONNECTIONS),--connections '$(CONNECTIONS)') \
	  $(if $(PIPELINE),--pipeline '$(PIPELINE)') $(if $(BUDGET),--budget '$(BUDGET)') $(if $(DELTA),--delta '$(DELTA)') \
	  $(if $(PICK_SERVERS),--servers $(PICK_SERVERS)) \
	  $(if $(SERVER_CPUS),--server-cpus '$(SERVER_CPUS)') $(if $(LOAD_CPUS),--load-cpus '$(LOAD_CPUS)'); \
	  status=$$?; $(PY) -m archbench manifest --update >/dev/null; exit $$status

# Merge campaigns measured elsewhere: make import RAW=path/to/other/data/raw [IMPORT_AS=newname] (one
# campaign under another name). Byte for byte, checksummed; an existing name with other content is refused.
# data/raw/MANIFEST.sha256 (the shipped campaigns, never written) and data/raw/manifests/<campaign>.sha256 list each
# raw file's checksum; the targets that add raw data add their files to their campaign's manifest (never changing a listed entry), and `make verify` reports any listed
# file that was modified or is missing. `make clean` never touches data/raw.
.PHONY: verify
verify: $(VENV_STAMP) ## data/raw against its checksum manifest (modified or missing files)
	@echo "==> verify: data/raw against data/raw/MANIFEST.sha256 and data/raw/manifests/"
	$(PY) -m archbench manifest

.PHONY: import echo-study latency-study network-study sources-study workloads-study serving-order-study studies
import: $(VENV_STAMP) ## RAW=path/to/raw [IMPORT_AS=name]: another machine's campaigns (never overwrites)
	@test -n '$(RAW)' || { echo "usage: make import RAW=path/to/raw [IMPORT_AS=newname]" >&2; exit 2; }
	@echo "==> import: campaigns of $(RAW) -> data/raw/"
	$(PY) -m archbench import '$(RAW)' $(if $(IMPORT_AS),--as '$(IMPORT_AS)')
	$(PY) -m archbench manifest --update

# The short studies `make all` runs after the main campaign, so that the workloads, echo, latency and network
# sections of the report are measured on this machine too (PROFILE=default; about 12 minutes on 2 CPUs together):
# the profile workloads_short (one level per workload family) and the same notebooks as the full studies below with
# fewer clients, pool sizes, rates, trials and seconds, into the short campaigns of the catalogue
# (python -m archbench campaigns --catalogue: the commands `make studies`). The latency study's open-loop client
# is the project's open_loop (built with the servers): eight designs offered 0.5, 0.7 and 0.9 of their saturation,
# around where the pilot found the knees, four rounds of 1 s without warm-ups, two for the saturation and source 001 phases (about 3 minutes):
# the knee is decided by a rank test across trials, which needs at least three per rate.
# PROFILE=full runs the full studies instead; PROFILE=smoke none (the report then uses the shipped ones).
# The network study needs root (network namespaces); without it the step says so and is skipped.
# A notebook run that writes campaign $(2): the runner's directory and the notebook's parameter are one name.
NOTEBOOK_CAMPAIGN = $(PY) -m archbench notebook $(1) --campaign $(2) -p campaign $(2)
SHORT_ECHO := -p clients '[100, 1000]' -p duration_s 2 -p trials 3 -p warmup False -p max_conns_cap 0
SHORT_LATENCY := -p fractions '[0.5, 0.7, 0.9]' -p duration_s 1 -p trials 4 -p saturation_trials 2 \
  -p source_001_trials 2 -p warmup False -p warmup_s 0
SHORT_NETWORK := -p thread_counts '[1, 3, 5]' -p trials 3
SHORT_LATENCY_RUN = $(call NOTEBOOK_CAMPAIGN,latency_study,latency-short-$(HOST_SHORT)) $(SHORT_LATENCY)
studies: servers $(VENV_STAMP) ## PROFILE=default: short workloads, echo, latency, network studies; full: the full ones
ifeq ($(PROFILE),full)
	$(MAKE) --no-print-directory workloads-study echo-study latency-study serving-order-study network-study
else ifeq ($(PROFILE),default)
	@echo "==> studies: short workloads, echo, latency and network studies -> data/raw/{workloads,echo,latency,network}-short-$(HOST_SHORT)*/"
	$(call NOTEBOOK_CAMPAIGN,run_trials,workloads-short-$(HOST_SHORT)) -p profile workloads_short $(TRIAL_OPTIONS)
	$(call NOTEBOOK_CAMPAIGN,echo_study,echo-short-$(HOST_SHORT)) $(SHORT_ECHO)
	$(SHORT_LATENCY_RUN)
	@if [ "$$(id -u)" = 0 ]; then \
	  echo "$(call NOTEBOOK_CAMPAIGN,network_study,network-short-$(HOST_SHORT)) ..."; \
	  $(call NOTEBOOK_CAMPAIGN,network_study,network-short-$(HOST_SHORT)) $(SHORT_NETWORK) \
	    $(if $(LINK),-p link '$(LINK)'); \
	else \
	  echo "    network study skipped: network namespaces need root (the report uses the shipped reference-network)"; \
	fi
	$(PY) -m archbench manifest --update
else
	@echo "==> studies: none for PROFILE=$(PROFILE) (the report's study sections use this machine's campaigns if any, else the shipped ones)"
endif

# Source 004's echo study: notebooks/echo_study.ipynb.
echo-study: servers $(VENV_STAMP) ## source 004's echo study -> data/raw/echo-<host>/ (about 17 min)
	@echo "==> echo-study: notebooks/echo_study.ipynb -> data/raw/echo-$(HOST_SHORT)/"
	$(call NOTEBOOK_CAMPAIGN,echo_study,echo-$(HOST_SHORT))
	$(PY) -m archbench manifest --update

# Source 001's latency under a fixed offered load: notebooks/latency_study.ipynb, a saturation campaign, the rate
# sweep and source 001's set-up.
latency-study: servers $(VENV_STAMP) ## source 001's latency study -> data/raw/latency-<host>{-closed,,-001}/
	@echo "==> latency-study: notebooks/latency_study.ipynb -> data/raw/latency-$(HOST_SHORT)*/"
	$(call NOTEBOOK_CAMPAIGN,latency_study,latency-$(HOST_SHORT))
	$(PY) -m archbench manifest --update

# The short latency study alone, as `make all` runs it.
.PHONY: latency-study-short
latency-study-short: servers $(VENV_STAMP) ## the short latency study of make all -> latency-short-<host>* (about 3 min)
	@echo "==> latency-study-short: notebooks/latency_study.ipynb -> data/raw/latency-short-$(HOST_SHORT)*/"
	$(SHORT_LATENCY_RUN)
	$(PY) -m archbench manifest --update

# Source 000's separate client against loopback: notebooks/network_study.ipynb, two campaigns, one in network
# namespaces (LINK or 1gbit; needs root) and its loopback twin (about 2-3 minutes).
network-study: servers $(VENV_STAMP) ## separate client vs loopback (root) -> data/raw/network-<host>{,-loopback}/
	@echo "==> network-study: notebooks/network_study.ipynb -> data/raw/network-$(HOST_SHORT){,-loopback}/"
	$(call NOTEBOOK_CAMPAIGN,network_study,network-$(HOST_SHORT)) \
	  $(if $(LINK),-p link '$(LINK)')
	$(PY) -m archbench manifest --update

# Each source's own protocol: the sources profile, read by the report's published-beside-measured section
# (CAMPAIGNS='sources=NAME' names another campaign). Not part of `make all`: it alone would take its whole
# 15-minute budget.
sources-study: servers $(VENV_STAMP) ## each source's own protocol -> data/raw/sources-<host>/ (about 22 min)
	@echo "==> sources-study: notebooks/run_trials.ipynb, profile sources -> data/raw/sources-$(HOST_SHORT)/"
	$(call NOTEBOOK_CAMPAIGN,run_trials,sources-$(HOST_SHORT)) -p profile sources $(TRIAL_OPTIONS)
	$(PY) -m archbench manifest --update

# Which architecture for which workload: profile workloads (per-request work, blocking calls, idle connections,
# one request per connection, large responses), read by the report's workloads section. Its short version, profile
# workloads_short, is one of make studies.
workloads-study: servers $(VENV_STAMP) ## architecture by workload -> data/raw/workloads-<host>/ (about 20 min)
	@echo "==> workloads-study: notebooks/run_trials.ipynb, profile workloads -> data/raw/workloads-$(HOST_SHORT)/"
	$(call NOTEBOOK_CAMPAIGN,run_trials,workloads-$(HOST_SHORT)) -p profile workloads $(TRIAL_OPTIONS)
	$(PY) -m archbench manifest --update

# Does the serving order move the tail? profile serving_order: the thread pool's FIFO queue against its LIFO stack,
# closed loop for the saturation throughput (the -closed campaign), then the same load offered to both by the
# open_loop client.
SERVING_ORDER_FRACTIONS ?= 0.85 0.95
SERVING_ORDER_REFERENCE = thread_pool-request-queue-t1-c64
SERVING_ORDER_CAMPAIGN = serving-order-$(HOST_SHORT)
serving-order-study: servers $(VENV_STAMP) ## FIFO vs LIFO tail -> data/raw/serving-order-<host>{-closed,}/ (about 7.5 min)
	@echo "==> serving-order-study: profile serving_order -> data/raw/$(SERVING_ORDER_CAMPAIGN){-closed,}/"
	$(PY) -m archbench run --profile serving_order --campaign $(SERVING_ORDER_CAMPAIGN)-closed
	$(PY) -m archbench run --profile serving_order --campaign $(SERVING_ORDER_CAMPAIGN) \
	  --load-generator open_loop --saturation-campaign $(SERVING_ORDER_CAMPAIGN)-closed \
	  --rate-reference $(SERVING_ORDER_REFERENCE) --rate-fractions $(SERVING_ORDER_FRACTIONS)
	$(PY) -m archbench manifest --update

# A study that measures with a profile of its own (archbench/config/profiles.d/NAME.toml with a [catalogue] table):
# that profile into its campaign, NAME-<host>. The catalogue's command for a study that names no other, so that a
# new study needs no target here; one with a target of its own (echo-study, ...) is refused, since its target runs
# more than the profile (python -m archbench campaigns --catalogue lists which runs what).
.PHONY: study
study: servers $(VENV_STAMP) ## NAME=<study>: a study's profile -> data/raw/<study>-<host>/ (its catalogue command)
	@test -n '$(NAME)' || { echo "usage: make study NAME=<study> (python -m archbench campaigns --catalogue)" >&2; exit 2; }
	@measured_by="$$($(PY) -m archbench campaigns --measures '$(NAME)')"; \
	  test "$$measured_by" = 'make study NAME=$(NAME)' || \
	  { echo "make study NAME=$(NAME): its campaign is measured by $$measured_by" >&2; exit 2; }
	@echo "==> study: notebooks/run_trials.ipynb, profile $(NAME) -> data/raw/$(NAME)-$(HOST_SHORT)/"
	$(call NOTEBOOK_CAMPAIGN,run_trials,$(NAME)-$(HOST_SHORT)) -p profile $(NAME) $(TRIAL_OPTIONS)
	$(PY) -m archbench manifest --update

# The study in one checked archive, dist/archbench-<commit>-<campaign>.tar.gz (+ .sha256): the source, the
# campaigns the report used (data/processed/campaigns.json) with their manifest lines, data/processed, the executed
# notebooks, the report and ARTIFACT.md (archbench/cli/artifact.py). Uncommitted changes under archbench/ servers_c/
# paper/ notebooks/ are refused unless ALLOW_DIRTY=1. check-artifact unpacks ARTIFACT into a fresh directory,
# verifies every checksum and rebuilds the report's macros and tables from its raw data (no trial), byte for byte.
.PHONY: artifact check-artifact
ALLOW_DIRTY ?=
artifact: paper ## dist/archbench-<commit>-<campaign>.tar.gz: source, campaigns, report (ALLOW_DIRTY=1)
	@echo "==> artifact: source, campaigns, processed data, notebooks and report -> dist/ (python -m archbench artifact)"
	$(PY) -m archbench artifact $(if $(filter 1 yes true,$(ALLOW_DIRTY)),--allow-dirty)

check-artifact: $(VENV_STAMP) ## ARTIFACT=path: verify an archive and rebuild its report's numbers from its raw data
	@test -n '$(ARTIFACT)' || { echo "usage: make check-artifact ARTIFACT=dist/archbench-<commit>-<campaign>.tar.gz" >&2; exit 2; }
	@echo "==> check-artifact: $(ARTIFACT): checksums, then the report rebuilt from its raw data and compared"
	$(PY) -m archbench check-artifact '$(ARTIFACT)'

# JupyterLab from the venv, headless on loopback, the kernel "archbench (.venv)" registered in the venv; it prints
# the URL with its token (python -m archbench lab). Ctrl-C stops it.
LAB_PORT ?= 8888
LAB_IP ?= 127.0.0.1
.PHONY: lab
lab: $(VENV_STAMP) ## JupyterLab (headless, LAB_IP, LAB_PORT) with the venv's kernel; prints the URL
	@echo "==> lab: JupyterLab on $(LAB_IP):$(LAB_PORT) with the kernel 'archbench' of $(VENV) (Ctrl-C stops it)"
	$(PY) -m archbench lab --port $(LAB_PORT) --ip $(LAB_IP) --no-browser

clean: ## remove the build and the generated outputs (never data/raw)
	@echo "==> clean: $(BUILD_DIR)/, data/processed/, paper/generated/, paper/figures/, paper/notebooks/, LaTeX output (data/raw is kept)"
	rm -rf -- '$(BUILD_DIR)' data/processed paper/generated paper/figures paper/notebooks
	rm -rf -- build-asan build-tsan build-fuzz
	rm -f -- paper/report.pdf $(addprefix paper/*.,$(LATEX_AUX))

distclean: clean ## clean, and remove the venv
	@echo "==> distclean: $(VENV)/"
	rm -rf -- '$(VENV)'

help: ## this list: every target and variable, from this file's own double-hash comments
	@echo "Targets:"
	@grep -E '^[a-zA-Z0-9_-]+:[^#]*## ' $(SELF) | sed -E 's/^([a-zA-Z0-9_-]+):[^#]*## /\1\t/' | \
	  awk -F '\t' '{ printf "  %-20s %s\n", $$1, $$2 }'
	@# The catalogue is Python's (the studies' profiles), so it is listed only once the venv exists.
	@if [ -x '$(PY)' ]; then \
	  echo "Campaigns of the catalogue, this machine's with the command that makes each (<host>: hostname -s):"; \
	  $(PY) -m archbench campaigns --catalogue | sed 's/^/  /' || echo "  (python -m archbench campaigns --catalogue failed)"; \
	fi
	@echo "Variables:"
	@sed -n 's/^## /  /p' $(SELF)
