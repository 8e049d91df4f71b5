# Set-up and entry points. On a fresh machine `make test` and `make demo` do
# everything: Debian packages (gtest, ccache), the virtual environment at .venv
# with the exact pins of requirements.lock, and the C++ build (CMake, driven
# by pip against the installed torch).
#
# Test budget on 2 cores: `make test` within 20 minutes from a fresh clone,
# set-up included. It does not fit yet: the README's "Test time" holds the
# measured time of each phase and what takes it.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
DEPS_STAMP := $(VENV)/.deps-installed
BUILD_DIR := build/cmake
BUILD_STAMP := $(BUILD_DIR)/.installed
CXX_SOURCES := $(shell find hal csrc tests/cpp cmake -name '*.cpp' -o -name '*.h' -o -name CMakeLists.txt -o -name '*.cmake') CMakeLists.txt pyproject.toml
# The editable install maps each Python module to its file: adding, moving or
# removing one (which changes its folder's time) reinstalls.
PY_FOLDERS := $(shell find torch_neuronx -type d -not -name __pycache__)

export OMP_NUM_THREADS ?= 2
# Python's default: compiled modules cached in __pycache__. A shell that
# turns it off makes every one of the tests' processes compile the package
# anew.
unexport PYTHONDONTWRITEBYTECODE
# ccache keyed on paths relative to the checkout, so another clone of the
# repository (CI's) reuses the objects of this one's builds.
CCACHE_RELATIVE = CCACHE_BASEDIR=$(CURDIR) CCACHE_NOHASHDIR=1

.PHONY: all build format format-check walks test test-cpp test-cpp-asan test-cpp-tsan test-python-asan test-python demo device-demo bench figures sweep scale sanitize fuzz nki-library nki-tutorials soak kernel-repos system-deps clean

all: build

system-deps:
	@if [ ! -f /usr/include/gtest/gtest.h ] || ! command -v ccache >/dev/null || ! command -v ip >/dev/null \
	    || ! command -v cmake >/dev/null || ! command -v ninja >/dev/null; then \
	  echo "installing libgtest-dev, ccache, iproute2, cmake and ninja-build (Debian)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libgtest-dev ccache iproute2 cmake ninja-build >/dev/null; \
	fi

$(DEPS_STAMP): requirements.lock
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -r requirements.lock
	touch $@

$(BUILD_STAMP): $(DEPS_STAMP) $(CXX_SOURCES) $(PY_FOLDERS) | system-deps
	$(CCACHE_RELATIVE) $(PY) -m pip install -q --no-build-isolation --no-deps -e .
	touch $@

build: $(BUILD_STAMP)

test-cpp: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure --timeout 120

# Two pytest workers (pytest-xdist), the heaviest test files handed out first
# (tests/python/conftest.py); each test's torch single-threaded and Inductor
# compiling in-process (no pool of compile workers, each a fresh torch
# import), so the tests that start processes leave the other core to their
# ranks; workers and ranks forked from a process that has imported torch
# (tests/python/helpers/forkserver.py). -rs prints why each skipped test skipped.
TEST_WORKERS ?= 2
test-python: build
	OMP_NUM_THREADS=1 TORCHINDUCTOR_COMPILE_THREADS=1 $(PY) -m pytest -q -rs -p no:cacheprovider -n $(TEST_WORKERS) --dist load --durations=20 tests/python

