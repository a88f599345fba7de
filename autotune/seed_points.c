/* seed_points.c — the points of tile+cache+read a BLAS engineer would write down for this
 * target, measured in the search's first round (search.c).
 *
 * Shaped samples (space_shaped.c) draw register tiles and blocks at random around the hand
 * SGEMM kernel's structure; these are that structure's factors derived once from the target,
 * the way bench/sgemm_schedule.c (sgemm_tiles) derives its own, so the first round measures the
 * hand kernel rather than hoping a draw lands on it. Each number, and why:
 *
 *   - lanes: te_target_vector_bits / 32 (f32): 16 on AVX-512, 8 on AVX2; 16 when unknown.
 *   - registers: 32 vector registers with AVX-512 (zmm0-31), 16 below it (ymm0-15).
 *   - register tiles MR x NR (NR = NV vectors of lanes): the accumulators MR x NV, plus NV
 *     registers for the loaded vectors of B and one for A's broadcast, fit the registers:
 *     MR = (regs - 1 - NV) / NV. On AVX-512, NV = 4 gives 6 x 64 (24 accumulators, 4 loads, 1
 *     broadcast: the hand kernel's tile), NV = 2 14 x 32 (28 accumulators) and, two rows
 *     fewer, 12 x 32, which divides more row counts. On AVX2 the order is NV = 2 first, the
 *     classic 6 x 16 (12 accumulators), then NV = 4's 2 x 32 and 4 x 16. Rows stop at the
 *     space's 16 (space.c); a tile wider or taller than the axis is cut to it (whole vectors
 *     where the axis has some).
 *   - KC, the reduce block: a KC x NR panel of packed B is what one register tile streams, and
 *     it must stay in L1 while the row groups of a block go by: KC x NR x 4 bytes in two thirds
 *     of L1 (the rest for A's group and C's tile): 128 for 6 x 64 on a 48 KB L1 (a 32 KB panel,
 *     the hand's KC). Reduce tiles divide their axis exactly (space.c), so KC is the largest
 *     divisor of the extent up to that, or the whole axis when that divisor is under a quarter
 *     of it and the axis is short (a prime extent would otherwise block by 1).
 *   - MC, the row block (the local block's rows, S2 x S3 of the rows axis): the rows of A one
 *     C tile of MC x NR reads, MC x K x 4 bytes, stay in L2 for the next tile to the right when
 *     they fill at most 55% of it (the hand's rule; the rest holds B's panels and C's block);
 *     and a block's A slab MC x KC x 4 bytes in a twelfth of L2 (342 rows of 128 on 2 MB, the
 *     hand's largest block: 175 KB). Blocks are as equal as multiples of MR allow, in an even
 *     count, so two threads get the same work (sgemm_tiles' rule). On a 2 MB L2: 1024 rows in
 *     blocks of 258 (3 x 258 + 250), the hand's.
 *   - wide C tiles: when even 40 register tiles of rows do not keep A in L2 (MC x K too large:
 *     n = 2048), the hand makes C's tile 342 x 512 with k blocks outside its 64-column panels;
 *     here that is the local block 342 x 512 (S2 = 8 of the vector axis), seeded besides the
 *     narrow tile whose row block the L2 rule shrinks (114 rows at 2048).
 *   - copies: the hand's: B packed whole at root in NR-column panels (cache-read knob 4,
 *     once a call), A in MR-row groups once per row block (knob 5: the block MC x K computed at
 *     the parallel row-block loop, the column tiles inside it, so the packed rows are hot in
 *     the L2 of the thread that reads them; packing A whole at root instead, as these seeds
 *     did before, measured 74 against 96 GFLOP/s for the best 6 x 16 point on Zen 3); which
 *     input is which: whether the vector axis indexes it (at_stage_info.input_axes). For the
 *     first tile also both as blocks at the reduce loop (knob 3).
 *   - sketches: every tile above in tile+cache+read; in a tile+cache+read:A (the vector along
 *     space axis A: a convolution's output channels) only the first, packed whole, so that
 *     the first round of 16 keeps room for random and shaped samples.
 *   - none where the task has a dot sketch (u8 x i8, bf16): its instruction's register tile
 *     beats any f32-shaped one by 2-4x (docs/tuning-space.md), so its trials are not spent
 *     on these.
 *   - the other knobs: vectorized, the register tile's rows unrolled, the outer tiles (S0)
 *     parallel, other space axes (a batch) one point per outer tile, other reduce axes whole
 *     inside the block; knobs of other stages as a fixed-seed draw makes them.
 * L1 and L2 come from sysconf (_SC_LEVEL1_DCACHE_SIZE, _SC_LEVEL2_CACHE_SIZE) where the C
 * library knows them, else 32 KB and 1 MB (TE_TUNE_L1 / TE_TUNE_L2 override both, in bytes).
 */
