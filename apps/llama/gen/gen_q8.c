/* gen_q8.c — placeholder while the int8 kernels are written. */
#include "gen.h"
static te_status todo(te_ctx *ctx) { (void)ctx; return TE_ERR_UNSUPPORTED; }
te_status tl_gen_quantize_g64(te_ctx *c, te_target *t, te_module **o) { (void)t; (void)o; return todo(c); }
te_status tl_gen_quantize_g32(te_ctx *c, te_target *t, te_module **o) { (void)t; (void)o; return todo(c); }
te_status tl_gen_q8_matvec_g64(te_ctx *c, te_target *t, te_module **o) { (void)t; (void)o; return todo(c); }
te_status tl_gen_q8_matvec_g32(te_ctx *c, te_target *t, te_module **o) { (void)t; (void)o; return todo(c); }
