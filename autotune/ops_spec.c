/* ops_spec.c — the operators of ops.h that te-tune takes on its command line, with their
 * parameters: "matmul M=1024 N=1024 K=1024" plus a dtype.
 *
 * One table says each operator's parameters (in order, with defaults; -1: required); from it come
 * parsing, the canonical description stored in the log ("matmul M=1024 N=1024 K=1024
 * dtype=f32"), building the computation in a context, and the same computation as C statements
 * for `te-tune show --as-c`. Tensors are named as the operator's documentation names them.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "at.h"

typedef struct op_info {
  const char *name, *help;
  const char *params[12];
  int64_t defaults[12];
} op_info;

static const op_info ops[] = {
    {"matmul", "C[M,N] = A[M,K] x B[K,N]", {"M", "N", "K"}, {-1, -1, -1}},
    {"matmul_relu",
     "relu(A[M,K] x B[K,N]) (an element-wise consumer to fuse)",
     {"M", "N", "K"},
     {-1, -1, -1}},
    {"batch_matmul", "C[B,M,N] = A[B,M,K] x B[B,K,N]", {"B", "M", "N", "K"}, {-1, -1, -1, -1}},
    {"conv2d",
     "NCHW data [N,C,H,W], OIHW kernel [O,C,KH,KW]",
     {"N", "C", "H", "W", "O", "KH", "KW", "stride", "pad", "dilation"},
     {1, -1, -1, -1, -1, 3, 3, 1, 0, 1}},
    {"conv2d_nhwc",
     "NHWC data [N,H,W,C], HWIO kernel [KH,KW,C,O]",
     {"N", "C", "H", "W", "O", "KH", "KW", "stride", "pad", "dilation"},
     {1, -1, -1, -1, -1, 3, 3, 1, 0, 1}},
    {"depthwise_conv2d",
     "NCHW data [N,C,H,W], kernel [C,1,KH,KW]",
     {"N", "C", "H", "W", "KH", "KW", "stride", "pad"},
     {1, -1, -1, -1, 3, 3, 1, 0}},
    {"softmax", "softmax over the last axis of x [N,D]", {"N", "D"}, {-1, -1}},
    {"layer_norm", "layer normalization of x [N,D] (eps 1e-5)", {"N", "D"}, {-1, -1}},
    {"max_pool2d",
     "NCHW max pooling, window K, stride S, padding P",
     {"N", "C", "H", "W", "K", "S", "P"},
     {1, -1, -1, -1, 2, 2, 0}},
};
enum { NOPS = sizeof ops / sizeof ops[0] };

static const op_info *find_op(const char *name) {
  for (int i = 0; i < NOPS; i++)
    if (strcmp(ops[i].name, name) == 0)
      return &ops[i];
  return NULL;
}

static int nparams(const op_info *op) {
  int n = 0;
  while (n < 12 && op->params[n])
    n++;
  return n;
}

static bool parse_dtype(const char *s, te_dtype *out) {
  static const struct {
    const char *name;
    te_dtype t;
  } table[] = {{"f32", TE_F32}, {"f64", TE_F64}, {"i8", TE_I8},   {"i16", TE_I16},  {"i32", TE_I32},
               {"i64", TE_I64}, {"u8", TE_U8},   {"f16", TE_F16}, {"bf16", TE_BF16}};
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (strcmp(s, table[i].name) == 0)
      return *out = table[i].t, true;
  return false;
}

bool at_op_spec_parse(int argc, char *const argv[], const char *dtype, at_op_spec *sp, char *err,
                      size_t errsize) {
  memset(sp, 0, sizeof *sp);
  const op_info *op = argc > 0 ? find_op(argv[0]) : NULL;
  if (!op) {
    snprintf(err, errsize, "unknown operator '%s' (see te-tune tune --help)", argc ? argv[0] : "");
    return false;
  }
  snprintf(sp->op, sizeof sp->op, "%s", op->name);
  sp->nparams = nparams(op);
  for (int i = 0; i < sp->nparams; i++) {
    snprintf(sp->pname[i], sizeof sp->pname[i], "%s", op->params[i]);
    sp->pval[i] = op->defaults[i];
  }
  for (int a = 1; a < argc; a++) {
    const char *eq = strchr(argv[a], '=');
    int k = -1;
    for (int i = 0; eq && i < sp->nparams; i++)
      if ((size_t)(eq - argv[a]) == strlen(op->params[i]) &&
          strncmp(argv[a], op->params[i], (size_t)(eq - argv[a])) == 0)
        k = i;
    char *end = NULL;
    long long v = eq ? strtoll(eq + 1, &end, 10) : 0;
    if (k < 0 || !end || *end || end == eq + 1 || v < 0 ||
        (v == 0 && strcmp(op->params[k], "pad") && strcmp(op->params[k], "P"))) {
      snprintf(err, errsize,
               "%s: bad parameter '%s' (expected NAME=VALUE with NAME one of the "
               "operator's parameters and VALUE a positive integer)",
               op->name, argv[a]);
      return false;
    }
    sp->pval[k] = v;
  }
  for (int i = 0; i < sp->nparams; i++)
    if (sp->pval[i] < 0) {
      snprintf(err, errsize, "%s: parameter %s is required", op->name, op->params[i]);
      return false;
    }
  if (!parse_dtype(dtype ? dtype : "f32", &sp->dtype)) {
    snprintf(err, errsize, "unknown dtype '%s' (f32 f64 f16 bf16 i8 i16 i32 i64 u8)", dtype);
    return false;
  }
  return true;
}

void at_op_spec_desc(const at_op_spec *sp, char *buf, size_t size) {
  size_t n = (size_t)snprintf(buf, size, "%s", sp->op);
  for (int i = 0; i < sp->nparams && n < size; i++)
    n += (size_t)snprintf(buf + n, size - n, " %s=%lld", sp->pname[i], (long long)sp->pval[i]);
  char dt[32];
  if (n < size)
    snprintf(buf + n, size - n, " dtype=%s", te_dtype_str(sp->dtype, dt, sizeof dt));
}

bool at_op_spec_from_desc(const char *desc, at_op_spec *sp, char *err, size_t errsize) {
  char copy[512], *words[32], *save = NULL;
  int n = 0;
  snprintf(copy, sizeof copy, "%s", desc ? desc : "");
  const char *dtype = "f32";
  for (char *w = strtok_r(copy, " ", &save); w && n < 32; w = strtok_r(NULL, " ", &save)) {
    if (strncmp(w, "dtype=", 6) == 0)
      dtype = w + 6;
    else
      words[n++] = w;
  }
  return at_op_spec_parse(n, words, dtype, sp, err, errsize);
}

void at_op_spec_help(FILE *f) {
  for (int i = 0; i < NOPS; i++) {
    fprintf(f, "  %-17s", ops[i].name);
    for (int k = 0; k < nparams(&ops[i]); k++)
      if (ops[i].defaults[k] < 0)
        fprintf(f, " %s=..", ops[i].params[k]);
      else
        fprintf(f, " [%s=%lld]", ops[i].params[k], (long long)ops[i].defaults[k]);
    fprintf(f, "\n  %17s %s\n", "", ops[i].help);
  }
}

/* ---------------------------------------------------------------- building */

