/* save_header.c — the C header of a saved library (NAME.h), and the kernel metadata it needs.
 *
 * The header is all a program needs to call the kernels (with DLPack's header and stdint.h):
 * an include guard, one prototype per kernel
 *     int32_t NAME(DLTensor *A, DLTensor *B, float alpha);
 * whose argument names are the tensors' and parameters' names, and before each a comment block
 * giving every argument's role, dtype and shape (symbolic sizes by name, with the tensor and
 * dimension each is read from), followed by the schedule trace. The file's first comment names
 * the target in short (te_target_short_str; the canonical string, every feature named, is the
 * file's last comment), te's version, how to link, and what the kernels check; the declarations
 * of te_rt_last_error and te_rt_set_num_threads / te_rt_num_threads are repeated (identical to
 * te/runtime.h, so including both is fine) so the header stands alone.
 *
 * The lowered function lives in the build's scratch arena, which ends when te_build returns, so
 * cg_kernel_meta copies what the header says into the context's memory at build time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "save.h"

/* ---------------------------------------------------------------- metadata (build time) */

static char *cg_shape_text(te_ctx *ctx, const ir_buffer *b) {
  ir_str s = {.ctx = ctx};
  for (int d = 0; d < b->ndim; d++) {
    char *e = ir_expr_to_string(b->shape[d]);
    ir_str_printf(&s, "%s%s", d ? ", " : "", e ? e : "?");
    free(e);
  }
  char *text = ir_str_take(&s);
  char *copy = ir_strdup_persistent(ctx, text ? text : "");
  free(text);
  return copy;
}

static char *cg_sizes_text(te_ctx *ctx, const lw_func *f) {
  ir_str s = {.ctx = ctx};
  for (int k = 0; k < f->nsizes; k++) {
    int a = f->size_arg[k];
    const char *arg =
        a >= 0 && a < f->nargs && f->args[a].is_buffer ? f->args[a].buffer->name : "?";
    ir_str_printf(&s, "%s%s = %s.%s[%d]", k ? ", " : "", f->size_vars[k]->u.var.name, arg,
                  lw_size_is_stride(f, k) ? "strides" : "shape", f->size_dim[k]);
  }
  char *text = ir_str_take(&s);
  char *copy = ir_strdup_persistent(ctx, text ? text : "");
  free(text);
  return copy;
}

typedef struct extern_walk {
  te_ctx *ctx;
  cg_kernel *k;
  int cap;
  bool oom;
} extern_walk;

static int note_extern(ir_visitor *v, ir_stmt *s) {
  extern_walk *w = v->data;
  const ir_extern_call *c = s->u.ext;
  for (int i = 0; i < w->k->nexterns; i++)
    if (strcmp(w->k->externs[i].stage, c->stage) == 0)
      return IR_CONTINUE;
  if (w->k->nexterns == w->cap) {
    int cap = w->cap ? 2 * w->cap : 4;
    cg_extern_meta *l = ir_alloc_persistent(w->ctx, sizeof *l * (size_t)cap);
    if (!l) {
      w->oom = true;
      return IR_ABORT;
    }
    if (w->k->nexterns)
      memcpy(l, w->k->externs, sizeof *l * (size_t)w->k->nexterns);
    w->k->externs = l, w->cap = cap;
  }
  cg_extern_meta *m = &w->k->externs[w->k->nexterns++];
  m->stage = ir_strdup_persistent(w->ctx, c->stage);
  m->symbol = c->symbol ? ir_strdup_persistent(w->ctx, c->symbol) : NULL;
  m->fn = c->fn;
  w->oom = w->oom || !m->stage || (c->symbol && !m->symbol);
  return IR_CONTINUE;
}

/* The extern stages f calls (te_extern). */
static te_status cg_extern_meta_of(te_ctx *ctx, cg_kernel *k, const lw_func *f) {
  extern_walk w = {ctx, k, 0, false};
  ir_visitor v = {.data = &w};
  v.stmt[IR_S_CALL_EXTERN] = note_extern;
  k->nexterns = 0;
  k->externs = NULL;
  if (f->body)
    ir_visit_stmt(&v, f->body);
  return w.oom ? TE_ERR_NOMEM : TE_OK;
}

