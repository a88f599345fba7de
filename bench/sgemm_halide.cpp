// sgemm_halide.cpp — the Halide 14 SGEMM anchor: C = A * B, n x n row-major f32.
//
// Algorithm and schedule follow Halide's own matrix_multiplication performance test, widened
// from AVX2 to AVX-512: a pure output Func over an update-stage reduction, the output tiled into
// TX x TY blocks (fused and parallel), each block cut into TX x RY register tiles; the reduction
// stage is computed per register tile with x vectorized 16-wide and unrolled, y unrolled, and k
// the outer loop of the update (unrolled by 2). With TX = 32 and RY = 8 a register tile is
// 2 x 8 = 16 zmm accumulators, B is read 2 vectors per k and A broadcast 8 times per k.
// One addition, as in Halide's linear_algebra app and in te's schedule: B is first packed into
// TX-wide panels Bp(x % TX, k, x / TX) (a compute_root stage, vectorized and parallel). Without
// it the k loop strides B by the row length, a power of two here, and 1024/2048 thrash the
// caches (Halide fell to 8 GFLOP/s at 2048 in this bench before the packing was added).
// Halide's x is the innermost dimension: C(x = j, y = i), A(k, i), B(j, k).
#include "halide_pipe.hpp"

using namespace Halide;

namespace {
const int TX = 32, TY = 64, RY = 8, VEC = 16;
}

extern "C" hl_pipe *hl_sgemm_new(int n, const float *a, const float *b, float *c, int parallel,
                                 char *err, int err_size) {
  return hl_make(
      [=](hl_pipe &p) {
        ImageParam A(Float(32), 2, "A"), B(Float(32), 2, "B");
        Var x("x"), y("y"), xi("xi"), yi("yi"), yii("yii"), xy("xy");
        RDom k(0, n, "k");
        Func prod("prod"), out("C"), Bp("Bp");
        Var bi("bi"), bk("bk"), bo("bo");
        Bp(bi, bk, bo) = B(bo * TX + bi, bk);
        prod(x, y) += A(k, y) * Bp(x % TX, k, x / TX);
        out(x, y) = prod(x, y);
        Bp.compute_root().bound(bi, 0, TX).vectorize(bi, VEC);
        if (parallel)
          Bp.parallel(bo);

        out.tile(x, y, xi, yi, TX, TY).fuse(x, y, xy);
        if (parallel)
          out.parallel(xy);
        out.split(yi, yi, yii, RY).vectorize(xi, VEC).unroll(xi).unroll(yii);
        prod.compute_at(out, yi).vectorize(x, VEC).unroll(y);
        prod.update().reorder(x, y, k).vectorize(x, VEC).unroll(x).unroll(y).unroll(k, 2);
        out.bound(x, 0, n).bound(y, 0, n);

        p.inputs = {hl_wrap(a, {n, n}), hl_wrap(b, {n, n})};
        A.set(p.inputs[0]);
        B.set(p.inputs[1]);
        p.output = hl_wrap(c, {n, n});
        p.pipeline = Pipeline(out);
      },
      err, err_size);
}
