# A thin convenience layer over CMake (as Neovim's): the README's commands live here.
#   make demo           install missing packages, build, run the matmul demo (DEMO_ARGS="--quick")
#   make check          build, run the fast tests only (unit, golden, errors; not the tuning runs):
#                       the quick loop while developing
#   make test           install missing packages (and the reused Python venv), fetch the model
#                       te-embed's tests use, build, run the suite (the wheel test among it),
#                       then the ASan+UBSan suite, then each fuzz target for FUZZ_SECONDS
#   make models         fetch all-MiniLM-L6-v2 into build-models/ (scripts/fetch-minilm.sh)
#   make build          configure build/ (RelWithDebInfo) and build
#   make test-sanitize  only the ASan+UBSan suite, in build-asan/ (Debug)
#   make test-fuzz      only the fuzz targets, built with clang in build-fuzz/ and run for
#                       FUZZ_SECONDS each (default 60; test/fuzz/README.md: longer campaigns)
#   make clean          remove the build folders
#   make bench          build bench/ in build-bench/ (Release) and run it against OpenBLAS, oneDNN,
#                       Halide 14 and C (BENCH_ARGS="--quick" or "--only sgemm" to narrow it)
#   make bench-models   te-embed against sentence-transformers on PyTorch, eager and torch.compile
#                       (bench/models/embed_bench.py; sets up the Python venv with --bench)
#   make bench-tuners   te-tune against TVM MetaSchedule 0.27 (its own venv, scripts/setup-tvm.sh):
#                       both tune the same workloads, their kernels timed side by side
#                       (bench/tuners/run.sh; BENCH_TUNERS_ARGS="--trials 8 --workloads matmul")
#   make bench-llama    te-llama against a plain C decoder written as llama2.c's run.c and PyTorch,
#                       110M and 1.1B random checkpoints, f32, bf16 and int8 (bench/llama/run.sh;
#                       8.7 GB of files)
BUILD_DIR  ?= build
ASAN_DIR   ?= build-asan
BUILD_TYPE ?= RelWithDebInfo
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CTEST_JOBS ?= 2
CMAKE      ?= cmake
CTEST      ?= ctest
BENCH_DIR  ?= build-bench
FUZZ_DIR   ?= build-fuzz
FUZZ_CC    ?= clang-14
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= parse target replay schedule tune_log
BENCH_ARGS ?=
BENCH_MODELS_ARGS ?=
BENCH_TUNERS_ARGS ?=
DEMO_ARGS  ?=
# make check: the tests of these labels, less the tuning runs (a minute of the quick loop)
CHECK_LABELS  ?= ^(unit|golden|errors)$$
CHECK_EXCLUDE ?= ^unit[.]tune_(run|show)$$

.PHONY: all setup build models demo check test test-sanitize test-fuzz bench bench-models bench-tuners bench-llama clean

all: build

setup:
	scripts/setup.sh

build: setup
	$(CMAKE) -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)
	$(CMAKE) --build $(BUILD_DIR) -j$(JOBS)

demo: build
	$(BUILD_DIR)/apps/te-demo $(DEMO_ARGS)

check: build
	$(CTEST) --test-dir $(BUILD_DIR) --output-on-failure -j$(CTEST_JOBS) -L '$(CHECK_LABELS)' \
	  -E '$(CHECK_EXCLUDE)'

# A model that cannot be fetched (no network) does not stop the run: te-embed's tests then skip,
# or fail where TE_REQUIRE lists minilm (CI).
models:
	scripts/fetch-minilm.sh || echo "make: all-MiniLM-L6-v2 not fetched: apps.embed_* will skip" >&2

# The Python tests run in the reused virtual environment of scripts/setup-python.sh (numpy,
# pytest, scikit-build-core for the wheel test, torch for the backend tests): created once,
# then only updated.
test: build models
	venv=$$(scripts/setup-python.sh) && \
	  $(CMAKE) -S . -B $(BUILD_DIR) -DTE_PYTHON3=$$venv/bin/python >/dev/null
	$(CTEST) --test-dir $(BUILD_DIR) --output-on-failure -j$(CTEST_JOBS)
	$(MAKE) --no-print-directory test-sanitize
	$(MAKE) --no-print-directory test-fuzz

test-sanitize: setup models
	venv=$$(scripts/setup-python.sh) && \
	  $(CMAKE) -S . -B $(ASAN_DIR) -DCMAKE_BUILD_TYPE=Debug -DTE_SANITIZE=ON \
	  -DTE_PYTHON3=$$venv/bin/python
	$(CMAKE) --build $(ASAN_DIR) -j$(JOBS)
	$(CTEST) --test-dir $(ASAN_DIR) --output-on-failure -j$(CTEST_JOBS)

# The libFuzzer targets need clang (Debian's clang-14 with libclang-rt-14-dev, from setup.sh);
# the library is compiled once more for them, instrumented.
test-fuzz: setup
	CC=$(FUZZ_CC) $(CMAKE) -S . -B $(FUZZ_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTE_FUZZ=ON
	$(CMAKE) --build $(FUZZ_DIR) -j$(JOBS) --target fuzz
	test/fuzz/run.sh $(FUZZ_DIR) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# OpenBLAS picks its kernel from OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE when set: unset them for this
# run only, so it uses the best kernel for this CPU.
bench-tuners: build
	bench/tuners/run.sh $(BUILD_DIR) $(BENCH_TUNERS_ARGS)

bench-llama: build
	bench/llama/run.sh $(BUILD_DIR)

bench:
	scripts/setup-bench.sh
	$(CMAKE) -S bench -B $(BENCH_DIR) -DCMAKE_BUILD_TYPE=Release
	$(CMAKE) --build $(BENCH_DIR) -j$(JOBS) --target te-bench
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $(BENCH_DIR)/te-bench $(BENCH_ARGS)

bench-models: build models
	venv=$$(scripts/setup-python.sh --bench | tail -1) && \
	  "$$venv/bin/python" bench/models/embed_bench.py --te-embed $(BUILD_DIR)/apps/embed/te-embed \
	    --model build-models/all-minilm-l6-v2 $(BENCH_MODELS_ARGS)

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR) $(FUZZ_DIR)
