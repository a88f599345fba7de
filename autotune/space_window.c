/* space_window.c — samples of sketch tile+cache+window shaped like a hand stencil kernel.
 *
 * A depthwise convolution runs fast (docs/tuning-space.md, "Window reductions") as a register
 * tile of a few output rows by one to four vectors (16 lanes on AVX-512) along the last axis, the
 * whole 3 x 3 window unrolled around it (each input vector loaded once for the rows that share it),
 * one channel and one block of rows a parallel task, the padded input of that block computed in the
 * task. Drawn uniformly, the knobs rarely land there (a 64-trial search measured 3
 * tile+cache+window points of 64, none of that shape). A shaped sample fixes that structure —
 * the tile from the table below (whole vectors, dividing the axis where some do), the rows'
 * block log-uniform, the window whole and unrolled, the padding in the task (three draws in
 * four, else at root) — and draws the other knobs as at_cand_sample does.
 */

#include "at.h"

/* rows x vectors of the target's lanes: 4 to 8 accumulators (a 3 x 3 window's FMAs on 4 of them
   already cover the FMA latency; more rows share more input rows). In vectors, not lanes: 16-lane
   ones on AVX-512, 8-lane ones on AVX2, where 16 lanes are two registers and an 8 x 16 tile's
   16 accumulators leave none for the loads (MetaSchedule's depthwise winner on Zen 3 is 7 x 8) */
static const int64_t tiles[][2] = {{4, 1}, {2, 2}, {4, 2}, {6, 1}, {8, 1}, {3, 2}, {2, 4}, {7, 1}};

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* The vector's lanes: `vectors` vectors of `w` lanes, fewer while the axis has no multiple of
   that width but has one of fewer (112 takes 16 and 112, not 32, with w 16); the extent when
   under w. */
static int64_t lanes_for(int64_t ext, int64_t vectors, int64_t w) {
  if (ext < w)
    return ext;
  for (int64_t v = vectors; v > 1; v--)
    if (ext % (w * v) == 0 && v <= 4)
      return w * v;
  return ext % w == 0 || vectors == 1 ? w : min64(w * vectors, ext / w * w);
}

/* The rows: the widest space axis but the last. */
static int rows_axis(const at_stage_info *s) {
  int best = -1;
  for (int a = 0; a + 1 < s->nspace; a++)
    if (best < 0 || s->space_ext[a] > s->space_ext[best])
      best = a;
  return best;
}

static void set_space(int64_t *v, int64_t ext, int64_t s1, int64_t s3) {
  v[3] = s3;
  v[2] = 1;
  v[1] = s1;
  v[0] = ceil_div(ext, s1 * s3);
}

static void shape(const at_task *t, const at_knob *k, const int64_t tile[2], int64_t w,
                  bool whole_row, at_rng *r, int64_t *v) {
  const at_stage_info *s = &t->stage[t->tiled];
  int64_t ext = k->extent > 0 ? k->extent : 1;
  int last = s->nspace - 1, rows = rows_axis(s);
  switch (k->role) {
  case AT_ROLE_SPACE_TILE:
    if (k->axis == last) { /* one register tile wide, or the whole row in the task */
      int64_t lanes = lanes_for(ext, tile[1], w);
      set_space(v, ext, whole_row ? ceil_div(ext, lanes) : 1, lanes);
    } else if (k->axis == rows) { /* a block of register tiles of rows: the task's rows */
      int64_t mr = min64(tile[0], ext);
      set_space(v, ext, at_log_uniform(r, 1, ceil_div(ext, 4 * mr)), mr);
    } else { /* channels, batches: a point a task */
      set_space(v, ext, 1, 1);
    }
    break;
  case AT_ROLE_REDUCE_TILE: /* the window whole in the register tile's step */
    v[0] = 1;
    v[1] = ext;
    break;
  case AT_ROLE_PARALLEL_DEPTH: /* the tasks are S0: channels x row blocks */
    v[0] = 0;
    break;
  case AT_ROLE_UNROLL:
  case AT_ROLE_UNROLL_WINDOW:
    v[0] = 1;
    break;
  case AT_ROLE_VECTORIZE:
    v[0] = k->nchoices > 1;
    break;
  case AT_ROLE_KEEP_STAGE: /* in the task, or at root */
    v[0] = at_rng_int(r, 4) ? 2 : 1;
    break;
  default:
    break;
  }
}

bool at_cand_sample_window(const at_task *t, const at_target_caps *caps, int sketch, at_rng *r,
                           at_cand *c) {
  if (sketch < 0 || sketch >= t->nsketch || !t->sketch[sketch].window)
    return false;
  const at_sketch *sk = &t->sketch[sketch];
  at_cand_sample(t, sketch, r, c);
  const int64_t *tile = tiles[at_rng_int(r, (int)(sizeof tiles / sizeof tiles[0]))];
  bool whole_row = at_rng_int(r, 2);
  int64_t w = caps && caps->lanes > 0 ? caps->lanes : 16;
  for (int k = 0; k < sk->nknob; k++) {
    const at_knob *kn = &sk->knob[k];
    if (kn->stage == t->tiled || kn->role == AT_ROLE_VECTORIZE || kn->role == AT_ROLE_KEEP_STAGE)
      shape(t, kn, tile, w, whole_row, r, c->v + kn->offset);
  }
  return at_cand_valid(t, c);
}
