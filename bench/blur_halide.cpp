// blur_halide.cpp — the Halide 14 anchor for the 3x3 separable box blur, with the classic
// schedule from Halide's README and paper widened to AVX-512: the output tiled 256 x 32,
// vectorized 16-wide, rows of tiles in parallel; blur_x computed per tile (compute_at the tile's
// x loop) and vectorized. Multiplication by 1/3 (not division) in every variant of the bench.
#include "halide_pipe.hpp"

using namespace Halide;

extern "C" hl_pipe *hl_blur_new(int width, int height, const float *in, float *out, int parallel,
                                char *err, int err_size) {
  return hl_make(
      [=](hl_pipe &p) {
        ImageParam input(Float(32), 2, "input");
        Var x("x"), y("y"), xi("xi"), yi("yi");
        Func blur_x("blur_x"), blur_y("blur_y");
        const float third = 1.0f / 3.0f;
        blur_x(x, y) = (input(x, y) + input(x + 1, y) + input(x + 2, y)) * third;
        blur_y(x, y) = (blur_x(x, y) + blur_x(x, y + 1) + blur_x(x, y + 2)) * third;

        blur_y.tile(x, y, xi, yi, 256, 32).vectorize(xi, 16);
        if (parallel)
          blur_y.parallel(y);
        blur_x.compute_at(blur_y, x).vectorize(x, 16);
        blur_y.bound(x, 0, width).bound(y, 0, height);

        p.inputs = {hl_wrap(in, {width + 2, height + 2})};
        input.set(p.inputs[0]);
        p.output = hl_wrap(out, {width, height});
        p.pipeline = Pipeline(blur_y);
      },
      err, err_size);
}