/* The inputs of each operator: names and shapes (parameter names; "1" is the constant 1). */
typedef struct input_info {
  const char *name;
  const char *dims[4];
} input_info;

static int inputs_of(const at_op_spec *sp, input_info in[3]) {
  const char *op = sp->op;
  memset(in, 0, sizeof(input_info) * 3);
  if (!strcmp(op, "matmul") || !strcmp(op, "matmul_relu")) {
    in[0] = (input_info){"A", {"M", "K"}};
    in[1] = (input_info){"B", {"K", "N"}};
    return 2;
  }
  if (!strcmp(op, "batch_matmul")) {
    in[0] = (input_info){"A", {"B", "M", "K"}};
    in[1] = (input_info){"B", {"B", "K", "N"}};
    return 2;
  }
  if (!strcmp(op, "conv2d")) {
    in[0] = (input_info){"data", {"N", "C", "H", "W"}};
    in[1] = (input_info){"kernel", {"O", "C", "KH", "KW"}};
    return 2;
  }
  if (!strcmp(op, "conv2d_nhwc")) {
    in[0] = (input_info){"data", {"N", "H", "W", "C"}};
    in[1] = (input_info){"kernel", {"KH", "KW", "C", "O"}};
    return 2;
  }
  if (!strcmp(op, "depthwise_conv2d")) {
    in[0] = (input_info){"data", {"N", "C", "H", "W"}};
    in[1] = (input_info){"kernel", {"C", "1", "KH", "KW"}};
    return 2;
  }
  if (!strcmp(op, "max_pool2d")) {
    in[0] = (input_info){"data", {"N", "C", "H", "W"}};
    return 1;
  }
  in[0] = (input_info){"x", {"N", "D"}};
  if (!strcmp(op, "layer_norm")) {
    in[1] = (input_info){"gamma", {"D"}};
    in[2] = (input_info){"beta", {"D"}};
    return 3;
  }
  return 1;
}

