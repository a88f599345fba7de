/* generate.h — llama2.c's two loops over a model: generate (complete a prompt) and chat (Llama 2
 * Chat turns read from stdin). They print what run.c prints: the pieces as they come, a
 * newline, and on stderr "achieved tok/s: R".
 *
 * generate runs the prompt as one batch (the model's matrix-matrix path), then one token at a
 * time; the tokens are those of run.c's loop, which feeds the prompt one token at a time (the
 * tests check this). R counts the tokens after the first forward call over the time since it,
 * as run.c does, where the first call is the whole prompt. chat feeds every token one at a
 * time, as run.c does: it samples after each, so the random draws stay the same.
 * Both return 0, or -1 after printing the model's message to stderr. */
#ifndef TL_GENERATE_H
#define TL_GENERATE_H
#include "model.h"
#include "sampler.h"
#include "tokenizer.h"

int tl_generate(tl_model *, const tl_tokenizer *, tl_sampler *, const char *prompt, int steps);
int tl_chat(tl_model *, const tl_tokenizer *, tl_sampler *, const char *prompt,
            const char *system_prompt, int steps);

#endif
