/* save.h — writing modules to files: objects, static libraries, headers, IR and asm (internal).
 *
 * te_module_save / te_modules_save (save.c) make every file's bytes in memory first, then write
 * them under temporary names and rename them all at the end, so a failure leaves nothing behind.
 *   save_object.c   the modules' optimized LLVM modules linked into one, emitted as an ELF
 *                   object, asm or LLVM IR text; the object's exported symbols (declared in
 *                   llvm_cg.h, with the rest of the LLVM back end)
 *   save_archive.c  a System V (GNU) ar archive with a symbol index, written by te
 *   save_header.c   the C header: prototypes, argument dtypes and shapes, target, trace; and the
 *                   per-kernel metadata it needs, captured at build time (cg_kernel_meta)
 */
#ifndef TE_CG_SAVE_H
#define TE_CG_SAVE_H

#include "codegen.h"

/* Bytes of one file, malloc'd. */
typedef struct cg_blob {
  char *data;
  size_t size;
} cg_blob;
void cg_blob_free(cg_blob *);

/* The target for messages: its string without the (long) feature list. Returns buf. */
const char *cg_target_brief(const te_target *, char *buf, size_t size);
/* TE_OK when the target can write ELF objects; else TE_ERR_TARGET with a message naming fn
   (save_object.c). */
te_status cg_check_object_target(te_ctx *, const te_target *, const char *fn);

/* save_archive.c: one member of an archive and the global symbols it defines. */
typedef struct cg_ar_member {
  const char *name; /* file name, no '/' */
  const void *data;
  size_t size;
  int nsyms;
  char *const *syms;
} cg_ar_member;
/* A System V / GNU archive: "!<arch>\n", the symbol index "/", the long-name table "//" when a
   name is longer than 15 characters, then the members. Deterministic (dates, uids 0). */
te_status cg_ar_write(te_ctx *, int n, const cg_ar_member members[], cg_blob *out);

/* save_header.c: the C header for the kernels of mods; name is the header's base name. */
te_status cg_header_text(te_ctx *, int n, te_module *const mods[], const char *name, cg_blob *out);

#endif
