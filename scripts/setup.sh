#!/usr/bin/env bash
# Set-up for archbench: system tools (Debian/Ubuntu packages) and the pinned .venv.
#
#   scripts/setup.sh [all|measure|system|venv|tools]  (default: all; `make setup` runs `all`, `make all` runs
#   `measure` unless PROFILE=full)
#
#   system  checks gcc/make, cmake, liburing, OpenSSL's and SQLite's headers and pkg-config (the oha
#           build), wrk, httperf, iperf3, nginx, taskset, python3 with venv, latexmk, pdflatex and
#           the LaTeX packages paper/report.tex uses. What is missing is installed with apt-get when
#           running as root (it says how long that took); otherwise the exact `sudo apt-get install
#           ...` command is printed and the script exits 1.
#   venv    creates .venv (python3 -m venv), then `pip install -r requirements.txt`
#           and `pip install -e .`; pip runs again only when requirements.txt,
#           pyproject.toml or the interpreter change (hash in .venv/.archbench-setup).
#   tools   oha, the open-loop HTTP load generator of the latency study, built from crates.io with
#           `LIBSQLITE3_SYS_USE_PKG_CONFIG=1 cargo install oha@1.16.0 --locked --no-default-features
#           --features native-tls --root .tools` (skipped when .tools/bin/oha --version says that
#           version). The build compiles C libraries that archbench does not need, so it links the
#           system's instead (libssl-dev, libsqlite3-dev, pkg-config: `system` installs them):
#           archbench only sends plain HTTP, but oha 1.16 does not compile without a TLS backend, and
#           native-tls (OpenSSL) replaces the default rustls over aws-lc, a third of the build's CPU
#           time; SQLite, a tenth of it, only serves oha's --db-url. The version is pinned so that the
#           feature set cannot change under us. About 450 CPU-seconds (750 with the default features):
#           4 to 7 minutes on 2 CPUs, depending on what else runs.
#           Without cargo it says how to get it and goes on: the runner's preflight then refuses oha
#           campaigns, naming the missing tool, and the oha test is skipped with that reason. A build
#           that fails is an error (exit 1), its log's last lines shown.
#   all     the three, with the oha build in the background (log: .tools/oha-build.log) while apt-get
#           and pip run, and waited for before the script ends, so that nothing compiles while
#           anything measures. On a machine without them, apt-get installs what the build needs first
#           (build-essential, libssl-dev, libsqlite3-dev, pkg-config), then the rest while oha
#           builds. Each step prints how long it took. The oha build is the longest step: on a bare
#           Debian 12 machine the whole takes it plus about 45 s (apt-get update and the build's own
#           packages); apt-get's install of the rest (about 2.5 min) and pip (1.5 min) run beside it.
#   measure system and venv, side by side, without oha: what `make all` needs for its default profile and short studies,
#           none of which runs oha (the short latency study is left out of `make all` because oha, not the
#           server, set its rates on a 2-CPU machine). `make tools`, `make setup` and `make test-slow` build it;
#           `make test` runs measure too.
#
# Idempotent: with everything present it only checks (about a second).
#
# Environment:
#   PYTHON=python3      interpreter the venv is made from (>= 3.10)
#   VENV=.venv          where the venv goes
#   ARCHBENCH_SETUP_PRETEND_MISSING="wrk booktabs.sty sqlite3.pc"
#                       treat these commands / LaTeX files / pkg-config modules as absent (testing the
#                       install path without uninstalling anything)
#   ARCHBENCH_SETUP_NOT_ROOT=1
#                       behave as a non-root user: print the command, do not install
#   CARGO=cargo         the cargo that builds oha (default: on PATH, else ~/.cargo/bin/cargo)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

MODE=${1:-all}
PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}
STAMP="$VENV/.archbench-setup"
PRETEND_MISSING=" ${ARCHBENCH_SETUP_PRETEND_MISSING:-} "