static int64_t param(const at_op_spec *sp, const char *name) {
  if (!strcmp(name, "1"))
    return 1;
  for (int i = 0; i < sp->nparams; i++)
    if (!strcmp(sp->pname[i], name))
      return sp->pval[i];
  return 1;
}

static te_tensor *call_op(const at_op_spec *sp, te_ctx *ctx, te_tensor **in) {
  const char *op = sp->op;
  int64_t s = param(sp, "stride"), p = param(sp, "pad"), d = param(sp, "dilation");
  te_conv2d_params cp = {s, s, p, p, d, d};
  if (!strcmp(op, "matmul"))
    return te_op_matmul(ctx, in[0], in[1], 0, 0, NULL);
  if (!strcmp(op, "matmul_relu"))
    return te_op_relu(ctx, te_op_matmul(ctx, in[0], in[1], 0, 0, NULL), NULL);
  if (!strcmp(op, "batch_matmul"))
    return te_op_batch_matmul(ctx, in[0], in[1], 0, 0, NULL);
  if (!strcmp(op, "conv2d"))
    return te_op_conv2d_nchw(ctx, in[0], in[1], &cp, NULL);
  if (!strcmp(op, "conv2d_nhwc"))
    return te_op_conv2d_nhwc(ctx, in[0], in[1], &cp, NULL);
  if (!strcmp(op, "depthwise_conv2d"))
    return te_op_depthwise_conv2d_nchw(ctx, in[0], in[1], &cp, NULL);
  if (!strcmp(op, "softmax"))
    return te_op_softmax(ctx, in[0], NULL);
  if (!strcmp(op, "layer_norm"))
    return te_op_layer_norm(ctx, in[0], in[1], in[2], 1e-5, NULL);
  te_pool2d_params pp = {param(sp, "K"), param(sp, "K"), param(sp, "S"),
                         param(sp, "S"), param(sp, "P"), param(sp, "P")};
  return te_op_max_pool2d(ctx, in[0], &pp, NULL);
}

