// halide_pipe.hpp — what the Halide anchor files share: the pipeline holder behind hl_pipe and a
// helper that JIT-compiles it with timing and turns Halide's exceptions into a message.
#ifndef TE_BENCH_HALIDE_PIPE_HPP
#define TE_BENCH_HALIDE_PIPE_HPP

#include "halide_bench.h"

#include <Halide.h>

#include <functional>
#include <vector>

struct hl_pipe {
  Halide::Pipeline pipeline;
  std::vector<Halide::Buffer<float>> inputs; // keep the wrappers alive
  Halide::Buffer<float> output;
  double compile_s = 0; // the median of three compile_jit calls from scratch
};

// Builds a pipeline with define (which fills p), compiles it and returns it; on any Halide error
// returns nullptr with the message in err.
hl_pipe *hl_make(const std::function<void(hl_pipe &)> &define, char *err, int err_size);

// Wraps a row-major C array as a Halide buffer; Halide's first dimension is the innermost, so
// the extents are given innermost first.
Halide::Buffer<float> hl_wrap(const float *data, std::vector<int> extents_innermost_first);

#endif
