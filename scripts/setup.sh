#!/usr/bin/env bash
# setup.sh — install the Debian packages te needs to build and test, only those missing.
#
# Idempotent: when everything is installed it changes nothing and needs no root. Otherwise it
# runs apt-get (as root, or through sudo), waiting up to 5 minutes for another apt's lock.
# Benchmark anchors (OpenBLAS, oneDNN, Halide) are in scripts/setup-bench.sh.
set -euo pipefail

packages=(
  build-essential cmake pkg-config   # compiler (gcc with libgomp for OpenMP), build
  llvm-22-dev                        # LLVM 22 C API, llvm-config-22 (bookworm-security)
  libffi-dev libdlpack-dev libjansson-dev libxgboost-dev
  libcriterion-dev                   # unit tests
  spirv-headers spirv-tools mesa-vulkan-drivers libvulkan-dev   # Vulkan / SPIR-V back end
  python3-numpy python3-pytest       # Python bindings and their tests
  libopenblas-dev                    # the demo's yardstick (loaded at run time when present)
  clang-14 libclang-rt-14-dev libomp-14-dev   # libFuzzer targets (make test-fuzz)
  clang-format                       # scripts/check-format.sh (CTest format.clang_format)
  libopenmpi-dev openmpi-bin         # te-tune tune --mpi (CTest tune.mpi)
)

exec "$(dirname "${BASH_SOURCE[0]}")/install-packages.sh" "${packages[@]}"
