/* generate.c — the generate and chat loops (generate.h). */
#define _POSIX_C_SOURCE 200809L
#include "generate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec * 1000.0 + (double)(ts.tv_nsec / 1000000);
}

static int model_failed(tl_model *m) {
  fprintf(stderr, "te-llama: %s\n", m->err);
  return -1;
}

/* The first n tokens at positions 0 .. n-1, in batches the model takes. */
static int run_prompt(tl_model *m, const int *tokens, int n, float **logits) {
  for (int at = 0; at < n; at += m->max_batch) {
    int len = n - at < m->max_batch ? n - at : m->max_batch;
    if (m->forward(m, tokens + at, len, at, logits))
      return -1;
  }
  return 0;
}

int tl_generate(tl_model *m, const tl_tokenizer *tok, tl_sampler *smp, const char *prompt,
                int steps) {
  if (!prompt)
    prompt = "";
  int *tokens = malloc((strlen(prompt) + 3) * sizeof(int));
  if (!tokens) {
    fprintf(stderr, "te-llama: out of memory for the prompt\n");
    return -1;
  }
  int n = tl_encode(tok, prompt, 1, 0, tokens);
  if (n < 1) {
    free(tokens);
    fprintf(stderr, "te-llama: the prompt encodes to no tokens\n");
    return -1;
  }
  /* run.c: position pos feeds token[pos] and forces the next prompt token while there is one;
     here the positions of the prompt run as one batch and their forced tokens are printed. */
  int batch = n < steps ? n : steps, pos = 0, token = tokens[0], next = 0, rc = 0;
  float *logits = NULL;
  double start = 0;
  if (batch > 0 && run_prompt(m, tokens, batch, &logits)) {
    free(tokens);
    return model_failed(m);
  }
  while (pos < steps) {
    if (pos >= batch && m->forward(m, &token, 1, pos, &logits)) {
      rc = model_failed(m);
      break;
    }
    next = pos < n - 1 ? tokens[pos + 1] : tl_sample(smp, logits);
    pos++;
    if (next == 1)
      break;
    tl_print_piece(tl_decode(tok, token, next));
    fflush(stdout);
    token = next;
    if (pos == batch)
      start = now_ms();
  }
  printf("\n");
  if (rc == 0 && pos > batch && start > 0) {
    double ms = now_ms() - start;
    fprintf(stderr, "achieved tok/s: %f\n", (double)(pos - batch) / ms * 1000.0);
  }
  free(tokens);
  return rc;
}

/* Reads a line from stdin after printing guide; the newline is dropped. */
static void read_line(const char *guide, char *buf, size_t size) {
  printf("%s", guide);
  buf[0] = '\0';
  if (fgets(buf, (int)size, stdin)) {
    size_t len = strlen(buf);
    if (len > 0 && buf[len - 1] == '\n')
      buf[len - 1] = '\0';
  }
}

int tl_chat(tl_model *m, const tl_tokenizer *tok, tl_sampler *smp, const char *cli_prompt,
            const char *cli_system, int steps) {
  char system[512] = "", user[512], rendered[1152];
  int *tokens = malloc(1152 * sizeof(int));
  if (!tokens) {
    fprintf(stderr, "te-llama: out of memory\n");
    return -1;
  }
  int user_turn = 1, n = 0, at = 0, next = 0, token, pos = 0;
  while (pos < steps) {
    if (user_turn) {
      if (pos == 0) {
        if (cli_system)
          snprintf(system, sizeof system, "%s", cli_system);
        else
          read_line("Enter system prompt (optional): ", system, sizeof system);
      }
      if (pos == 0 && cli_prompt)
        snprintf(user, sizeof user, "%s", cli_prompt);
      else
        read_line("User: ", user, sizeof user);
      if (pos == 0 && system[0])
        snprintf(rendered, sizeof rendered, "[INST] <<SYS>>\n%s\n<</SYS>>\n\n%s [/INST]", system,
                 user);
      else
        snprintf(rendered, sizeof rendered, "[INST] %s [/INST]", user);
      n = tl_encode(tok, rendered, 1, 0, tokens);
      at = 0;
      user_turn = 0;
      printf("Assistant: ");
    }
    token = at < n ? tokens[at++] : next;
    if (token == 2)
      user_turn = 1;
    float *logits;
    if (m->forward(m, &token, 1, pos, &logits)) {
      free(tokens);
      return model_failed(m);
    }
    next = tl_sample(smp, logits);
    pos++;
    if (at >= n && next != 2) {
      tl_print_piece(tl_decode(tok, token, next));
      fflush(stdout);
    }
    if (next == 2)
      printf("\n");
  }
  printf("\n");
  free(tokens);
  return 0;
}
