/* space_shaped.c — samples of a tile+cache+read sketch shaped like a BLAS kernel.
 *
 * te's hand SGEMM schedule (bench/sgemm_schedule.c) is a point of the tile+cache+read sketch: a
 * 6 x 64 register tile accumulated in a local block as tall as a row block (MC, up to 342 rows)
 * and one or a few register tiles wide, k in blocks of ~128, B packed whole into panels and A
 * into row groups (cache-read knobs 4 and 3), vectorized, the rows unrolled, the row blocks
 * parallel. Drawn uniformly, the knobs almost never land there: a register tile is one
 * innermost factor among up to 64 per axis, a row block one middle factor among hundreds, and
 * the two packed layouts two of five choices per input, so a 64-trial search measured 3 such
 * points of 68 (docs/tuning-space.md). A shaped sample fixes what makes that structure (a
 * register tile from the shapes that fill the 32 zmm registers, a row block, a k block, packed
 * copies) and leaves the rest to the ordinary draw; the search takes a share of its random
 * candidates from here (search.c), so the first rounds measure such points and the cost model
 * and the elite's mutations take over from there. A short reduction (k <= 128: a batch matmul's
 * 64) is read in place in half the draws, k whole and the local block a whole row: its panels
 * are in L1 as they are, and a copy costs more than it saves.
 */
#include <math.h>

#include "at.h"

/* Register tiles rows x vectors as the hand kernels use them. With 32 vector registers
   (AVX-512): 24 or 16 accumulators (6 x 64 f32 lanes is the hand SGEMM's), the rest for the
   broadcast and the loaded vectors. With 16 (AVX2): 8 to 12 accumulators (6 x 16, the classic
   AVX2 kernel), at most 16 registers with the loads and the broadcast; the 32-register shapes
   there spill (6 x 64 is 48 ymm accumulators) and were a third of a search's samples. */
static const int64_t tiles32[][2] = {{6, 4}, {8, 3}, {12, 2}, {4, 4}, {8, 2}, {6, 3}};
static const int64_t tiles16[][2] = {{6, 2}, {4, 3}, {5, 2}, {4, 2}, {2, 4}, {8, 1}, {12, 1}};

/* Shaped samples take the sketch tile+cache+read and its variants with the vector along another
   axis; a dot sketch's register tile has rules of its own (space.c). Where the task has a
   tile+cache+window sketch (a stencil: no register tile of a GEMM) they take it alone, shaped
   like a stencil kernel (space_window.c). */