# Style (pyproject.toml's [tool.ruff], .clang-format): format-check runs first
# in `make test` (seconds); `make format` applies both formatters.
CXX_FORMATTED = $(shell find csrc hal tests/cpp -name '*.cpp' -o -name '*.h')
format: $(DEPS_STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/clang-format -i $(CXX_FORMATTED)

format-check: $(DEPS_STAMP)
	@$(VENV)/bin/ruff format --check . && $(VENV)/bin/ruff check .
	@$(VENV)/bin/clang-format --dry-run --Werror $(CXX_FORMATTED) && echo "C++ formatted (clang-format)"

test: format-check test-cpp test-python

demo: build
	$(PY) examples/demo.py

device-demo: build
	$(PY) examples/device_demo.py

bench: build
	$(PY) benchmarks/device/copy_bandwidth.py
	$(PY) benchmarks/device/allocation_latency.py
	$(PY) benchmarks/device/stream_modes.py
	$(PY) benchmarks/device/eager_overhead.py
	$(PY) benchmarks/device/autograd_thread.py
	$(PY) benchmarks/distributed/collectives.py
	$(PY) benchmarks/distributed/collective_latency.py
	$(PY) benchmarks/distributed/scaling.py
	$(PY) benchmarks/models/compile.py
	$(PY) benchmarks/models/compiled_decode_processes.py
	$(PY) benchmarks/device/wrapper_calls.py
	$(PY) benchmarks/models/hf_workloads.py
	$(PY) benchmarks/estimates/nki.py
	$(PY) benchmarks/models/kernel_hub.py
	$(PY) benchmarks/estimates/estimate_validation.py
	$(PY) benchmarks/device/profiler_overhead.py
	$(PY) benchmarks/render_figures.py

# The files the two walks of docs/architecture.md run (callgrind; a few minutes).
walks: build
	$(PY) tools/walks.py
	$(PY) benchmarks/render_figures.py

# docs/figures.md from the JSON the benchmarks write in build/bench (each
# benchmark's section replaced, the others kept); no build needed.
figures: $(DEPS_STAMP)
	$(PY) benchmarks/render_figures.py

# The C++ tier under sanitizers, each in a build tree of its own
# (docs/develop.md). test-cpp-asan: AddressSanitizer +
# UndefinedBehaviorSanitizer, any report fatal; not in `make test`, whose
# 20-minute budget its build from a cold ccache does not fit (the README's
# "Test time").
# test-cpp-tsan (`make sanitize` only): ThreadSanitizer with every emulator
# stream on its worker thread; tests/sanitizers/tsan.supp lists what is
# suppressed, each entry with its reason; it builds file by file (no unity
# build), which proves each file includes what it uses. An instrumented
# build takes minutes from a cold ccache, seconds from a warm one.
SAN_CMAKE = cmake -S . -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPython_EXECUTABLE=$(abspath $(PY))
test-cpp-asan: $(DEPS_STAMP) | system-deps
	$(SAN_CMAKE) -B build/asan -DTORCH_NEURONX_SANITIZE=address
	$(CCACHE_RELATIVE) cmake --build build/asan
	mkdir -p build/sanitize && set -o pipefail && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --test-dir build/asan --output-on-failure --timeout 600 | tee build/sanitize/cpp-asan.log

test-cpp-tsan: $(DEPS_STAMP) | system-deps
	$(SAN_CMAKE) -B build/tsan -DTORCH_NEURONX_SANITIZE=thread -DCMAKE_UNITY_BUILD=OFF
	$(CCACHE_RELATIVE) cmake --build build/tsan
	mkdir -p build/sanitize && set -o pipefail && TORCH_NEURONX_EMU_QUEUE=thread \
	  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$(abspath tests/sanitizers/tsan.supp)" \
	  ctest --test-dir build/tsan --output-on-failure --timeout 600 | tee build/sanitize/cpp-tsan.log

# A Python subset (the OpInfo fast sweep, the tiny Llama step, a compiled
# MLP, the collectives and fault tests in real processes, the collective
# fuzzer's 400 sequences) with the ASan + UBSan builds of the core and HAL
# preloaded in place of the installed ones (the bindings module _C itself is
# the installed, uninstrumented one); child processes inherit them.
ASAN_PRELOAD = $(shell gcc -print-file-name=libasan.so):$(CURDIR)/build/asan/hal/libneuron_hal.so:$(CURDIR)/build/asan/csrc/libtorch_neuronx.so
test-python-asan: test-cpp-asan build
	set -o pipefail && LD_PRELOAD=$(ASAN_PRELOAD) ASAN_OPTIONS=detect_leaks=0 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:suppressions=$(abspath tests/sanitizers/asan_python.supp) \
	  $(PY) -m pytest -q -p no:cacheprovider tests/python/ops/test_opinfo_sweep.py tests/python/ops/test_tiny_llama.py \
	    "tests/python/compile/test_compile.py::test_compiled_mlp_forward_and_backward_equal_eager_with_generated_cpp_kernels" \
	    tests/python/distributed/test_distributed_collectives.py tests/python/distributed/test_distributed_faults.py \
	    tests/python/distributed/test_collective_fuzz.py tests/python/device/test_streams.py | tee build/sanitize/python-asan.log

# The three tiers, then their results into build/bench/sanitize.json (make figures).
sanitize: test-cpp-asan test-cpp-tsan test-python-asan
	$(PY) tools/sanitize_report.py

# Differential fuzzing (docs/develop.md): 10,000 random programs of
# tensor operations on the CPU and on neuron, and 5,000 random sequences of
# collectives per world size (2 and 3 ranks) against gloo; then 2,000
# programs and 1,000 sequences per world size with every emulator stream on a
# worker thread. About 25 minutes on a quiet 2-core machine, under an hour
# beside a CPU hog. Smaller runs: make fuzz FUZZ_PROGRAMS=500
# FUZZ_SEQUENCES=200 (the thread-queue half runs a fifth of each).
FUZZ_PROGRAMS ?= 10000
FUZZ_SEQUENCES ?= 5000
fuzz: build
	FUZZ_PROGRAMS=$(FUZZ_PROGRAMS) FUZZ_SEQUENCES=$(FUZZ_SEQUENCES) $(PY) -m pytest -q -p no:cacheprovider tests/fuzz
	FUZZ_PROGRAMS=$$(( $(FUZZ_PROGRAMS) / 5 )) FUZZ_SEQUENCES=$$(( $(FUZZ_SEQUENCES) / 5 )) TORCH_NEURONX_EMU_QUEUE=thread \
	  $(PY) -m pytest -q -p no:cacheprovider tests/fuzz

# The NKI Library yardstick (docs/nki.md): AWS's NKI Library's own tests,
# unchanged, with torch_neuronx.nki as their simulator, from a checkout of
# github.com/aws-neuron/nki-library given as NKI_LIBRARY. Not in make test:
# the library is not part of the project.
nki-library: build
	@test -n "$(NKI_LIBRARY)" || (echo "make nki-library NKI_LIBRARY=path/to/nki-library (a checkout of github.com/aws-neuron/nki-library)"; exit 2)
	$(PY) benchmarks/nki_library/run.py $(NKI_LIBRARY)

# The NKI tutorial yardstick (docs/nki.md): AWS's tutorial kernels run by
# their own PyTorch drivers, unchanged, from checkouts of
# github.com/aws-neuron/aws-neuron-sdk and/or aws-neuron/nki-samples given as
# NKI_TUTORIALS. Not in make test: the tutorials are not part of the project.
nki-tutorials: build
	@test -n "$(NKI_TUTORIALS)" || (echo 'make nki-tutorials NKI_TUTORIALS="path/to/aws-neuron-sdk path/to/nki-samples"'; exit 2)
	$(PY) benchmarks/nki_tutorials/run.py $(NKI_TUTORIALS)

# The soak (docs/develop.md): a compiled bf16-autocast tiny Llama trained
# with AdamW for 2,000 steps, 2,000 generate calls, and 2-rank FSDP2 training
# for 500 steps, each checked for a steady device memory, a bounded resident
# set and no leaked descriptor, thread or /dev/shm segment. A few minutes.
soak: build
	$(PY) tests/soak/run_soak.py

# The build/torch-neuron variants of the NKI kernel repositories (docs/kernels.md);
# the tests and benchmarks build them too.
kernel-repos: build
	$(PY) -m torch_neuronx.kernel_builder build examples/kernel-repos/*/

# The announcement's SFT grid (TP 4 x FSDP 8, 32 processes on 8 emulated Trainium2
# chips) beside a 2-process run with the same global batch: losses compared,
# wall time and peak memory per process (docs/figures.md). Not in
# `make test`: it needs about 19 GiB of free RAM and 6-7 minutes on 2 cores.
scale: build
	$(PY) benchmarks/distributed/scale_sft.py
	$(PY) benchmarks/render_figures.py

sweep: build
	OMP_NUM_THREADS=1 $(PY) tests/sweep/opinfo_sweep.py --max-samples 8 --figures --out build/opinfo_sweep.tsv
	$(PY) tests/sweep/architecture_sweep.py --out docs/model-coverage.md

clean:
	rm -rf build