# The LaTeX packages the paper needs at least (paper/report.tex adds its own).
BASE_STY="booktabs siunitx graphicx hyperref"
# Debian packages that together provide LaTeX for the paper.
TEX_DEBS="latexmk texlive-latex-recommended texlive-latex-extra texlive-fonts-recommended texlive-science lmodern"

say() { printf 'setup: %s\n' "$*"; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

case "$MODE" in
    all | measure | system | venv | tools) ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown mode '$MODE' (all, measure, system, venv or tools)" ;;
esac

pretend_missing() { [[ "$PRETEND_MISSING" == *" $1 "* ]]; }
have() { ! pretend_missing "$1" && command -v "$1" >/dev/null 2>&1; }

# ---------------------------------------------------------------- system tools
MISSING_WHAT=()   # human-readable list
MISSING_DEBS=()   # Debian packages to install

need() { # need WHAT DEBIAN-PACKAGE...
    local what=$1; shift
    MISSING_WHAT+=("$what")
    local deb
    for deb in "$@"; do
        [[ " ${MISSING_DEBS[*]-} " == *" $deb "* ]] || MISSING_DEBS+=("$deb")
    done
}

python_ok() { # the interpreter exists, is >= 3.10 and can make a venv with pip
    have "$PYTHON" &&
        "$PYTHON" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 10))' 2>/dev/null
}

# LaTeX files the paper needs: the base list, natbib or biblatex, and every
# \usepackage / \RequirePackage / \documentclass of paper/report.tex.
paper_tex_files() {
    local sty="$BASE_STY" cls="article" bib="natbib" body=""
    if [[ -f paper/report.tex ]]; then
        # drop comments, join lines (options may span several)
        body=$(sed -e 's/\(^\|[^\\]\)%.*$/\1/' paper/report.tex | tr '\n' ' ')
        local used
        used=$(grep -oE '\\(usepackage|RequirePackage)[[:space:]]*(\[[^]]*\])?[[:space:]]*\{[^}]*\}' <<<"$body" |
            sed -E 's/.*\{([^}]*)\}/\1/' | tr ',' '\n' | tr -d ' \t' | grep -v '^$' || true)
        sty="$sty $(tr '\n' ' ' <<<"$used")"
        local class
        class=$(grep -oE '\\documentclass[[:space:]]*(\[[^]]*\])?[[:space:]]*\{[^}]*\}' <<<"$body" |
            head -n1 | sed -E 's/.*\{([^}]*)\}/\1/' | tr -d ' ' || true)
        if [[ -n "$class" ]]; then cls=$class; fi
        if grep -qE '\\(usepackage|RequirePackage)[^{]*\{[^}]*biblatex' <<<"$body"; then bib=biblatex; fi
    fi
    local s
    for s in $sty $bib; do printf '%s.sty\n' "$s"; done | sort -u
    printf '%s.cls\n' "$cls"
}

# Which Debian package provides a LaTeX file beyond the standard set above.
deb_for_tex_file() {
    case "$1" in
        biblatex.sty) echo texlive-bibtex-extra ;;
        *) echo "$TEX_DEBS" ;;
    esac
}

