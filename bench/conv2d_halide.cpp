// conv2d_halide.cpp — the Halide 14 anchor for the ResNet-50 3x3 conv layer, NCHW f32.
//
// The zero padding is a compute_root stage (parallel over channels, vectorized), like te's
// padding stage. The output is cut into register tiles of 16 x (vectorized) by 2 y by 8 output
// channels = 16 zmm accumulators; the reduction stage is computed per tile with its update
// ordered (c, ry, rx) outside (k, y, x) and the tile loops unrolled; tiles of (k, y) rows run in
// parallel. Halide shifts the last x tile inwards (56 = 3 x 16 + 8), so no tail is scalar.
// Halide coordinates: in(x, y, c, n), w(rx, ry, c, k), out(x, y, k, n).
#include "halide_pipe.hpp"

using namespace Halide;

extern "C" hl_pipe *hl_conv2d_new(int batch, int chans, int height, int width, int kout,
                                  const float *in, const float *w, float *out, int parallel,
                                  char *err, int err_size) {
  return hl_make(
      [=](hl_pipe &p) {
        ImageParam input(Float(32), 4, "input"), weights(Float(32), 4, "weights");
        Var x("x"), y("y"), k("k"), n("n"), xo("xo"), xi("xi"), yo("yo"), yi("yi"), ko("ko"),
            ki("ki"), t("t");
        Func padded("padded"), conv("conv"), result("result");
        padded(x, y, k, n) = BoundaryConditions::constant_exterior(
            input, 0.0f, {{0, width}, {0, height}})(x - 1, y - 1, k, n);
        RDom r(0, 3, 0, 3, 0, chans, "r");
        conv(x, y, k, n) = 0.0f;
        conv(x, y, k, n) += weights(r.x, r.y, r.z, k) * padded(x + r.x, y + r.y, r.z, n);
        result(x, y, k, n) = conv(x, y, k, n);

        result.split(x, xo, xi, 16)
            .split(y, yo, yi, 2)
            .split(k, ko, ki, 8)
            .reorder(xi, yi, ki, xo, yo, ko, n)
            .vectorize(xi, 16)
            .unroll(yi)
            .unroll(ki)
            .fuse(yo, ko, t);
        if (parallel)
          result.parallel(t);
        conv.compute_at(result, xo).vectorize(x, 16).unroll(y).unroll(k);
        conv.update()
            .reorder(x, y, k, r.x, r.y, r.z)
            .vectorize(x, 16)
            .unroll(y)
            .unroll(k)
            .unroll(r.x);
        padded.compute_root().vectorize(x, 16);
        if (parallel)
          padded.parallel(k);
        result.bound(x, 0, width).bound(y, 0, height).bound(k, 0, kout).bound(n, 0, batch);

        p.inputs = {hl_wrap(in, {width, height, chans, batch}), hl_wrap(w, {3, 3, chans, kout})};
        input.set(p.inputs[0]);
        weights.set(p.inputs[1]);
        p.output = hl_wrap(out, {width, height, kout, batch});
        p.pipeline = Pipeline(result);
      },
      err, err_size);
}