/* The same call as C (tensor variables t_<name>). */
static void emit_call(const at_op_spec *sp, ir_str *o) {
  const char *op = sp->op;
  long long s = param(sp, "stride"), p = param(sp, "pad"), d = param(sp, "dilation");
  if (!strcmp(op, "matmul") || !strcmp(op, "batch_matmul"))
    ir_str_printf(o, "  te_tensor *out = te_op_%s(ctx, t_A, t_B, 0, 0, NULL);\n", op);
  else if (!strcmp(op, "matmul_relu"))
    ir_str_puts(o, "  te_tensor *t_matmul = te_op_matmul(ctx, t_A, t_B, 0, 0, NULL);\n"
                   "  te_tensor *out = te_op_relu(ctx, t_matmul, NULL);\n");
  else if (!strncmp(op, "conv2d", 6) || !strcmp(op, "depthwise_conv2d"))
    ir_str_printf(o,
                  "  te_conv2d_params cp = {%lld, %lld, %lld, %lld, %lld, %lld};\n"
                  "  te_tensor *out = te_op_%s(ctx, t_data, t_kernel, &cp, NULL);\n",
                  s, s, p, p, d, d,
                  !strcmp(op, "conv2d")        ? "conv2d_nchw"
                  : !strcmp(op, "conv2d_nhwc") ? "conv2d_nhwc"
                                               : "depthwise_conv2d_nchw");
  else if (!strcmp(op, "softmax"))
    ir_str_puts(o, "  te_tensor *out = te_op_softmax(ctx, t_x, NULL);\n");
  else if (!strcmp(op, "layer_norm"))
    ir_str_puts(o, "  te_tensor *out = te_op_layer_norm(ctx, t_x, t_gamma, t_beta, 1e-5, NULL);\n");
  else
    ir_str_printf(o,
                  "  te_pool2d_params pp = {%lld, %lld, %lld, %lld, %lld, %lld};\n"
                  "  te_tensor *out = te_op_max_pool2d(ctx, t_data, &pp, NULL);\n",
                  (long long)param(sp, "K"), (long long)param(sp, "K"), (long long)param(sp, "S"),
                  (long long)param(sp, "S"), (long long)param(sp, "P"), (long long)param(sp, "P"));
}

te_status at_op_spec_build(const at_op_spec *sp, te_ctx *ctx, int *nout, te_tensor **outs) {
  input_info info[3];
  int n = inputs_of(sp, info);
  te_tensor *in[3] = {0};
  for (int i = 0; i < n; i++) {
    te_expr *shape[4];
    int nd = 0;
    while (nd < 4 && info[i].dims[nd]) {
      shape[nd] = te_int(ctx, param(sp, info[i].dims[nd]));
      nd++;
    }
    in[i] = te_placeholder(ctx, info[i].name, sp->dtype, nd, shape);
  }
  outs[0] = call_op(sp, ctx, in);
  *nout = 1;
  return outs[0] ? TE_OK : te_last_status(ctx);
}

static const char *dtype_macro(te_dtype t) {
  char buf[16];
  static char out[24];
  te_dtype_str(t, buf, sizeof buf);
  snprintf(out, sizeof out, "TE_%c%s", buf[0] - 'a' + 'A', buf + 1);
  return out;
}

char *at_op_spec_c(const at_op_spec *sp, const char **names, int *nnames) {
  ir_str o = {0};
  input_info info[3];
  int n = inputs_of(sp, info);
  *nnames = 0;
  if (!strcmp(sp->op, "matmul_relu"))
    names[(*nnames)++] = "matmul";
  for (int i = 0; i < n; i++) {
    names[(*nnames)++] = info[i].name;
    ir_str_printf(&o, "  te_tensor *t_%s = te_placeholder(ctx, \"%s\", %s, ", info[i].name,
                  info[i].name, dtype_macro(sp->dtype));
    int nd = 0;
    while (nd < 4 && info[i].dims[nd])
      nd++;
    ir_str_printf(&o, "%d, TE_EXPRS(", nd);
    for (int k = 0; k < nd; k++)
      ir_str_printf(&o, "%ste_int(ctx, %lld)", k ? ", " : "",
                    (long long)param(sp, info[i].dims[k]));
    ir_str_puts(&o, "));\n");
  }
  emit_call(sp, &o);
  ir_str_puts(&o, "  te_tensor *args[] = {");
  for (int i = 0; i < n; i++)
    ir_str_printf(&o, "t_%s, ", info[i].name);
  ir_str_printf(&o,
                "out}; /* the kernel's arguments: inputs, then the output */\n"
                "  int nargs = %d;\n",
                n + 1);
  return ir_str_take(&o);
}