check_system() {
    MISSING_WHAT=()
    MISSING_DEBS=()
    { have gcc && have make; } || need "gcc and make" build-essential
    if have cmake; then
        local v
        v=$(cmake --version | sed -n '1s/[^0-9]*\([0-9][0-9.]*\).*/\1/p')
        printf '3.18\n%s\n' "$v" | sort -V -C ||
            die "cmake $v is older than 3.18 (servers_c/CMakeLists.txt); install a newer cmake"
    else
        need cmake cmake
    fi
    # servers_c/io_uring.c builds against liburing (without it, the binary only reports "unsupported")
    # (without gcc the header cannot be looked for: it comes with gcc, so that apt-get's one run installs both)
    if [[ -f servers_c/io_uring.c ]]; then
        if ! have gcc || pretend_missing liburing.h ||
            ! printf '#include <liburing.h>\n' | gcc -E -x c - -o /dev/null 2>/dev/null; then
            need liburing.h liburing-dev
        fi
    fi
    have wrk || need wrk wrk
    # source 002's load generator, and the campaigns' iperf3 bandwidth baseline (archbench/measure/baseline.py)
    have httperf || need httperf httperf
    have iperf3 || need iperf3 iperf3
    # the reference server: nginx-light is enough (stub_status included); it lives in /usr/sbin
    have nginx || [[ -x /usr/sbin/nginx ]] && ! pretend_missing nginx || need nginx nginx-light
    have taskset || need taskset util-linux
    # the oha build (tools) links the system's OpenSSL (its TLS backend) and SQLite
    oha_build_ready || need "OpenSSL and SQLite headers and pkg-config (the oha build)" libssl-dev libsqlite3-dev pkg-config
    # placement ssh and its multi-host test (tests/test_ssh_placement.py): ssh, scp, sshd, ssh-keygen
    { have ssh && have scp && have ssh-keygen; } || need "ssh, scp and ssh-keygen" openssh-client
    [[ -x /usr/sbin/sshd ]] && ! pretend_missing sshd || need sshd openssh-server
    have hostname || need hostname hostname
    have git || need git git
    # make lint checks the C sources' format (.clang-format)
    have clang-format || need clang-format clang-format
    if ! python_ok; then
        if have "$PYTHON" && ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
            die "$PYTHON is $("$PYTHON" -V 2>&1); archbench needs Python >= 3.10 (set PYTHON=...)"
        fi
        need "$PYTHON with venv and ensurepip" python3 python3-venv
    fi
    have latexmk || need latexmk latexmk
    if have pdflatex && have kpsewhich; then
        local wanted found f
        mapfile -t wanted < <(paper_tex_files)
        found=" $({ kpsewhich "${wanted[@]}" 2>/dev/null || true; } | xargs -rn1 basename | tr '\n' ' ') "
        for f in "${wanted[@]}"; do
            if pretend_missing "$f" || [[ "$found" != *" $f "* ]]; then
                # shellcheck disable=SC2046
                need "$f" $(deb_for_tex_file "$f")
            fi
        done
        if grep -qE 'backend[[:space:]]*=[[:space:]]*biber' paper/report.tex 2>/dev/null ||
            { [[ " ${wanted[*]} " == *" biblatex.sty "* ]] &&
                ! grep -qE 'backend[[:space:]]*=[[:space:]]*bibtex' paper/report.tex 2>/dev/null; }; then
            have biber || need biber biber
        fi
    else
        # shellcheck disable=SC2086
        need "pdflatex and kpsewhich" $TEX_DEBS
    fi
}

is_root() { [[ -z "${ARCHBENCH_SETUP_NOT_ROOT:-}" && "$(id -u)" == 0 ]]; }

APT_UPDATED=""
apt_install() { # apt_install DEBIAN-PACKAGE... (as root; the package lists are updated once a run)
    export DEBIAN_FRONTEND=noninteractive
    if [[ -z "$APT_UPDATED" ]]; then
        apt-get update -q
        APT_UPDATED=1
    fi
    apt-get install -y --no-install-recommends "$@"
}