#define _GNU_SOURCE /* _SC_LEVEL1_DCACHE_SIZE */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "at.h"

enum { MAX_ROWS = 16, MAX_LANES = 64, MAX_BLOCK_ROWS = 1024 };

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

static int64_t env_bytes(const char *name, long sc, int64_t fallback) {
  const char *e = getenv(name);
  if (e && *e && atoll(e) > 0)
    return atoll(e);
  long v = sc >= 0 ? sysconf((int)sc) : -1;
  return v > 0 ? v : fallback;
}

void at_target_caps_get(const te_target *tgt, at_target_caps *c) {
  int bits = tgt ? te_target_vector_bits(tgt) : 0;
  c->lanes = bits >= 128 ? bits / 32 : 16;
  c->regs = c->lanes >= 16 ? 32 : 16;
#ifdef _SC_LEVEL1_DCACHE_SIZE
  c->l1 = env_bytes("TE_TUNE_L1", _SC_LEVEL1_DCACHE_SIZE, 32 << 10);
#else
  c->l1 = env_bytes("TE_TUNE_L1", -1, 32 << 10);
#endif
#ifdef _SC_LEVEL2_CACHE_SIZE
  c->l2 = env_bytes("TE_TUNE_L2", _SC_LEVEL2_CACHE_SIZE, 1 << 20);
#else
  c->l2 = env_bytes("TE_TUNE_L2", -1, 1 << 20);
#endif
}

/* Row blocks of at most max_mc rows, multiples of mr, in an even count as equal as they can
   be: the fewest whose last block is within 3% of the rows of the others, else the most even
   (bench/sgemm_schedule.c's sgemm_block_rows, so a 1024-row axis gets the hand's 258). */
static int64_t block_rows(int64_t n, int64_t mr, int64_t max_mc) {
  max_mc = max64(max_mc, mr);
  if (n <= max_mc)
    return mr * ceil_div(n, mr);
  int64_t best = 0, best_diff = n + 1;
  for (int64_t blocks = 2; blocks <= 64; blocks += 2) {
    int64_t mc = mr * ceil_div(ceil_div(n, blocks), mr), last = n - (blocks - 1) * mc;
    if (mc > max_mc || last <= 0)
      continue;
    if ((mc - last) * 100 <= 3 * n)
      return mc;
    if (mc - last < best_diff)
      best = mc, best_diff = mc - last;
  }
  return best ? best : mr * (max_mc / mr);
}

/* The reduce block: the largest divisor of ext up to want; the whole axis when that is under
   a quarter of want and the axis is at most eight times it. */
static int64_t reduce_block(int64_t ext, int64_t want) {
  want = max64(want, 1);
  int64_t d = 1;
  for (int64_t x = min64(ext, want); x >= 1; x--)
    if (ext % x == 0) {
      d = x;
      break;
    }
  return d * 4 < min64(want, ext) && ext <= 8 * want ? ext : d;
}

/* One derived point's shape: the register tile, the blocks and the copies' knob. */
typedef struct seed_shape {
  int64_t mr, nr, nv_wide; /* nv_wide: register tiles of the vector axis in the local block */
  int64_t mr2;             /* rows of the second rows axis (at_rows2_axis), 1 without one */
  int64_t mc, kc;
  int copy;      /* cache-read knob of the inputs the vector axis indexes (B): 4 whole at root,
                   3 blocks at the reduce loop (packed) */
  int copy_rows; /* and of the others (A): 5 a block per row block, 3 as above */
} seed_shape;

static void set_space(int64_t *v, int64_t ext, int64_t s2, int64_t s3) {
  v[3] = s3;
  v[2] = s2;
  v[1] = 1;
  v[0] = ceil_div(ext, s2 * s3);
}

/* Whether every space axis of two points or more but the vector's indexes input i: a copy
   once per row block (knob 5) is then made once per call in all; a kernel the output rows of a
   convolution do not index would be packed again for each row of them (63 against 131 GFLOP/s
   for the 4 x 2 x 8 point of conv2d 64 x 56^2 on Zen 3), so it is packed whole at root. */
static bool indexed_by_all(const at_stage_info *s, int i, int vec) {
  if (i >= AT_MAX_CACHE_READS)
    return true;
  for (int a = 0; a < s->nspace; a++)
    if (a != vec && s->space_ext[a] > 1 && !(s->input_axes[i] >> a & 1u))
      return false;
  return true;
}

