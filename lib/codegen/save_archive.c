/* save_archive.c — a System V (GNU) ar archive, written by te: lib<name>.a.
 *
 * The format is small enough to write directly (TOOLCHAIN.md), and doing so keeps te free of a
 * run-time dependency on binutils or llvm-ar:
 *
 *   "!<arch>\n"
 *   member "/"    the symbol index: a big-endian 32-bit count, one big-endian 32-bit file offset
 *                 per symbol (of the header of the member defining it), then the names, each
 *                 NUL-terminated. Linkers (GNU ld, gold, lld) need it to pull members in.
 *   member "//"   the long-name table, only when a member's name does not fit the 16-character
 *                 field: "name/\n" entries; such a member is named "/<offset into the table>".
 *   the members   "name/" in the header, the bytes, a '\n' pad to an even offset.
 *
 * Every member header is 60 bytes of ASCII: name[16] date[12] uid[6] gid[6] mode[8] size[10]
 * "`\n". Dates, owners and groups are 0 and the mode 644, as `ar D` writes them, so the same
 * kernels give byte-identical archives (reproducible builds).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "save.h"

enum { CG_AR_HDR = 60, CG_AR_NAME = 16 };

void cg_blob_free(cg_blob *b) {
  if (!b)
    return;
  free(b->data);
  b->data = NULL;
  b->size = 0;
}

/* The 60-byte header of a member called name (already in its "name/" or "/N" form). Sizes fit
   the 10-digit field (cg_ar_plan keeps the archive under 4 GiB); h has room for any size_t, so
   the compiler sees no truncation. */
static void cg_ar_header(char *dst, const char *name, size_t size) {
  char h[CG_AR_HDR + 24];
  snprintf(h, sizeof h, "%-16.16s%-12s%-6s%-6s%-8s%-10zu`\n", name, "0", "0", "0", "644", size);
  memcpy(dst, h, CG_AR_HDR);
}

static size_t cg_even(size_t n) { return n + (n & 1); }

typedef struct cg_ar_layout {
  size_t symtab_size; /* the "/" member's data */
  size_t longnames_size;
  size_t *offsets;     /* of each member's header */
  size_t *longname_at; /* offset in the "//" table, or (size_t)-1 for a short name */
  size_t total;
} cg_ar_layout;

static bool cg_ar_plan(int n, const cg_ar_member m[], cg_ar_layout *l) {
  size_t nsyms = 0, names = 0;
  for (int i = 0; i < n; i++)
    for (int s = 0; s < m[i].nsyms; s++)
      nsyms++, names += strlen(m[i].syms[s]) + 1;
  l->symtab_size = 4 + 4 * nsyms + names;
  l->longnames_size = 0;
  for (int i = 0; i < n; i++) {
    size_t len = strlen(m[i].name);
    if (len + 1 > CG_AR_NAME) {
      l->longname_at[i] = l->longnames_size;
      l->longnames_size += len + 2; /* "name/\n" */
    } else {
      l->longname_at[i] = (size_t)-1;
    }
  }
  size_t at = 8 + CG_AR_HDR + cg_even(l->symtab_size);
  if (l->longnames_size)
    at += CG_AR_HDR + cg_even(l->longnames_size);
  for (int i = 0; i < n; i++) {
    l->offsets[i] = at;
    at += CG_AR_HDR + cg_even(m[i].size);
  }
  l->total = at;
  return at <= 0xffffffffu; /* 32-bit offsets in the index */
}

static void cg_put_be32(char *p, size_t v) {
  p[0] = (char)((v >> 24) & 0xff);
  p[1] = (char)((v >> 16) & 0xff);
  p[2] = (char)((v >> 8) & 0xff);
  p[3] = (char)(v & 0xff);
}

/* Writes the members' headers and data from *at on. */
static void cg_ar_members(char *buf, size_t *at, int n, const cg_ar_member m[],
                          const cg_ar_layout *l) {
  for (int i = 0; i < n; i++) {
    char name[CG_AR_NAME + 24]; /* "/" and an offset, or a short name and "/" */
    if (l->longname_at[i] == (size_t)-1)
      snprintf(name, sizeof name, "%s/", m[i].name);
    else
      snprintf(name, sizeof name, "/%zu", l->longname_at[i]);
    cg_ar_header(buf + *at, name, m[i].size);
    *at += CG_AR_HDR;
    if (m[i].size)
      memcpy(buf + *at, m[i].data, m[i].size);
    *at += m[i].size;
    if (m[i].size & 1)
      buf[(*at)++] = '\n';
  }
}

static void cg_ar_fill(char *buf, int n, const cg_ar_member m[], const cg_ar_layout *l) {
  size_t at = 0;
  memcpy(buf, "!<arch>\n", 8);
  at = 8;
  cg_ar_header(buf + at, "/", l->symtab_size);
  at += CG_AR_HDR;
  size_t nsyms = 0;
  for (int i = 0; i < n; i++)
    nsyms += (size_t)m[i].nsyms;
  cg_put_be32(buf + at, nsyms);
  at += 4;
  for (int i = 0; i < n; i++)
    for (int s = 0; s < m[i].nsyms; s++, at += 4)
      cg_put_be32(buf + at, l->offsets[i]);
  for (int i = 0; i < n; i++)
    for (int s = 0; s < m[i].nsyms; s++) {
      size_t len = strlen(m[i].syms[s]) + 1;
      memcpy(buf + at, m[i].syms[s], len);
      at += len;
    }
  if (l->symtab_size & 1)
    buf[at++] = '\n';
  if (l->longnames_size) {
    cg_ar_header(buf + at, "//", l->longnames_size);
    at += CG_AR_HDR;
    for (int i = 0; i < n; i++)
      if (l->longname_at[i] != (size_t)-1)
        at += (size_t)sprintf(buf + at, "%s/\n", m[i].name);
    if (l->longnames_size & 1)
      buf[at++] = '\n';
  }
  cg_ar_members(buf, &at, n, m, l);
}

te_status cg_ar_write(te_ctx *ctx, int n, const cg_ar_member members[], cg_blob *out) {
  *out = (cg_blob){0};
  for (int i = 0; i < n; i++)
    if (!members[i].name || !*members[i].name || strchr(members[i].name, '/') ||
        strchr(members[i].name, '\n'))
      return ir_error(ctx, TE_ERR_INTERNAL, "internal: archive member name '%s' is not a file name",
                      members[i].name ? members[i].name : "(null)");
  cg_ar_layout l = {0};
  l.offsets = ir_calloc(ctx, (size_t)n + 1, sizeof *l.offsets);
  l.longname_at = l.offsets ? ir_calloc(ctx, (size_t)n + 1, sizeof *l.longname_at) : NULL;
  te_status st = TE_OK;
  if (!l.offsets || !l.longname_at)
    st = ir_error(ctx, TE_ERR_NOMEM, "te_module_save: out of memory writing the archive");
  else if (!cg_ar_plan(n, members, &l))
    st = ir_error(ctx, TE_ERR_UNSUPPORTED,
                  "te_module_save: the archive would be larger than 4 GiB (not supported)");
  else if (!(out->data = ir_malloc(ctx, l.total)))
    st = ir_error(ctx, TE_ERR_NOMEM, "te_module_save: out of memory writing the archive");
  if (st == TE_OK) {
    cg_ar_fill(out->data, n, members, &l);
    out->size = l.total;
  }
  free(l.offsets);
  free(l.longname_at);
  return st;
}