setup_system() {
    local started=$SECONDS
    check_system
    if ((${#MISSING_WHAT[@]} == 0)); then
        say "system tools present (gcc, make, cmake, liburing, OpenSSL and SQLite headers, wrk, httperf, iperf3, nginx, taskset, $PYTHON + venv, latexmk, pdflatex, LaTeX packages)"
        return
    fi
    say "missing: ${MISSING_WHAT[*]}"
    local install="apt-get install -y --no-install-recommends ${MISSING_DEBS[*]}"
    if ! have apt-get; then
        die "no apt-get here: install the equivalent of these Debian packages yourself: ${MISSING_DEBS[*]}"
    fi
    if ! is_root; then
        # shellcheck disable=SC2016 # backquotes are text
        printf '\nsetup: run this as root, then run `make setup` again:\n\n' >&2
        printf '    sudo apt-get update && sudo DEBIAN_FRONTEND=noninteractive %s\n\n' "$install" >&2
        exit 1
    fi
    say "installing with apt-get: ${MISSING_DEBS[*]}"
    apt_install "${MISSING_DEBS[@]}"
    PRETEND_MISSING=" "
    check_system
    ((${#MISSING_WHAT[@]} == 0)) ||
        die "still missing after apt-get install: ${MISSING_WHAT[*]} (find the package with apt-file search)"
    say "system tools installed in $((SECONDS - started)) s"
}

# ---------------------------------------------------------------- python venv
venv_hash() {
    {
        cat requirements.txt pyproject.toml
        "$VENV/bin/python" -VV
        readlink -f "$VENV/bin/python"
        pwd -P # the editable install points here
        # an editable install made before archbench/ existed maps nothing: redo it
        if [[ -f archbench/__init__.py ]]; then echo "archbench package present"; fi
    } | sha256sum | cut -d' ' -f1
}

setup_venv() {
    local started=$SECONDS
    if ! "$VENV/bin/python" -c 'import sys; sys.exit(sys.version_info < (3, 10))' >/dev/null 2>&1; then
        python_ok || die "$PYTHON (>= 3.10, with the venv module) is needed: run \`make setup\`"
        if [[ -e "$VENV" ]]; then
            say "$VENV exists but its python does not run: recreating it"
            "$PYTHON" -m venv --clear "$VENV"
        else
            say "creating $VENV with $("$PYTHON" -V 2>&1)"
            "$PYTHON" -m venv "$VENV"
        fi
    fi
    local want
    want=$(venv_hash)
    if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$want" ]]; then
        touch "$STAMP" # newer than requirements.txt for make, even after a checkout
        say "$VENV up to date with requirements.txt ($("$VENV/bin/python" -V 2>&1))"
        return
    fi
    rm -f "$STAMP"
    local pip=("$VENV/bin/python" -m pip --disable-pip-version-check)
    say "pip install -r requirements.txt"
    "${pip[@]}" install -q -r requirements.txt
    say "pip install -e . (archbench, editable)"
    "${pip[@]}" install -q -e .
    # setuptools leaves its build metadata in the work tree; the install does not need it
    rm -rf archbench.egg-info
    say "Jupyter kernel 'archbench' (the notebooks' kernelspec) registered in $VENV"
    "$VENV/bin/python" -m ipykernel install --prefix "$VENV" --name archbench --display-name "archbench (.venv)" >/dev/null
    printf '%s\n' "$want" >"$STAMP.tmp"
    mv -f "$STAMP.tmp" "$STAMP"
    say "$VENV ready in $((SECONDS - started)) s ($("$VENV/bin/python" -V 2>&1))"
}

# ---------------------------------------------------------------- tools built from source
TOOLS_ROOT=.tools # project-local: the runner looks for .tools/bin/oha before PATH
OHA="$TOOLS_ROOT/bin/oha"
OHA_VERSION=1.16.0
# Not the default TLS backend (rustls over aws-lc) but the system's OpenSSL, and the system's SQLite instead
# of the one rusqlite bundles (libsqlite3-sys reads LIBSQLITE3_SYS_USE_PKG_CONFIG): see the header.
OHA_ENV=(env LIBSQLITE3_SYS_USE_PKG_CONFIG=1)
OHA_INSTALL=(install "oha@$OHA_VERSION" --locked --no-default-features --features native-tls --root "$TOOLS_ROOT")
OHA_BUILD_DEBS=(build-essential libssl-dev libsqlite3-dev pkg-config)
OHA_LOG="$TOOLS_ROOT/oha-build.log"
OHA_PID=""     # the background build (mode all), a process group of its own
OHA_STARTED=0

find_cargo() {
    local candidate
    for candidate in "${CARGO:-}" cargo "${CARGO_HOME:-$HOME/.cargo}/bin/cargo"; do
        if [[ -n "$candidate" ]] && ! pretend_missing cargo && command -v "$candidate" >/dev/null 2>&1; then
            command -v "$candidate"
            return 0
        fi
    done
    return 1
}

oha_version() { "$OHA" --version 2>/dev/null | head -n1 || true; }

# What the build needs besides cargo: cc and make (it compiles jemalloc from C), and OpenSSL's and SQLite's
# headers found through pkg-config.
oha_build_ready() {
    have gcc && have make && have pkg-config && ! pretend_missing openssl.pc && ! pretend_missing sqlite3.pc &&
        pkg-config --exists openssl sqlite3
}

oha_ready() { ! pretend_missing oha && [[ "$(oha_version)" == "oha $OHA_VERSION" ]]; }

say_oha_present() { say "oha present: $(oha_version) ($OHA)"; }

say_no_cargo() {
    say "WARNING: cargo not found, so oha (the latency study's open-loop load generator) is not installed."
    say "  To install it: curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y"
    say "  (or apt-get install cargo), then run make setup again (it runs: ${OHA_ENV[*]:1} cargo ${OHA_INSTALL[*]})."
    say "  Until then campaigns with load_generator oha stop in preflight naming oha, and the oha test is skipped."
}

say_oha_building() { # say_oha_building CARGO WHERE
    local found
    found=$(oha_version)
    if [[ -n "$found" ]] && ! pretend_missing oha; then
        say "$OHA is $found, not the pinned oha $OHA_VERSION: rebuilding it"
    fi
    say "building oha $2: ${OHA_ENV[*]:1} $1 ${OHA_INSTALL[*]} (4 to 7 minutes on 2 CPUs)"
}

oha_failed() { # oha_failed STATUS SECONDS [LOG]
    if [[ -n "${3:-}" ]]; then
        say "the last lines of $3:" >&2
        tail -n 30 "$3" | sed 's/^/    /' >&2
    fi
    die "${OHA_ENV[*]:1} cargo ${OHA_INSTALL[*]} failed (exit status $1, after $2 s): oha is not installed, so the latency study cannot run (make setup tries again)"
}

setup_tools() {
    if oha_ready; then
        say_oha_present
        return
    fi
    local cargo
    if ! cargo=$(find_cargo); then
        say_no_cargo
        return 0
    fi
    oha_build_ready ||
        die "building oha needs gcc, make, pkg-config and OpenSSL's and SQLite's headers: run \`scripts/setup.sh system\` first (as root)"
    say_oha_building "$cargo" "(its output follows)"
    local started=$SECONDS status=0
    "${OHA_ENV[@]}" "$cargo" "${OHA_INSTALL[@]}" || status=$?
    ((status == 0)) || oha_failed "$status" $((SECONDS - started))
    say "oha built in $((SECONDS - started)) s: $(oha_version) ($OHA)"
}

# Mode all: the build runs while apt-get and pip do (they mostly wait on the network and the disk), and the
# script waits for it at the end. The build gets a process group of its own so that an error or Ctrl-C in
# the script stops all of it (cargo and its rustc and cc children), not cargo alone.
stop_oha_build() {
    if [[ -n "$OHA_PID" ]]; then
        kill -TERM -- "-$OHA_PID" 2>/dev/null || kill -TERM "$OHA_PID" 2>/dev/null || true
        wait "$OHA_PID" 2>/dev/null || true
        OHA_PID=""
        say "oha build stopped (setup did not finish); make setup starts it again" >&2
    fi
}

start_oha_build() { # start_oha_build CARGO
    mkdir -p "$TOOLS_ROOT"
    say_oha_building "$1" "in the background (log: $OHA_LOG)"
    OHA_STARTED=$SECONDS
    trap stop_oha_build EXIT
    setsid --wait "${OHA_ENV[@]}" "$1" "${OHA_INSTALL[@]}" >"$OHA_LOG" 2>&1 </dev/null &
    OHA_PID=$!
}

finish_oha_build() {
    local waited=$SECONDS status=0
    say "waiting for the oha build (running for $((SECONDS - OHA_STARTED)) s; log: $OHA_LOG)"
    wait "$OHA_PID" || status=$?
    OHA_PID=""
    trap - EXIT
    ((status == 0)) || oha_failed "$status" $((SECONDS - OHA_STARTED)) "$OHA_LOG"
    say "oha built in $((SECONDS - OHA_STARTED)) s (setup waited $((SECONDS - waited)) s for it): $(oha_version) ($OHA)"
}

setup_all() {
    local started=$SECONDS cargo="" oha_said=""
    if oha_ready; then
        oha_said=present
    elif ! cargo=$(find_cargo); then
        oha_said=no-cargo
    else
        # On a bare machine what the build needs comes first, and the long apt-get install of the rest
        # (LaTeX above all) runs beside the build.
        if ! oha_build_ready && is_root && have apt-get; then
            say "installing what the oha build needs first: apt-get install ${OHA_BUILD_DEBS[*]}"
            local first=$SECONDS
            apt_install "${OHA_BUILD_DEBS[@]}"
            say "installed in $((SECONDS - first)) s: ${OHA_BUILD_DEBS[*]}"
        fi
        if oha_build_ready; then
            start_oha_build "$cargo"
        fi
    fi
    setup_system
    setup_venv
    case "$oha_said" in
        present) say_oha_present ;;
        no-cargo) say_no_cargo ;;
        *)
            if [[ -n "$OHA_PID" ]]; then
                finish_oha_build
            else
                setup_tools # what the build needs came with setup_system
            fi
            ;;
    esac
    say "done in $((SECONDS - started)) s"
}

show_system_log() { # apt-get's output from beside pip (setup_measure), once it is done
    [[ -n "${SYSTEM_LOG:-}" && -f "$SYSTEM_LOG" ]] || return 0
    wait "$SYSTEM_PID" 2>/dev/null || true
    cat "$SYSTEM_LOG"
    rm -f "$SYSTEM_LOG"
}

setup_measure() {
    local started=$SECONDS
    if is_root && have apt-get && ! python_ok; then
        say "installing what the venv needs first: apt-get install python3 python3-venv"
        apt_install python3 python3-venv
    fi
    if python_ok; then
        # apt-get (LaTeX above all) and pip beside each other: neither needs the other now, and both mostly wait
        # on downloads and the disk. apt-get's output is shown when both are done.
        # setup_venv runs outside any `||` so that `set -e` stops at its first failing command; apt-get's output
        # is shown on the way out either way.
        SYSTEM_LOG=$(mktemp)
        setup_system >"$SYSTEM_LOG" 2>&1 &
        SYSTEM_PID=$!
        trap 'show_system_log' EXIT
        setup_venv
        local status=0
        wait "$SYSTEM_PID" || status=$?
        trap - EXIT
        show_system_log
        ((status == 0)) || die "installing the system packages failed (exit status $status): see above"
    else
        setup_system
        setup_venv
    fi
    if oha_ready; then
        say_oha_present
    else
        say "oha not built: nothing this needs runs it (make tools builds it, 4 to 7 minutes on 2 CPUs)"
    fi
    say "done in $((SECONDS - started)) s"
}

case "$MODE" in
    all) setup_all ;;
    measure) setup_measure ;;
    system) setup_system ;;
    venv) setup_venv ;;
    tools) setup_tools ;;
esac