static void seed_knob(const at_task *t, const at_knob *k, int vec, int rows, int rows2,
                      const seed_shape *p, int64_t *v) {
  const at_stage_info *s = &t->stage[t->tiled];
  int64_t ext = max64(k->extent, 1);
  switch (k->role) {
  case AT_ROLE_SPACE_TILE:
    if (k->axis == vec)
      set_space(v, ext, min64(p->nv_wide, ceil_div(ext, p->nr)), p->nr);
    else if (k->axis == rows)
      set_space(v, ext, ceil_div(p->mc, p->mr), p->mr);
    else if (k->axis == rows2)
      set_space(v, ext, 1, min64(p->mr2, ext));
    else /* a batch: one point per outer tile, parallel with the others */
      set_space(v, ext, 1, 1);
    break;
  case AT_ROLE_REDUCE_TILE: { /* the widest reduce axis blocked, the others whole inside */
    int widest = 0;
    for (int a = 1; a < s->nreduce; a++)
      widest = s->reduce_ext[a] > s->reduce_ext[widest] ? a : widest;
    v[1] = k->axis == widest ? p->kc : ext;
    v[0] = ext / v[1];
    break;
  }
  case AT_ROLE_PARALLEL_DEPTH:
    v[0] = 0;
    break;
  case AT_ROLE_UNROLL:
    v[0] = 1;
    break;
  case AT_ROLE_VECTORIZE:
    v[0] = k->nchoices > 1;
    break;
  case AT_ROLE_CACHE_READ: {
    bool along = k->axis < AT_MAX_CACHE_READS && (s->input_axes[k->axis] >> vec & 1u);
    bool window = along && (s->input_windows[k->axis] >> vec & 1u);
    int want = window ? 2 : along ? p->copy : p->copy_rows;
    if (want == 5 && !indexed_by_all(s, k->axis, vec))
      want = 4;
    v[0] = k->nchoices > want ? want : k->nchoices - 1;
    break;
  }
  case AT_ROLE_KEEP_STAGE:
    v[0] = 0;
    break;
  default:
    break;
  }
}

/* The point of sketch sk with shape p in c; false when it is not valid. */
static bool make_point(const at_task *t, int sketch, const seed_shape *p, at_cand *c) {
  const at_sketch *sk = &t->sketch[sketch];
  const at_stage_info *s = &t->stage[t->tiled];
  at_rng r;
  at_rng_seed(&r, 0x5eed); /* the other stages' knobs: the same draw every time */
  at_cand_sample(t, sketch, &r, c);
  int vec = sk->vec_axis >= 0 ? sk->vec_axis : s->nspace - 1;
  int rows = at_rows_axis(s, vec), rows2 = p->mr2 > 1 ? at_rows2_axis(s, vec, rows) : -1;
  for (int k = 0; k < sk->nknob; k++)
    if (sk->knob[k].stage == t->tiled || sk->knob[k].role == AT_ROLE_VECTORIZE)
      seed_knob(t, &sk->knob[k], vec, rows, rows2, p, c->v + sk->knob[k].offset);
  return at_cand_valid(t, c);
}

static bool same_cand(const at_cand *a, const at_cand *b) {
  return a->sketch == b->sketch && a->nvals == b->nvals &&
         !memcmp(a->v, b->v, sizeof(int64_t) * (size_t)a->nvals);
}

static int add_point(const at_task *t, int sketch, const seed_shape *p, at_cand *out, int n,
                     int max) {
  if (n >= max || !make_point(t, sketch, p, &out[n]))
    return n;
  for (int i = 0; i < n; i++)
    if (same_cand(&out[i], &out[n]))
      return n;
  return n + 1;
}

/* The register tile of nv vectors cut to the axes: rows to the rows axis (and MAX_ROWS),
   lanes to whole vectors of the vector axis (its extent when it is narrower than one). */
static void cut_tile(const at_target_caps *caps, int64_t rows_ext, int64_t vec_ext, int nv,
                     int64_t mr, seed_shape *p) {
  p->mr = max64(1, min64(min64(mr, MAX_ROWS), rows_ext));
  int64_t lanes = min64((int64_t)caps->lanes * nv, MAX_LANES);
  p->nr = vec_ext >= caps->lanes ? min64(lanes, vec_ext / caps->lanes * caps->lanes) : vec_ext;
  p->mr2 = 1;
}

/* The blocks of a cut tile: KC from L1, MC from L2 (narrow: the L2 rule; wide: the slab rule
   only, the local block nv_wide register tiles wide). */
