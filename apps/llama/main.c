/* main.c — te-llama, a drop-in for llama2.c's `run`:
 *
 *   te-llama CHECKPOINT [-t temperature] [-p topp] [-s seed] [-n steps] [-i prompt]
 *                       [-z tokenizer] [-m generate|chat] [-y system_prompt]
 *
 * The flags, their defaults and their clamping are run.c's (-t 1.0, -p 0.9, -s time(NULL),
 * -n 256 with 0 or more than seq_len meaning seq_len, -z tokenizer.bin, -m generate), and so is
 * the output. Unlike run.c, a flag without its value, an unknown flag, a value that is not a
 * number, and an unreadable or malformed checkpoint or tokenizer are each reported by name
 * (exit status 1). Built twice: te-llama runs te's kernels, te-llama-ref (TL_REFERENCE) the
 * plain C reference (reference.c), for the tests and the benchmark.
 */
#define _POSIX_C_SOURCE 200809L
#include "checkpoint.h"
#include "generate.h"
#include "model.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef TL_REFERENCE
#define PROGRAM "te-llama-ref"
#define MODEL_NEW tl_ref_model_new
#else
#define PROGRAM "te-llama"
#define MODEL_NEW tl_te_model_new
#endif

static int usage(const char *why, const char *arg) {
  if (why)
    fprintf(stderr, PROGRAM ": %s%s%s%s\n", why, arg ? " '" : "", arg ? arg : "", arg ? "'" : "");
  fprintf(stderr, "Usage:   " PROGRAM " <checkpoint> [options]\n");
  fprintf(stderr, "Example: " PROGRAM " model.bin -n 256 -i \"Once upon a time\"\n");
  fprintf(stderr, "Options:\n");
  fprintf(stderr, "  -t <float>  temperature in [0,inf], default 1.0\n");
  fprintf(stderr, "  -p <float>  p value in top-p (nucleus) sampling in [0,1] default 0.9\n");
  fprintf(stderr, "  -s <int>    random seed, default time(NULL)\n");
  fprintf(stderr, "  -n <int>    number of steps to run for, default 256. 0 = max_seq_len\n");
  fprintf(stderr, "  -i <string> input prompt\n");
  fprintf(stderr, "  -z <string> optional path to custom tokenizer\n");
  fprintf(stderr, "  -m <string> mode: generate|chat, default: generate\n");
  fprintf(stderr, "  -y <string> (optional) system prompt in chat mode\n");
  return 1;
}

static int parse_float(const char *s, float *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || *end || errno)
    return -1;
  *out = (float)v;
  return 0;
}

static int parse_int(const char *s, long long *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (end == s || *end || errno)
    return -1;
  *out = v;
  return 0;
}

typedef struct {
  const char *checkpoint, *tokenizer, *prompt, *mode, *system;
  float temperature, topp;
  long long seed, steps;
} options;

static int parse_args(int argc, char **argv, options *o) {
  *o = (options){NULL, "tokenizer.bin", NULL, "generate", NULL, 1.0f, 0.9f, 0, 256};
  if (argc < 2)
    return usage("no checkpoint given", NULL);
  o->checkpoint = argv[1];
  for (int i = 2; i < argc; i += 2) {
    const char *flag = argv[i];
    if (flag[0] != '-' || strlen(flag) != 2)
      return usage("options are one dash and one letter, not", flag);
    if (!strchr("tpsnizmy", flag[1]))
      return usage("unknown option", flag);
    if (i + 1 >= argc)
      return usage("this option needs a value:", flag);
    const char *v = argv[i + 1];
    int bad = 0;
    switch (flag[1]) {
    case 't':
      bad = parse_float(v, &o->temperature);
      break;
    case 'p':
      bad = parse_float(v, &o->topp);
      break;
    case 's':
      bad = parse_int(v, &o->seed);
      break;
    case 'n':
      bad = parse_int(v, &o->steps);
      break;
    case 'i':
      o->prompt = v;
      break;
    case 'z':
      o->tokenizer = v;
      break;
    case 'm':
      o->mode = v;
      break;
    case 'y':
      o->system = v;
      break;
    }
    if (bad) {
      fprintf(stderr, PROGRAM ": %s needs a number, got '%s'\n", flag, v);
      return 1;
    }
  }
  if (strcmp(o->mode, "generate") && strcmp(o->mode, "chat"))
    return usage("-m is generate or chat, not", o->mode);
  if (o->seed <= 0) /* run.c: a non-positive seed means the time */
    o->seed = (unsigned int)time(NULL);
  if (o->temperature < 0.0f)
    o->temperature = 0.0f;
  if (o->topp < 0.0f || o->topp > 1.0f)
    o->topp = 0.9f;
  if (o->steps < 0)
    o->steps = 0;
  return 0;
}

int main(int argc, char **argv) {
  options o;
  if (parse_args(argc, argv, &o))
    return 1;
  char err[1024];
  tl_checkpoint ck;
  if (tl_checkpoint_open(o.checkpoint, &ck, err, sizeof err)) {
    fprintf(stderr, PROGRAM ": %s\n", err);
    return 1;
  }
  int steps = (int)(o.steps == 0 || o.steps > ck.c.seq_len ? ck.c.seq_len : o.steps);
  tl_tokenizer tok;
  if (tl_tokenizer_open(o.tokenizer, ck.c.vocab_size, &tok, err, sizeof err)) {
    fprintf(stderr, PROGRAM ": %s\n", err);
    tl_checkpoint_close(&ck);
    return 1;
  }
  tl_model *m = MODEL_NEW(&ck, err, sizeof err);
  tl_sampler smp;
  int rc = 1;
  if (!m) {
    fprintf(stderr, PROGRAM ": %s\n", err);
  } else if (tl_sampler_init(&smp, ck.c.vocab_size, o.temperature, o.topp,
                             (unsigned long long)o.seed)) {
    fprintf(stderr, PROGRAM ": out of memory\n");
  } else {
    if (!strcmp(o.mode, "generate"))
      rc = tl_generate(m, &tok, &smp, o.prompt, steps) ? 1 : 0;
    else
      rc = tl_chat(m, &tok, &smp, o.prompt, o.system, steps) ? 1 : 0;
    tl_sampler_free(&smp);
  }
  tl_model_free(m);
  tl_tokenizer_close(&tok);
  tl_checkpoint_close(&ck);
  return rc;
}
