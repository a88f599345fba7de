# A thin convenience layer over CMake (as Neovim's): the README's two commands live here.
#   make demo           install missing packages, build, run the matmul demo
#   make test           install missing packages, build, run the suite, then the ASan+UBSan suite
#   make build          configure build/ (RelWithDebInfo) and build
#   make test-sanitize  only the ASan+UBSan suite, in build-asan/ (Debug)
#   make clean          remove both build folders
BUILD_DIR  ?= build
ASAN_DIR   ?= build-asan
BUILD_TYPE ?= RelWithDebInfo
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CTEST_JOBS ?= 2
CMAKE      ?= cmake
CTEST      ?= ctest

.PHONY: all setup build demo test test-sanitize clean

all: build

setup:
	scripts/setup.sh

build: setup
	$(CMAKE) -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)
	$(CMAKE) --build $(BUILD_DIR) -j$(JOBS)

demo: build
	$(BUILD_DIR)/apps/te-demo

test: build
	$(CTEST) --test-dir $(BUILD_DIR) --output-on-failure -j$(CTEST_JOBS)
	$(MAKE) --no-print-directory test-sanitize

test-sanitize: setup
	$(CMAKE) -S . -B $(ASAN_DIR) -DCMAKE_BUILD_TYPE=Debug -DTE_SANITIZE=ON
	$(CMAKE) --build $(ASAN_DIR) -j$(JOBS)
	$(CTEST) --test-dir $(ASAN_DIR) --output-on-failure -j$(CTEST_JOBS)

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR)