static void blocks(const at_target_caps *caps, int64_t rows_ext, int64_t red_ext, bool wide,
                   seed_shape *p) {
  p->kc = reduce_block(red_ext, caps->l1 * 2 / 3 / (p->nr * 4));
  int64_t slab = ceil_div(caps->l2 / 12 / (p->kc * 4), p->mr) * p->mr;
  int64_t fits = (int64_t)(0.55 * (double)caps->l2) / (4 * max64(red_ext, 1));
  int64_t max_mc = min64(MAX_BLOCK_ROWS, wide ? slab : min64(slab, fits));
  p->mc = min64(block_rows(rows_ext, p->mr, max_mc), p->mr * ceil_div(rows_ext, p->mr));
  p->nv_wide = 1;
}

/* Register tiles over two rows axes, rows x rows2 x vectors: 8 or 12 accumulators of 16 ymm
   registers, 16 or 24 of 32 zmm (MetaSchedule's conv2d winner on Zen 3: 4 x 2 x 8 lanes; the
   hand's AVX-512 conv2d 8 x 2 x 16). */
static const int64_t two_axis_tiles16[3][3] = {{4, 2, 1}, {6, 2, 1}, {3, 2, 2}};
static const int64_t two_axis_tiles32[3][3] = {{8, 2, 1}, {4, 2, 2}, {6, 2, 2}};

int at_seed_points(const at_task *t, const at_target_caps *caps, at_cand *out, int max) {
  int n = 0;
  if (t->tiled < 0)
    return 0;
  for (int sk = 0; sk < t->nsketch; sk++)
    if (t->sketch[sk].dot.insn) /* int8 / bf16: the dot sketch's kernels are 2-4x these */
      return 0;
  const at_stage_info *s = &t->stage[t->tiled];
  int64_t red_ext = 1;
  for (int a = 0; a < s->nreduce; a++)
    red_ext = max64(red_ext, s->reduce_ext[a]);
  for (int sk = 0; sk < t->nsketch; sk++) {
    if (!at_sketch_shapeable(t, sk))
      continue;
    int vec = t->sketch[sk].vec_axis >= 0 ? t->sketch[sk].vec_axis : s->nspace - 1;
    int rows = at_rows_axis(s, vec);
    int64_t vec_ext = s->space_ext[vec], rows_ext = rows >= 0 ? s->space_ext[rows] : 1;
    /* the best tile first (a vector along another axis takes only it): 6 x 64 with 32
       registers, 6 x 16 with 16 (2 x 32 there keeps only 8 accumulators, FMA latency times
       throughput, so its chains stall) */
    const int *nvs = caps->regs >= 32 ? (const int[]){4, 2, 2} : (const int[]){2, 4, 2};
    /* a vector along another axis (tile+cache+read:A): its first tile only, so a matmul's
       first round is not all derived points */
    for (int i = 0; i < (t->sketch[sk].vec_axis >= 0 ? 1 : 3); i++) {
      seed_shape p;
      int64_t mr = (caps->regs - 1 - nvs[i]) / nvs[i] - (i == 2 ? 2 : 0);
      cut_tile(caps, rows_ext, vec_ext, nvs[i], mr, &p);
      blocks(caps, rows_ext, red_ext, false, &p);
      p.copy = 4, p.copy_rows = 5; /* the hand's: B whole at root, A once per row block */
      n = add_point(t, sk, &p, out, n, max);
      if (i > 0 || t->sketch[sk].vec_axis >= 0)
        continue;
      p.copy = p.copy_rows = 3; /* the copies as blocks at the reduce loop */
      n = add_point(t, sk, &p, out, n, max);
      /* A too large for L2 at the narrow tile's best block: C's tile wide (512 columns) */
      int64_t fits = (int64_t)(0.55 * (double)caps->l2) / (4 * red_ext);
      if (fits < 40 * p.mr && vec_ext > 512 && rows_ext > 40 * p.mr) {
        blocks(caps, rows_ext, red_ext, true, &p);
        p.nv_wide = 512 / p.nr;
        p.copy = 4, p.copy_rows = 5;
        n = add_point(t, sk, &p, out, n, max);
      }
    }
    /* a second rows axis (a convolution's y beside its channels): the tile's rows over both */
    int rows2 = t->sketch[sk].vec_axis < 0 ? at_rows2_axis(s, vec, rows) : -1;
    for (int i = 0; rows2 >= 0 && i < 3; i++) {
      const int64_t *two = caps->regs >= 32 ? two_axis_tiles32[i] : two_axis_tiles16[i];
      seed_shape p;
      cut_tile(caps, rows_ext, vec_ext, (int)two[2], two[0], &p);
      blocks(caps, rows_ext, red_ext, false, &p);
      p.mr2 = two[1]; /* cut to the axis by seed_knob */
      p.copy = 4, p.copy_rows = 5;
      n = add_point(t, sk, &p, out, n, max);
    }
  }
  return n;
}
