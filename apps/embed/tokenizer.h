/* tokenizer.h — BERT's WordPiece tokenizer (uncased), as the Hugging Face tokenizer of
 * all-MiniLM-L6-v2 runs it:
 *   1. clean: drop NUL, U+FFFD and control characters; white space becomes ' ';
 *   2. put spaces around CJK ideographs (each is a word);
 *   3. fold: NFD, drop nonspacing marks (accents), lowercase (unicode.h);
 *   4. split into words at white space, each punctuation character a word of its own;
 *   5. WordPiece: each word becomes the longest vocabulary entries from its left end, pieces
 *      after the first prefixed "##"; a word with a part that matches nothing, or of more than
 *      100 characters, is [UNK];
 *   6. [CLS] words [SEP], cut to the model's maximum length (the last pieces dropped).
 */
#ifndef TE_EMBED_TOKENIZER_H
#define TE_EMBED_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

typedef struct embed_vocab embed_vocab;

/* Reads vocab.txt (one token a line; a token's id is its line number from 0) and finds [CLS],
   [SEP], [UNK] and [PAD] in it. NULL with a message in err (naming the file and the line) when
   the file cannot be read, is empty, or lacks one of those tokens. embed_vocab_free frees. */
embed_vocab *embed_vocab_load(const char *path, char *err, size_t errlen);
void embed_vocab_free(embed_vocab *);
int32_t embed_vocab_size(const embed_vocab *);
/* The text of token id (NULL outside the vocabulary). */
const char *embed_vocab_token(const embed_vocab *, int32_t id);

/* Tokenizes text[0 .. len) (UTF-8) into ids (room for max_ids >= 2, [CLS] and [SEP]
   included). Returns the number of ids written; *full receives the length before the cut, so
   *full > the return value means the text was truncated. -1 when the text is not valid UTF-8,
   with the byte offset in err. */
int embed_tokenize(const embed_vocab *, const char *text, long len, int32_t *ids, int max_ids,
                   int *full, char *err, size_t errlen);

#endif
