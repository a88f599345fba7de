/* tokenizer.h — llama2.c's byte-pair tokenizer (tokenizer.bin), as its run.c encodes and
 * decodes, so that te-llama feeds and prints the same tokens.
 *
 * The file: int32 max_token_length, then vocab_size records of f32 score, int32 length and
 * that many bytes (the vocabulary size is the model's; the file does not record it).
 * Ids 0, 1, 2 are <unk>, <s> (BOS), </s> (EOS); ids 3..258 are the bytes 0x00..0xFF.
 */
#ifndef TL_TOKENIZER_H
#define TL_TOKENIZER_H
#include <stddef.h>

typedef struct {
  int vocab_size, max_token_length;
  char **vocab;
  float *scores;
  int *sorted; /* ids sorted by their strings, for lookups */
  char byte_pieces[256][2];
} tl_tokenizer;

/* 0, or -1 with a message in err (a missing, truncated or malformed file; nothing held). */
int tl_tokenizer_open(const char *path, int vocab_size, tl_tokenizer *, char *err, size_t errlen);
void tl_tokenizer_close(tl_tokenizer *);

/* Encodes text as run.c does: [BOS], a dummy-prefix " " token for non-empty text, each UTF-8
   code point's token (else its bytes' tokens), then the best-scoring merges of neighbours until
   none applies, [EOS]. tokens must hold strlen(text) + 3 ids. Returns the count, -1 when out
   of memory. */
int tl_encode(const tl_tokenizer *, const char *text, int bos, int eos, int *tokens);

/* The text of token after prev: without its leading space after BOS, a "<0xHH>" piece as that
   byte. Owned by the tokenizer. */
const char *tl_decode(const tl_tokenizer *, int prev, int token);

/* Prints a piece unless it is a single unprintable byte (run.c's safe_printf). */
void tl_print_piece(const char *piece);

#endif