te_status cg_kernel_meta(te_ctx *ctx, cg_kernel *k, const lw_func *f) {
  k->args = ir_alloc_persistent(ctx, sizeof *k->args * (size_t)(f->nargs + 1));
  if (!k->args)
    return TE_ERR_NOMEM;
  int n = 0;
  for (int pass = 0; pass < 2; pass++) /* tensors, then scalars: the entry's order */
    for (int i = 0; i < f->nargs; i++) {
      const lw_arg *a = &f->args[i];
      if (a->is_buffer != (pass == 0))
        continue;
      cg_arg_meta *m = &k->args[n++];
      m->is_tensor = a->is_buffer;
      if (a->is_buffer) {
        m->name = ir_strdup_persistent(ctx, a->buffer->name ? a->buffer->name : "arg");
        m->dtype = a->buffer->dtype;
        m->is_output = a->is_output;
        m->shape = cg_shape_text(ctx, a->buffer);
      } else {
        m->name = ir_strdup_persistent(ctx, a->var->u.var.name ? a->var->u.var.name : "arg");
        m->dtype = a->var->dtype;
        m->shape = "";
      }
      if (!m->name || !m->shape)
        return TE_ERR_NOMEM;
    }
  k->nargs = n;
  k->sizes = cg_sizes_text(ctx, f);
  if (!k->sizes)
    return TE_ERR_NOMEM;
  return cg_extern_meta_of(ctx, k, f);
}

/* ---------------------------------------------------------------- the header */

static const char *const cg_reserved[] = {
    "auto",     "break",     "case",   "char",     "const",    "continue",  "default",  "do",
    "double",   "else",      "enum",   "extern",   "float",    "for",       "goto",     "if",
    "inline",   "int",       "long",   "register", "restrict", "return",    "short",    "signed",
    "sizeof",   "static",    "struct", "switch",   "typedef",  "union",     "unsigned", "void",
    "volatile", "while",     "bool",   "true",     "false",    "alignas",   "alignof",  "asm",
    "catch",    "class",     "delete", "friend",   "mutable",  "namespace", "new",      "operator",
    "private",  "protected", "public", "template", "this",     "throw",     "try",      "typename",
    "using",    "virtual",   "NULL",   "DLTensor"};

/* The C name of argument i: its own, with '_' appended when it is a keyword (of C or C++) and
   its position when an earlier argument has the same name. */
static void cg_param_name(const cg_kernel *k, int i, char *buf, size_t size) {
  const char *n = k->args[i].name;
  bool reserved = !strncmp(n, "__", 2);
  for (size_t r = 0; r < sizeof cg_reserved / sizeof *cg_reserved; r++)
    reserved = reserved || !strcmp(n, cg_reserved[r]);
  bool dup = false;
  for (int j = 0; j < i; j++)
    dup = dup || !strcmp(k->args[j].name, n);
  if (dup)
    snprintf(buf, size, "%s_%d", n, i);
  else
    snprintf(buf, size, "%s%s", n, reserved ? "_" : "");
}

static const char *cg_c_type(te_dtype t, char *buf, size_t size) {
  if (ir_is_bool(t))
    return "uint8_t";
  if (ir_is_half(t))
    return "uint16_t"; /* f16/bf16 scalars: the value's 16 bits (llvm_entry.c) */
  if (ir_is_float(t))
    return t.bits == 64 ? "double" : "float";
  snprintf(buf, size, "%sint%d_t", ir_is_int(t) ? "" : "u", t.bits);
  return buf;
}

/* Text inside a comment: "*" "/" would end it. */
static void cg_comment_text(ir_str *s, const char *text) {
  for (const char *p = text; *p; p++) {
    ir_str_printf(s, "%c", *p);
    if (p[0] == '*' && p[1] == '/')
      ir_str_puts(s, " ");
  }
}

/* text (no newlines) wrapped at spaces and commas to lines of at most ~96 characters, each
   line inside the comment; the first line starts at column col. */
