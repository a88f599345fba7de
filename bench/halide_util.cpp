// halide_util.cpp — compiling, timing and running the Halide anchors (halide_bench.h).
#include "halide_pipe.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>

static const int hl_compile_samples = 3; // as TB_COMPILE_SAMPLES (te_util.h)

static double seconds_now() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

hl_pipe *hl_make(const std::function<void(hl_pipe &)> &define, char *err, int err_size) {
  hl_pipe *p = new hl_pipe();
  try {
    define(*p);
    Halide::Target target = Halide::get_jit_target_from_environment();
    // the median of hl_compile_samples compiles from scratch, as te's build time is measured
    double t[hl_compile_samples];
    for (int i = 0; i < hl_compile_samples; i++) {
      if (i)
        p->pipeline.invalidate_cache();
      double t0 = seconds_now();
      p->pipeline.compile_jit(target);
      t[i] = seconds_now() - t0;
    }
    std::sort(t, t + hl_compile_samples);
    p->compile_s = t[hl_compile_samples / 2];
    return p;
  } catch (const std::exception &e) {
    std::snprintf(err, (size_t)err_size, "%s", e.what());
  } catch (...) {
    std::snprintf(err, (size_t)err_size, "unknown Halide error");
  }
  delete p;
  return nullptr;
}

Halide::Buffer<float> hl_wrap(const float *data, std::vector<int> extents) {
  std::vector<halide_dimension_t> dims;
  int stride = 1;
  for (int e : extents) {
    dims.push_back(halide_dimension_t(0, e, stride));
    stride *= e;
  }
  return Halide::Buffer<float>(const_cast<float *>(data), (int)dims.size(), dims.data());
}

extern "C" double hl_compile_s(const hl_pipe *p) { return p->compile_s; }

extern "C" int hl_run(void *arg) {
  hl_pipe *p = static_cast<hl_pipe *>(arg);
  try {
    p->pipeline.realize(p->output);
    return 0;
  } catch (...) {
    return 1;
  }
}

extern "C" void hl_free(hl_pipe *p) { delete p; }

extern "C" void hl_warm_up(void) {
  try {
    Halide::Func f("warm_up");
    Halide::Var x("x");
    f(x) = x * 2.0f;
    f.vectorize(x, 16).parallel(x, 64);
    f.compile_jit(Halide::get_jit_target_from_environment());
    Halide::Buffer<float> out = f.realize({1024});
    (void)out;
  } catch (...) {
  }
}

extern "C" void hl_target_str(char *buf, int size) {
  try {
    std::snprintf(buf, (size_t)size, "%s",
                  Halide::get_jit_target_from_environment().to_string().c_str());
  } catch (...) {
    std::snprintf(buf, (size_t)size, "unknown");
  }
}
