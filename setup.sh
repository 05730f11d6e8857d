#!/usr/bin/env bash
# setup.sh - the one set-up script of pdext: dependencies, build, install, tests, demo, bench.
#
#   ./setup.sh          install missing packages, configure, build and install the product
#                       (libraries, plug-ins, the pdext command, the Python package) (default)
#   ./setup.sh demo     the same, then `pdext demo` from the installed prefix
#   ./setup.sh test     the same with the tests and benchmarks built too, then the style and
#                       lint checks (tools/check-format.sh: clang-format against .clang-format;
#                       tools/check-tidy.sh: clang-tidy with .clang-tidy on sdk/src, jit and
#                       cli, warnings are errors), the framework venv (below), the whole test
#                       suite, the installed-SDK check (tests/install_test.sh), the suite again
#                       under ASan + UBSan, and the executor's under TSan
#   ./setup.sh bench    a release build (-O2, no sanitizers), then bench/run.sh; the framework
#                       rows run in the framework venv (made or reused as for test)
#
# The framework venv (`test`): one Python venv, made by Debian's /usr/bin/python3 and reused
# from run to run, holding the current PyPI releases of numpy, pytest, pybind11 and the frameworks pdext
# integrates with, pinned by tests/python/frameworks.txt (torch, jax + jaxlib, onnx +
# onnxruntime, paddlepaddle, mindspore: CPU builds, ~9 GB). pdext goes in with pip, from a
# wheel built from this tree (`pip wheel .`, the same as a user's `pip install .`), and the
# Python suites run there. The venv lives at $PDEXT_VENV_DIR, by default
# ${XDG_CACHE_HOME:-~/.cache}/pdext/venv-<key>, the key a hash of the pins, the frameworks
# asked for and the Python version: changing the pins makes a new venv.
#
# Environment:
#   PREFIX            install prefix (default /usr/local)
#   BUILD_DIR         plain build directory (default build)
#   ASAN_BUILD_DIR    sanitizer build directory (default build-asan)
#   BENCH_BUILD_DIR   benchmark build directory (default build-bench)
#   JOBS              parallel jobs for ninja and ctest (default: nproc)
#   PDEXT_FRAMEWORKS  the frameworks `test` installs and tests: "all" (default), "none" (no
#                     venv: the Python suites run on Debian's python3 and the build tree, for
#                     an offline machine), or a list of torch, jax, onnxruntime, paddle,
#                     mindspore (comma- or space-separated). A framework left out makes its
#                     tests skip, saying so.
#   PDEXT_VENV_DIR    where the framework venv is (default: see above)
#   PDEXT_CACHE_DIR, XDG_CACHE_HOME   passed through untouched to the JIT (see pdext_jit.h)
#
# Works on a fresh Debian 12 machine: as root it installs what is missing with apt-get, as
# another user it goes through sudo when there is one, and otherwise it prints the exact
# apt-get command to run and stops. CUDA is optional and never installed: nvcc is used when
# it is on PATH.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$ROOT"

MODE=${1:-install}
PREFIX=${PREFIX:-/usr/local}
BUILD_DIR=${BUILD_DIR:-build}
ASAN_BUILD_DIR=${ASAN_BUILD_DIR:-build-asan}
TSAN_BUILD_DIR=${TSAN_BUILD_DIR:-build-tsan}
BENCH_BUILD_DIR=${BENCH_BUILD_DIR:-build-bench}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
START=$SECONDS

