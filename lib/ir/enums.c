/* enums.c — the words of te's public enums (scopes, thread tags, tail strategies), generated
 * from enums.def: the tables every printer and parser of those words reads, and the public
 * te_scope_name, te_thread_tag_name and te_tail_name.
 */
#include <string.h>

#include "ir.h"

/* Designated initializers: a line of enums.def out of the enum's order would leave a hole,
   which the count check in ir_enum_word turns into NULL rather than a wrong word. */
static const char *const scope_words[] = {
#define IR_SCOPE(E, word) [E] = word,
#include "enums.def"
};
static const char *const scope_enumerators[] = {
#define IR_SCOPE(E, word) [E] = #E,
#include "enums.def"
};
static const char *const tag_words[] = {
#define IR_THREAD_TAG(E, word) [E] = word,
#include "enums.def"
};
static const char *const tag_enumerators[] = {
#define IR_THREAD_TAG(E, word) [E] = #E,
#include "enums.def"
};
static const char *const tail_words[] = {
#define IR_TAIL(E, word) [E] = word,
#include "enums.def"
};
static const char *const tail_enumerators[] = {
#define IR_TAIL(E, word) [E] = #E,
#include "enums.def"
};

#define COUNT(a) ((int)(sizeof(a) / sizeof(a)[0]))
const ir_enum_words ir_scope_words = {"scope", COUNT(scope_words), scope_words, scope_enumerators};
const ir_enum_words ir_thread_tag_words = {"thread tag", COUNT(tag_words), tag_words,
                                           tag_enumerators};
const ir_enum_words ir_tail_words = {"tail strategy", COUNT(tail_words), tail_words,
                                     tail_enumerators};

const char *ir_enum_word(const ir_enum_words *t, int value) {
  return value >= 0 && value < t->count ? t->words[value] : NULL;
}

const char *ir_enum_enumerator(const ir_enum_words *t, int value) {
  return value >= 0 && value < t->count ? t->enumerators[value] : NULL;
}

int ir_enum_value(const ir_enum_words *t, const char *word) {
  for (int v = 0; word && v < t->count; v++)
    if (t->words[v] && strcmp(t->words[v], word) == 0)
      return v;
  return -1;
}

const char *te_scope_name(te_scope s) { return ir_enum_word(&ir_scope_words, (int)s); }
const char *te_thread_tag_name(te_thread_tag t) {
  return ir_enum_word(&ir_thread_tag_words, (int)t);
}
const char *te_tail_name(te_tail t) { return ir_enum_word(&ir_tail_words, (int)t); }