static void cg_wrapped(ir_str *s, const char *text, int col) {
  const char *p = text;
  while (*p) {
    size_t len = strcspn(p + 1, " ,") + 1; /* a word with its leading separator */
    if (p[0] == ' ' && col > 12 && col + (int)len > 96) {
      ir_str_puts(s, "\n *  ");
      col = 5;
    } else if (p[0] == ',' && col + (int)len > 96) {
      ir_str_puts(s, ",\n *    ");
      col = 7;
      p++, len--;
    }
    if (p == text && *p != ' ')
      ir_str_puts(s, " ");
    char word[256];
    size_t w = len < sizeof word ? len : sizeof word - 1;
    memcpy(word, p, w);
    word[w] = '\0';
    cg_comment_text(s, word);
    col += (int)len;
    p += len;
  }
  ir_str_puts(s, "\n");
}

static void cg_header_top(ir_str *s, const char *name, const te_target *t, int nk) {
  ir_str_printf(s, "/* %s.h — %d kernel%s generated by te %s. Do not edit: regenerate.\n *\n", name,
                nk, nk == 1 ? "" : "s", TE_VERSION_STRING);
  /* The short form here, where people read; the canonical one, with every feature, closes the
     file (cg_header_target). */
  ir_str_puts(s, " * target:");
  cg_wrapped(s, te_target_short_str(t), 12);
  if (strcmp(te_target_short_str(t), t->str))
    ir_str_puts(s, " *   (every feature it assumes: at the end of this file)\n");
  ir_str_printf(s,
                " *\n"
                " * Link lib%s.a (or %s.o) with libte_runtime and libm; no LLVM and no libte\n"
                " * are needed (a static libte_runtime.a also needs OpenMP: -fopenmp):\n"
                " *     cc app.c -I<dir> <dir>/lib%s.a -lte_runtime -lm\n *\n",
                name, name, name);
  ir_str_puts(s,
              " * Each kernel returns 0, or a nonzero te_status code (te/core.h: 1 invalid "
              "argument,\n * 2 wrong dtype, 3 wrong shape, 11 out of memory, ...) with a "
              "message in\n * te_rt_last_error() on the calling thread. Before it touches "
              "memory it checks every\n * DLTensor: not NULL, on the CPU, its rank, dtype and "
              "extents, compact row-major strides\n * (NULL or the compact ones; a strided input's "
              "declared ones), a non-NULL "
              "data pointer aligned to the element size, and\n * that no output overlaps "
              "another argument. Symbolic sizes are read from the tensors.\n */\n");
}

static void cg_header_kernel(ir_str *s, const cg_kernel *k) {
  ir_str_printf(s, "\n/* %s(", k->name);
  int width = 0;
  char pn[256], tb[32];
  for (int i = 0; i < k->nargs; i++) {
    cg_param_name(k, i, pn, sizeof pn);
    ir_str_printf(s, "%s%s", i ? ", " : "", pn);
    width = (int)strlen(pn) > width ? (int)strlen(pn) : width;
  }
  ir_str_puts(s, ")\n");
  for (int i = 0; i < k->nargs; i++) {
    const cg_arg_meta *a = &k->args[i];
    cg_param_name(k, i, pn, sizeof pn);
    const char *role = !a->is_tensor ? "scalar" : a->is_output ? "output" : "input";
    ir_str_printf(s, " *   %-*s  %-6s  %s", width, pn, role, te_dtype_str(a->dtype, tb, sizeof tb));
    if (a->is_tensor) {
      ir_str_puts(s, "[");
      cg_comment_text(s, a->shape);
      ir_str_puts(s, "]");
    }
    ir_str_puts(s, "\n");
  }
  if (k->sizes && *k->sizes) {
    ir_str_puts(s, " *   sizes: ");
    cg_comment_text(s, k->sizes);
    ir_str_puts(s, " (read from the tensors at each call, checked everywhere else)\n");
  }
  ir_str_puts(s, " * schedule:");
  if (!k->trace || !*k->trace)
    ir_str_puts(s, " (default: the loops in definition order)\n");
  else
    ir_str_puts(s, "\n *   ");
  for (const char *p = k->trace; p && *p; p++) {
    if (*p == '\n') {
      ir_str_puts(s, p[1] ? "\n *   " : "");
      continue;
    }
    ir_str_printf(s, "%c", *p);
    if (p[0] == '*' && p[1] == '/')
      ir_str_puts(s, " ");
  }
  if (k->trace && *k->trace)
    ir_str_puts(s, "\n");
  ir_str_printf(s, " */\nint32_t %s(", k->name);
  for (int i = 0; i < k->nargs; i++) {
    cg_param_name(k, i, pn, sizeof pn);
    ir_str_printf(s, "%s%s%s", i ? ", " : "",
                  k->args[i].is_tensor ? "DLTensor *" : cg_c_type(k->args[i].dtype, tb, sizeof tb),
                  k->args[i].is_tensor ? "" : " ");
    ir_str_puts(s, pn);
  }
  ir_str_printf(s, "%s);\n", k->nargs ? "" : "void");
}

