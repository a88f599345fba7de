#!/bin/sh
# gpu-check.sh — on a machine with an NVIDIA GPU, run te's CUDA checks from an existing build
# folder and print the results. Needs only the GPU driver (libcuda.so.1) and the build folder
# copied from a machine that built te: no cmake, compiler or package manager.
#
#   scripts/gpu-check.sh [BUILD_DIR]     (default: build)
#
# 1. nvidia-smi's view of the device, when it is installed.
# 2. The CUDA test suite with TE_REQUIRE=cuda (a skip is a failure here): ctest -R 'cuda|ptx|gpu'
#    when ctest is on PATH, else the test binaries directly (e2e/test_cuda, unit/test_ptx,
#    unit/test_ptx_mma, unit/test_ptx_vector, unit/test_gpu_tree, unit/test_cuda_launch,
#    errors/test_gpu_errors). e2e/test_cuda's cuda.vector_* run vectorized kernels (128-bit
#    accesses) and, with misaligned arguments, their element-wise copy.
# 3. The GPU benchmark apps/te-bench-gpu --require-gpu (SGEMM 4096, softmax and layer norm
#    8192^2 as fractions of the device's peak; TE_GPU_PEAK_TFLOPS / TE_GPU_PEAK_GBPS for a device
#    other than an H200).
# 4. A short CUDA tuning run: te-tune tune matmul 1024^3 --target cuda (32 trials, every
#    candidate checked against the host's default schedule), then its best record.
# 5. The Python device arrays (python/tests/test_device.py) with TE_REQUIRE_CUDA=1, when a
#    python3 with numpy and pytest is there (else a line saying it was not run; not a failure).
# libdevice: the toolkit's when installed, else the copy in BUILD_DIR/libdevice.10.bc.
# Exit status: 0 when every step passed, else the number of failed steps.
set -u
build=${1:-build}
if [ ! -d "$build/test" ]; then
  echo "gpu-check: '$build' is not a te build folder (no test/ in it)" >&2
  exit 2
fi
failed=0
step() { echo; echo "== $*"; }

# CUDA kernels' math functions need the toolkit's libdevice: a machine with only the driver
# uses the copy the build folder keeps (apps/CMakeLists.txt).
if [ -z "${TE_LIBDEVICE:-}" ] && [ -f "$build/libdevice.10.bc" ]; then
  found=
  for d in "${CUDA_HOME:-}" "${CUDA_PATH:-}" /usr/local/cuda; do
    [ -n "$d" ] && [ -f "$d/nvvm/libdevice/libdevice.10.bc" ] && found=1
  done
  [ -z "$found" ] && export TE_LIBDEVICE="$build/libdevice.10.bc"
fi

step "device"
if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv || true
else
  echo "nvidia-smi not installed"
fi

step "CUDA tests (TE_REQUIRE=cuda)"
export TE_REQUIRE=cuda
if command -v ctest >/dev/null 2>&1; then
  ctest --test-dir "$build" -R 'cuda|ptx|gpu' --output-on-failure || failed=$((failed + 1))
else
  for t in e2e/test_cuda unit/test_ptx unit/test_ptx_mma unit/test_ptx_vector unit/test_gpu_tree \
    unit/test_cuda_launch errors/test_gpu_errors; do
    if [ -x "$build/test/$t" ]; then
      echo "-- $t"
      "$build/test/$t" || failed=$((failed + 1))
    else
      echo "-- $t: not built in $build"
      failed=$((failed + 1))
    fi
  done
fi
unset TE_REQUIRE

step "GPU benchmark"
if [ -x "$build/apps/te-bench-gpu" ]; then
  "$build/apps/te-bench-gpu" --require-gpu || failed=$((failed + 1))
else
  echo "$build/apps/te-bench-gpu not built"
  failed=$((failed + 1))
fi

step "CUDA tuning (te-tune tune matmul M=N=K=1024 --target cuda, 32 trials)"
if [ -x "$build/te-tune" ]; then
  tlog=$(mktemp /tmp/te-gpu-tune.XXXXXX.jsonl)
  if "$build/te-tune" tune matmul M=1024 N=1024 K=1024 --target cuda --trials 32 --batch 8 \
      --check 32 --log "$tlog"; then
    "$build/te-tune" best --log "$tlog" --target cuda || failed=$((failed + 1))
    if grep -q '"error_kind":"wrong"' "$tlog"; then
      echo "a cuda candidate computed wrong values (see $tlog)"
      failed=$((failed + 1))
    fi
  else
    failed=$((failed + 1))
  fi
  echo "log: $tlog"
else
  echo "$build/te-tune not built"
  failed=$((failed + 1))
fi

step "Python device arrays (python/tests/test_device.py)"
here=$(cd "$(dirname "$0")/.." && pwd)
py=
for p in "${TE_PYTHON3:-}" "$HOME/.cache/te/venv/bin/python" python3; do
  if [ -n "$p" ] && command -v "$p" >/dev/null 2>&1 && "$p" -c "import numpy, pytest" 2>/dev/null
  then
    py=$p
    break
  fi
done
if [ -z "$py" ]; then
  echo "not run: no python3 with numpy and pytest on this machine"
elif [ ! -f "$here/python/tests/test_device.py" ]; then
  echo "not run: no source tree at $here"
else
  TE_LIBRARY="$(cd "$build" && pwd)/libte.so" TE_REQUIRE_CUDA=1 TE_DEBUG_POISON_OUTPUTS=1 \
    PYTHONPATH="$here/python" "$py" -m pytest -q -rs "$here/python/tests/test_device.py" ||
    failed=$((failed + 1))
fi

echo
if [ "$failed" -eq 0 ]; then
  echo "gpu-check: all passed"
else
  echo "gpu-check: $failed step(s) failed"
fi
exit "$failed"