bool at_sketch_shapeable(const at_task *t, int sketch) {
  const at_sketch *sk = &t->sketch[sketch];
  if (sk->window)
    return true;
  for (int k = 0; k < t->nsketch; k++)
    if (t->sketch[k].window)
      return false;
  return sk->kind == AT_SK_TILE_CACHE_READ && !sk->dot.insn && t->tiled >= 0;
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

int at_rows_axis(const at_stage_info *s, int vec) {
  int best = -1;
  for (int a = 0; a < s->nspace; a++)
    if (a != vec && (best < 0 || s->space_ext[a] > s->space_ext[best]))
      best = a;
  return best;
}

int64_t at_log_uniform(at_rng *r, int64_t lo, int64_t hi) {
  if (hi <= lo)
    return lo;
  double x = exp(log((double)lo) + at_rng_unit(r) * (log((double)hi) - log((double)lo)));
  int64_t v = (int64_t)(x + 0.5);
  return v < lo ? lo : v > hi ? hi : v;
}

/* A k block: a divisor of the extent in [32, 512] (the hand's 128 keeps a 32 KB panel of B in
   L1), the largest divisor up to 512 when none is that large. */
static int64_t k_block(at_rng *r, int64_t ext) {
  int64_t d[512];
  int n = 0;
  for (int64_t x = 32; x <= 512 && x <= ext && n < 512; x++)
    if (ext % x == 0)
      d[n++] = x;
  if (n)
    return d[at_rng_int(r, n)];
  for (int64_t x = min64(ext, 512); x >= 1; x--)
    if (ext % x == 0)
      return x;
  return 1;
}

/* The four levels S0 S1 S2 S3 of a space tile (S0 the tiles S1..S3 make, rounded up). */
static void set_space(int64_t *v, int64_t ext, int64_t s1, int64_t s2, int64_t s3) {
  v[3] = s3;
  v[2] = s2;
  v[1] = s1;
  v[0] = ceil_div(ext, s1 * s2 * s3);
}

/* A short reduction: the widest reduce axis at most AT_SHORT_REDUCE (a batch matmul's k = 64).
   Its operands' panels are a few KB, in L1 as they are, so a copy costs more than it saves:
   packed copies ran at 60-70 GFLOP/s on 12 x 128x64x128 where reading in place ran at 75-80
   (one thread, CPU time, docs/tuning-space.md). */
enum { AT_SHORT_REDUCE = 128 };

static bool short_reduce(const at_stage_info *s) {
  int64_t widest = 0;
  for (int a = 0; a < s->nreduce; a++)
    widest = s->reduce_ext[a] > widest ? s->reduce_ext[a] : widest;
  return widest > 0 && widest <= AT_SHORT_REDUCE;
}

/* A second axis for the register tile's rows: a space axis but the vector's and the rows', of
   two points or more, that some input does not index — a convolution's output row y beside its
   channels o (the kernel does not depend on y: one broadcast of it serves the rows of both),
   as MetaSchedule's conv2d winners tile co x h x w. An axis every input indexes (a batch
   matmul's b) shares nothing in registers, so it stays one point. -1 when there is none. */
int at_rows2_axis(const at_stage_info *s, int vec, int rows) {
  for (int a = 0; a < s->nspace; a++) {
    if (a == vec || a == rows || s->space_ext[a] < 2)
      continue;
    for (int i = 0; i < s->ninputs && i < AT_MAX_CACHE_READS; i++)
      if (!(s->input_axes[i] >> a & 1u))
        return a;
  }
  return -1;
}

static void shape_knob(const at_task *t, const at_knob *k, int vec, int rows, const int64_t tile[2],
                       int rows2, int64_t mr2, int lanes1, bool in_place, at_rng *r, int64_t *v) {
  const at_stage_info *s = &t->stage[t->tiled];
  int64_t ext = k->extent > 0 ? k->extent : 1;
  switch (k->role) {
  case AT_ROLE_SPACE_TILE:
    if (k->axis == vec) { /* whole vectors, the local block one to a few register tiles wide */
      int64_t lanes = ext >= lanes1 ? min64(tile[1] * lanes1, ext / lanes1 * lanes1) : ext;
      int64_t wide = (int64_t[]){1, 1, 2, 4, 8}[at_rng_int(r, 5)];
      if (in_place) /* a short reduction: whole rows of up to 8 tiles a task (B's panel in L1) */
        wide = 8;
      set_space(v, ext, 1, min64(wide, ceil_div(ext, lanes)), lanes);
    } else if (k->axis == rows) { /* the rows, in a row block of up to 342 (a multiple of them) */
      int64_t mr = min64(tile[0], ext);
      int64_t groups = ceil_div(at_log_uniform(r, 8 * mr, 342), mr);
      set_space(v, ext, 1, min64(groups, ceil_div(ext, mr)), mr);
    } else if (k->axis == rows2) {  /* the second rows axis: mr2 rows of the register tile */
      set_space(v, ext, 1, 1, mr2); /* cut to the axis where it was drawn */
    } else { /* batches, a convolution's other axis: whole tiles of one point, parallel */
      set_space(v, ext, 1, 1, 1);
    }
    break;
  case AT_ROLE_REDUCE_TILE: { /* the widest reduce axis blocked, the others whole inside */
    int widest = 0;
    for (int a = 1; a < s->nreduce; a++)
      widest = s->reduce_ext[a] > s->reduce_ext[widest] ? a : widest;
    v[1] = k->axis == widest && !in_place ? k_block(r, ext) : ext;
    v[0] = ext / v[1];
    break;
  }
  case AT_ROLE_PARALLEL_DEPTH:
    v[0] = 0; /* the row blocks (S0) parallel */
    break;
  case AT_ROLE_UNROLL:
    v[0] = 1; /* the register tile's rows unrolled */
    break;
  case AT_ROLE_VECTORIZE:
    v[0] = k->nchoices > 1;
    break;
  case AT_ROLE_CACHE_READ: /* packed: a block at the reduce loop or whole, in the tile's layout,
                              or (an input the vector does not index) once per row block; or
                              (a short reduction, half the draws) read in place */
    if (in_place)
      v[0] = 0;
    else if (k->nchoices > 4) {
      bool along = k->axis < AT_MAX_CACHE_READS && (s->input_axes[k->axis] >> vec & 1u);
      bool window = along && (s->input_windows[k->axis] >> vec & 1u);
      v[0] = (window ? 1 : 3) + at_rng_int(r, along || k->nchoices < 6 ? 2 : 3);
    }
    break;
  default: /* the kept stages and the simple stages: as drawn */
    break;
  }
}

bool at_cand_sample_shaped(const at_task *t, const at_target_caps *caps, int sketch, at_rng *r,
                           at_cand *c) {
  if (sketch < 0 || sketch >= t->nsketch || !at_sketch_shapeable(t, sketch))
    return false;
  if (t->sketch[sketch].window)
    return at_cand_sample_window(t, caps, sketch, r, c);
  const at_sketch *sk = &t->sketch[sketch];
  const at_stage_info *s = &t->stage[t->tiled];
  at_cand_sample(t, sketch, r, c);
  int vec = sk->vec_axis >= 0 ? sk->vec_axis : s->nspace - 1;
  int rows = at_rows_axis(s, vec);
  int lanes1 = caps ? caps->lanes : 16;
  const int64_t *tile = caps && caps->regs < 32
                            ? tiles16[at_rng_int(r, (int)(sizeof tiles16 / sizeof tiles16[0]))]
                            : tiles32[at_rng_int(r, (int)(sizeof tiles32 / sizeof tiles32[0]))];
  bool in_place = short_reduce(s) && at_rng_int(r, 2); /* and the reduction whole */
  /* in half the draws where there is a second rows axis, the tile's rows split over both: 2 or
     4 on the second, the rest (at least one) on the first, never more rows than the tile's */
  int rows2 = at_rows2_axis(s, vec, rows);
  if (rows2 >= 0 && at_rng_int(r, 2)) /* drawn only where there is one: a matmul's draws stay */
    rows2 = -1;
  int64_t mr2 = 1, shaped[2] = {tile[0], tile[1]};
  if (rows2 >= 0) {
    mr2 = min64((int64_t[]){2, 4}[at_rng_int(r, 2)], min64(tile[0], s->space_ext[rows2]));
    shaped[0] = tile[0] / mr2 > 1 ? tile[0] / mr2 : 1;
  }
  for (int k = 0; k < sk->nknob; k++)
    if (sk->knob[k].stage == t->tiled || sk->knob[k].role == AT_ROLE_VECTORIZE)
      shape_knob(t, &sk->knob[k], vec, rows, shaped, rows2, mr2, lanes1, in_place, r,
                 c->v + sk->knob[k].offset);
  return at_cand_valid(t, c);
}