/* The extern functions the kernels call (te_extern), each symbol once: the program linking the
   library defines them. */
static void cg_header_externs(ir_str *s, int n, te_module *const mods[]) {
  bool any = false;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < mods[i]->nkernels; j++)
      for (int x = 0; x < mods[i]->kernels[j].nexterns; x++) {
        const cg_extern_meta *e = &mods[i]->kernels[j].externs[x];
        bool seen = false;
        for (int i2 = 0; i2 <= i && !seen; i2++)
          for (int j2 = 0; j2 < mods[i2]->nkernels && !seen; j2++)
            for (int x2 = 0; x2 < mods[i2]->kernels[j2].nexterns && !seen; x2++) {
              if (i2 == i && j2 == j && x2 == x)
                break;
              seen = !strcmp(mods[i2]->kernels[j2].externs[x2].symbol, e->symbol);
            }
        if (seen)
          continue;
        if (!any)
          ir_str_puts(s, "\n/* Extern stages (te_extern): functions the program defines. Each "
                         "returns 0, or\n * nonzero to fail the kernel (TE_ERR_RUNTIME). */\n");
        any = true;
        ir_str_printf(s,
                      "int %s(int32_t ninputs, const DLTensor *const inputs[], DLTensor *output); "
                      "/* stage %s of %s */\n",
                      e->symbol, e->stage, mods[i]->kernels[j].name);
      }
}

/* The canonical target string, when the top of the file gave a shorter one. */
static void cg_header_target(ir_str *s, const te_target *t) {
  if (!strcmp(te_target_short_str(t), t->str))
    return;
  ir_str_puts(s, "\n/* Made for the target (te_target_str, every CPU feature named):\n *");
  cg_wrapped(s, t->str, 3);
  ir_str_puts(s, " */\n");
}

te_status cg_header_text(te_ctx *ctx, int n, te_module *const mods[], const char *name,
                         cg_blob *out) {
  *out = (cg_blob){0};
  ir_str s = {.ctx = ctx};
  int nk = 0;
  for (int i = 0; i < n; i++)
    nk += mods[i]->nkernels;
  cg_header_top(&s, name, mods[0]->target, nk);
  char guard[256];
  size_t g = 0;
  for (const char *p = name; *p && g < sizeof guard - 1; p++)
    guard[g++] = *p >= 'a' && *p <= 'z' ? (char)(*p - 'a' + 'A') : *p;
  guard[g] = '\0';
  ir_str_printf(&s, "#ifndef TE_%s_H\n#define TE_%s_H\n\n", guard, guard);
  ir_str_puts(&s, "#include <dlpack/dlpack.h>\n#include <stdint.h>\n\n"
                  "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
                  "/* From libte_runtime (the same declarations as te/runtime.h). */\n"
                  "const char *te_rt_last_error(void);  /* the calling thread's last message */\n"
                  "void te_rt_set_num_threads(int n);    /* 0: TE_NUM_THREADS or OpenMP's "
                  "default */\n"
                  "int te_rt_num_threads(void);\n");
  cg_header_externs(&s, n, mods);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < mods[i]->nkernels; j++)
      cg_header_kernel(&s, &mods[i]->kernels[j]);
  cg_header_target(&s, mods[0]->target);
  ir_str_printf(&s, "\n#ifdef __cplusplus\n}\n#endif\n#endif /* TE_%s_H */\n", guard);
  if (s.oom) {
    ir_str_free(&s);
    return ir_error(ctx, TE_ERR_NOMEM, "te_module_save: out of memory writing the header");
  }
  out->size = s.len;
  out->data = ir_str_take(&s);
  return out->data ? TE_OK : ir_error(ctx, TE_ERR_NOMEM, "te_module_save: out of memory");
}