# Relative directories are taken from the repository root.
absolute() { case $1 in /*) printf '%s' "$1" ;; *) printf '%s' "$ROOT/$1" ;; esac; }
PREFIX=$(absolute "$PREFIX")
BUILD_DIR=$(absolute "$BUILD_DIR")
ASAN_BUILD_DIR=$(absolute "$ASAN_BUILD_DIR")
TSAN_BUILD_DIR=$(absolute "$TSAN_BUILD_DIR")
BENCH_BUILD_DIR=$(absolute "$BENCH_BUILD_DIR")

# --- output -----------------------------------------------------------------------------------

say() { printf '\n==> %s\n' "$*"; }

# Each phase ends with one summary line, greppable: "[setup] <phase>: ok (12s)", or
# "[setup] <phase>: FAILED (exit 2 after 40s)" when a command in it fails.
PHASE=""
PHASE_T0=$SECONDS
begin_phase() {
    PHASE=$1
    PHASE_T0=$SECONDS
    say "$2"
}
end_phase() {
    printf '[setup] %s: ok%s (%ss)\n' "$PHASE" "${1:+, $1}" "$((SECONDS - PHASE_T0))"
    PHASE=""
}
report_failure() {
    local rc=$?
    if [ "$rc" -ne 0 ] && [ -n "$PHASE" ]; then
        printf '[setup] %s: FAILED (exit %s after %ss)\n' "$PHASE" "$rc" "$((SECONDS - PHASE_T0))" >&2
    fi
}
trap report_failure EXIT
die() {
    printf '[setup] error: %s\n' "$*" >&2
    exit 1
}

usage() {
    # The comment at the top of this file.
    sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -n 's/^# \{0,1\}//p'
}

# --- dependencies -------------------------------------------------------------------------------

# Commands we need and the Debian package that provides each.
declare -A TOOL_PACKAGE=(
    [gcc]=build-essential [g++]=build-essential [make]=build-essential
    [cmake]=cmake [ninja]=ninja-build [pkg-config]=pkg-config
)
# Only the test mode checks style and lints, and tries the compile farm, with these.
if [ "$MODE" = test ]; then
    TOOL_PACKAGE[clang-format]=clang-format
    TOOL_PACKAGE[clang-tidy]=clang-tidy
    # The compile-farm test runs the JIT's compiles through a distccd on 127.0.0.1.
    TOOL_PACKAGE[distcc]=distcc
fi
# Libraries (headers) we need, checked through dpkg, with a file that proves each is there
# when dpkg-query itself is missing.
declare -A LIB_FILE=(
    [zlib1g-dev]=/usr/include/zlib.h
    # The Python front (python/) is built for Debian's /usr/bin/python3 and installed beside
    # the libraries; Debian's numpy 1.x is what that interpreter has.
    [python3-dev]=/usr/bin/python3-config
    [python3-numpy]=/usr/lib/python3/dist-packages/numpy/__init__.py
)
# Only the test mode builds the suites (GoogleTest, pytest on Debian's python3 when the
# framework venv is left out) and makes the venv (python3-venv brings ensurepip).
if [ "$MODE" = test ]; then
    LIB_FILE[libgtest-dev]=/usr/include/gtest/gtest.h
    LIB_FILE[python3-pytest]=/usr/lib/python3/dist-packages/pytest/__init__.py
    # CustomOpBuilder sources include pybind11: its suite under ASan runs on Debian's python3
    LIB_FILE[pybind11-dev]=/usr/include/pybind11/pybind11.h
fi
if [ "$MODE" = test ] || [ "$MODE" = bench ]; then
    LIB_FILE[python3-venv]=/usr/lib/python3.11/ensurepip/__init__.py
fi

package_installed() {
    if command -v dpkg-query >/dev/null 2>&1; then
        [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]
    else
        [ -e "${LIB_FILE[$1]}" ]
    fi
}

missing_packages() {
    local -A want=()
    local tool pkg
    for tool in "${!TOOL_PACKAGE[@]}"; do
        command -v "$tool" >/dev/null 2>&1 || want[${TOOL_PACKAGE[$tool]}]=1
    done
    for pkg in "${!LIB_FILE[@]}"; do
        package_installed "$pkg" || want[$pkg]=1
    done
    # The sanitizer runtimes come with gcc (libasan, libubsan); check that they are there, as
    # a trimmed gcc install may lack them.
    if [ "$MODE" = test ] && command -v gcc >/dev/null 2>&1 &&
        ! echo 'int main(void){return 0;}' |
            gcc -x c -fsanitize=address,undefined -o /dev/null - >/dev/null 2>&1; then
        want[build-essential]=1
        want[libasan8]=1
        want[libubsan1]=1
    fi
    if [ "${#want[@]}" -gt 0 ]; then
        printf '%s\n' "${!want[@]}" | sort
    fi
}

install_deps() {
    begin_phase dependencies "Checking dependencies"
    local missing
    missing=$(missing_packages | tr '\n' ' ')
    missing=${missing% }
    if [ -z "$missing" ]; then
        end_phase "all present"
        return
    fi
    echo "missing: $missing"
    local apt="apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing"
    local sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1; then
            sudo=(sudo)
        else
            die "these packages are missing and this user cannot install them; as root, run:
    $apt
then run ./setup.sh again."
        fi
    fi
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update ||
        die "apt-get update failed (no network or no package sources?); the command was:
    $apt"
    # shellcheck disable=SC2086  # $missing is a list of package names
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing ||
        die "apt-get install failed; the command was:
    $apt"
    local still
    still=$(missing_packages | tr '\n' ' ')
    [ -z "$still" ] || die "still missing after apt-get install: $still"
    end_phase "installed $missing"
}

# --- build --------------------------------------------------------------------------------------

# configure_build DIR [extra cmake args...]
configure_build() {
    local dir=$1
    shift
    # compile_commands.json is what clang-tidy (tools/check-tidy.sh) and editors read.
    cmake -S "$ROOT" -B "$dir" -G Ninja -DCMAKE_INSTALL_PREFIX="$PREFIX" \
        -DCMAKE_EXPORT_COMPILE_COMMANDS=ON "$@"
}

build() {
    local dir=$1
    ninja -C "$dir" -j"$JOBS"
}

# The plain build: the product alone for install and demo; with the tests and benchmarks for
# test, whose Python suites then run with the framework venv's python (VENV_PYTHON, set by
# framework_venv) on pdext installed there, or with Debian's python3 on the build tree.
build_plain() {
    local what=ON
    [ "$MODE" = test ] || what=OFF
    begin_phase "build ($BUILD_DIR)" "Configuring and building ($BUILD_DIR)"
    configure_build "$BUILD_DIR" -DPDEXT_BUILD_TESTS=$what -DPDEXT_BUILD_BENCH=$what \
        -DPDEXT_TEST_PYTHON="${VENV_PYTHON:-}" -DPDEXT_TEST_FRAMEWORKS="$FRAMEWORKS" \
        -DPDEXT_TEST_WHEEL="${WHEEL:-}"
    build "$BUILD_DIR"
    end_phase
}

install_plain() {
    begin_phase "install ($PREFIX)" "Installing to $PREFIX"
    local sudo=()
    # Install through sudo only when the prefix is not ours to write.
    local probe=$PREFIX
    while [ ! -e "$probe" ]; do probe=$(dirname "$probe"); done
    if [ ! -w "$probe" ] && [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null 2>&1 ||
            die "$PREFIX is not writable; run as root, or choose another prefix: PREFIX=\$HOME/.local ./setup.sh"
        sudo=(sudo)
    fi
    "${sudo[@]}" cmake --install "$BUILD_DIR"
    # Let the dynamic linker know about a new library in a system directory.
    if [ "$(id -u)" -eq 0 ] && command -v ldconfig >/dev/null 2>&1; then
        ldconfig || true
    fi
    check_python_install
    end_phase
}

# The pdext Python package goes to <prefix>/lib/python3.X/dist-packages, which Debian's
# /usr/bin/python3 reads for the prefix /usr/local; other prefixes need PYTHONPATH.
check_python_install() {
    local site
    site=$(sed -n 's/^PDEXT_PYTHON_INSTALL_DIR:[A-Z]*=//p' "$BUILD_DIR/CMakeCache.txt" 2>/dev/null)
    [ -n "$site" ] || return 0 # the Python front was not built
    case $site in /*) ;; *) site=$PREFIX/$site ;; esac
    if (cd / && /usr/bin/python3 -c 'import pdext' >/dev/null 2>&1); then
        echo "python: /usr/bin/python3 -c 'import pdext' works ($site/pdext)"
    else
        echo "python: pdext is installed in $site; for /usr/bin/python3 to find it, set"
        echo "    export PYTHONPATH=$site\${PYTHONPATH:+:\$PYTHONPATH}"
    fi
}

# --- style and lint -----------------------------------------------------------------------------

check_format() {
    begin_phase format "Checking the house style: tools/check-format.sh (.clang-format)"
    JOBS="$JOBS" bash "$ROOT/tools/check-format.sh"
    end_phase
}

check_tidy() {
    begin_phase clang-tidy "Linting product code: tools/check-tidy.sh (.clang-tidy, $BUILD_DIR)"
    JOBS="$JOBS" bash "$ROOT/tools/check-tidy.sh" "$BUILD_DIR"
    end_phase
}

# --- the framework venv -----------------------------------------------------------------------

# Frameworks by the name PDEXT_FRAMEWORKS uses, and the PyPI packages that bring each.
declare -A FRAMEWORK_PACKAGES=(
    [torch]=torch [jax]="jax jaxlib" [onnxruntime]="onnx onnxruntime"
    [paddle]=paddlepaddle [mindspore]=mindspore
)
FRAMEWORK_PINS=$ROOT/tests/python/frameworks.txt

# FRAMEWORKS: the sorted list PDEXT_FRAMEWORKS asks for ("" for none); dies naming the known
# ones on an unknown name.
FRAMEWORKS=""
choose_frameworks() {
    local asked=${PDEXT_FRAMEWORKS:-all} name list=()
    asked=${asked//,/ }
    case " $asked " in
    " all ") list=("${!FRAMEWORK_PACKAGES[@]}") ;;
    " none " | "  ") list=() ;;
    *)
        for name in $asked; do
            [ -n "${FRAMEWORK_PACKAGES[$name]:-}" ] ||
                die "PDEXT_FRAMEWORKS names '$name'; the known frameworks are: $(printf '%s\n' "${!FRAMEWORK_PACKAGES[@]}" | sort | tr '\n' ' ')(or all, none)"
            list+=("$name")
        done
        ;;
    esac
    if [ "${#list[@]}" -gt 0 ]; then
        FRAMEWORKS=$(printf '%s\n' "${list[@]}" | sort -u | tr '\n' ' ')
        FRAMEWORKS=${FRAMEWORKS% }
    fi
}

# Makes (or reuses) the venv; sets VENV_PYTHON. A venv is complete once its stamp is written:
# one interrupted half-way is made again, not reused.
VENV_PYTHON=""
framework_venv() {
    [ -n "$FRAMEWORKS" ] || {
        echo "framework venv: PDEXT_FRAMEWORKS=none: the Python suites run on /usr/bin/python3"
        return 0
    }
    local key dir pkgs=(numpy pytest pybind11 scikit-build-core) name t0=$SECONDS
    key=$( (cat "$FRAMEWORK_PINS"; echo "$FRAMEWORKS"; /usr/bin/python3 -V) | sha256sum | cut -c1-12)
    dir=${PDEXT_VENV_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/pdext/venv-$key}
    begin_phase "framework venv" "The framework venv ($FRAMEWORKS): $dir"
    if [ -f "$dir/.pdext-complete" ]; then
        VENV_PYTHON=$dir/bin/python
        end_phase "reused"
        return 0
    fi
    for name in $FRAMEWORKS; do
        # shellcheck disable=SC2206  # a package list
        pkgs+=(${FRAMEWORK_PACKAGES[$name]})
    done
    rm -rf "$dir"
    mkdir -p "$(dirname "$dir")"
    /usr/bin/python3 -m venv "$dir"
    "$dir/bin/python" -m pip install --quiet --disable-pip-version-check \
        -c "$FRAMEWORK_PINS" "${pkgs[@]}" ||
        die "pip could not install ${pkgs[*]} (pinned by $FRAMEWORK_PINS) into $dir; without
network access to PyPI, run with PDEXT_FRAMEWORKS=none"
    touch "$dir/.pdext-complete"
    VENV_PYTHON=$dir/bin/python
    end_phase "made in $((SECONDS - t0))s, $(du -sh "$dir" | cut -f1)"
}

# Builds pdext's wheel from this tree the way `pip install .` does (scikit-build-core, its
# own build dir kept for the next run) and installs it into the venv; sets WHEEL.
WHEEL=""
install_wheel() {
    [ -n "$VENV_PYTHON" ] || return 0
    begin_phase "wheel" "Building pdext's wheel and installing it into the framework venv"
    local out=$BUILD_DIR/wheel
    rm -rf "$out"
    # No build isolation: the venv has the pinned scikit-build-core and numpy 2 already, so a
    # second run needs no network.
    "$VENV_PYTHON" -m pip wheel --quiet --disable-pip-version-check --no-deps \
        --no-build-isolation -w "$out" --config-settings=build-dir="$BUILD_DIR/wheel-build" "$ROOT"
    WHEEL=$(ls "$out"/pdext-*.whl)
    "$VENV_PYTHON" -m pip install --quiet --disable-pip-version-check --no-deps \
        --force-reinstall "$WHEEL"
    end_phase "$(basename "$WHEEL"), $(du -h "$WHEEL" | cut -f1)"
}

# --- tests --------------------------------------------------------------------------------------

run_ctest() {
    local dir=$1
    ctest --test-dir "$dir" --output-on-failure -j"$JOBS"
}

test_plain() {
    begin_phase "tests ($BUILD_DIR)" "Running the test suite ($BUILD_DIR)"
    run_ctest "$BUILD_DIR"
    end_phase
}

test_installed() {
    begin_phase "installed SDK ($PREFIX)" "Checking the installed SDK ($PREFIX): tests/install_test.sh"
    PREFIX="$PREFIX" bash "$ROOT/tests/install_test.sh"
    end_phase
}

test_sanitized() {
    begin_phase "tests under ASan + UBSan ($ASAN_BUILD_DIR)" \
        "Building and running the test suite under ASan + UBSan ($ASAN_BUILD_DIR)"
    # The Python suites run here too, on the framework venv's python where there is one (the
    # extension is then built against its numpy), else on Debian's python3.
    configure_build "$ASAN_BUILD_DIR" -DPDEXT_SANITIZE=ON \
        -DPython3_EXECUTABLE="${VENV_PYTHON:-/usr/bin/python3}" \
        -DPDEXT_TEST_FRAMEWORKS="${VENV_PYTHON:+$FRAMEWORKS}"
    build "$ASAN_BUILD_DIR"
    # Leak checking is the point of this run: keep it on whatever the caller's options say.
    # intercept_tls_get_addr=0: without it LeakSanitizer's check dies now and then, a bug of
    # GCC 12's runtime (PDEXT_ASAN_OPTIONS in CMakeLists.txt says which).
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1:intercept_tls_get_addr=0" \
        UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}print_stacktrace=1:halt_on_error=1" \
        run_ctest "$ASAN_BUILD_DIR"
    end_phase
}

# The executor's threads under ThreadSanitizer: only its suite and what that needs is built.
test_tsan() {
    begin_phase "executor tests under TSan ($TSAN_BUILD_DIR)" \
        "Building and running the executor tests under ThreadSanitizer ($TSAN_BUILD_DIR)"
    configure_build "$TSAN_BUILD_DIR" -DPDEXT_SANITIZE=thread
    cmake --build "$TSAN_BUILD_DIR" -j "$JOBS" --target executor_test executor_inline_test \
        executor_device_test executor_where_test ex_ops ds_sim_ops
    TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}halt_on_error=1:second_deadlock_stack=1" \
        ctest --test-dir "$TSAN_BUILD_DIR" -j "$JOBS" --output-on-failure -R '^(Executor|ExecutorSim|ExecutorDevice|ExecutorWhere|Workspace)\.'
    end_phase
}

# --- demo and bench -------------------------------------------------------------------------

run_demo() {
    local pdext=$PREFIX/bin/pdext
    begin_phase demo "Running $pdext demo"
    if [ ! -x "$pdext" ]; then
        echo "pdext demo: the pdext command is not built yet ($pdext is missing); nothing to show."
        end_phase "placeholder"
        return
    fi
    "$pdext" demo
    end_phase
}

# The framework rows (torch, JAX, ONNX Runtime, Paddle, MindSpore beside their own ops) run on
# the framework venv's python, so the release build's Python front is built for it (numpy 2's
# headers, which serve numpy 1 too); PDEXT_FRAMEWORKS=none leaves those rows out.
run_bench() {
    local python_args=()
    [ -z "$VENV_PYTHON" ] || python_args=(-DPython3_EXECUTABLE="$VENV_PYTHON")
    begin_phase "release build ($BENCH_BUILD_DIR)" "Release build for benchmarks ($BENCH_BUILD_DIR)"
    configure_build "$BENCH_BUILD_DIR" -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" \
        -DPDEXT_SANITIZE=OFF -DPDEXT_BUILD_TESTS=OFF -DPDEXT_BUILD_BENCH=ON "${python_args[@]}"
    build "$BENCH_BUILD_DIR"
    end_phase
    begin_phase bench "Running bench/run.sh"
    if [ ! -f "$ROOT/bench/run.sh" ]; then
        echo "bench: no benchmarks yet (bench/run.sh is missing); nothing to run."
        end_phase "placeholder"
        return
    fi
    PDEXT_BENCH_BUILD_DIR="$BENCH_BUILD_DIR" PDEXT_BENCH_FRAMEWORK_PYTHON="$VENV_PYTHON" \
        bash "$ROOT/bench/run.sh" "$BENCH_BUILD_DIR"
    end_phase
}

# --- main ---------------------------------------------------------------------------------------

case "$MODE" in
install)
    install_deps
    build_plain
    install_plain
    ;;
test)
    choose_frameworks
    install_deps
    check_format
    framework_venv
    install_wheel
    build_plain
    check_tidy
    install_plain
    test_plain
    test_installed
    test_sanitized
    test_tsan
    ;;
demo)
    install_deps
    build_plain
    install_plain
    run_demo
    ;;
bench)
    choose_frameworks
    install_deps
    framework_venv
    run_bench
    ;;
-h | --help | help)
    usage
    exit 0
    ;;
*)
    usage >&2
    die "unknown command '$MODE' (expected: test, demo, bench, or nothing)"
    ;;
esac

printf '[setup] ./setup.sh%s: all done in %ss\n' "${1:+ $1}" "$((SECONDS - START))"
