/* replay_main.c — runs a fuzz target's LLVMFuzzerTestOneInput on files, without libFuzzer.
 *
 * Linked with each fuzz_*.c into fuzz_<name>_replay, built by every build (gcc included, the
 * ASan+UBSan one too), so that the seed corpus and every input that once crashed a target
 * (test/fuzz/regressions/<name>/) are replayed by plain CTest tests: a crash found by fuzzing
 * stays fixed without a clang build. Arguments are files or directories (their regular files, in
 * name order, not recursively); the target aborts on a failed check, so a zero exit means every
 * input passed.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "replay: cannot read %s\n", path);
    return 1;
  }
  size_t cap = 4096, n = 0;
  uint8_t *buf = malloc(cap);
  size_t got;
  while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) {
      uint8_t *bigger = realloc(buf, cap *= 2);
      if (!bigger)
        free(buf);
      buf = bigger;
    }
  }
  fclose(f);
  if (!buf) {
    fprintf(stderr, "replay: out of memory reading %s\n", path);
    return 1;
  }
  if (getenv("TE_FUZZ_REPLAY_VERBOSE"))
    fprintf(stderr, "replay: %s\n", path);
  LLVMFuzzerTestOneInput(buf, n);
  free(buf);
  return 0;
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Replays the regular files of dir in name order; returns the number of failures to read, and
   adds the files replayed to *count. */
static int replay_dir(const char *dir, int *count) {
  DIR *d = opendir(dir);
  if (!d) {
    fprintf(stderr, "replay: cannot open %s\n", dir);
    return 1;
  }
  char **names = NULL;
  size_t n = 0, cap = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.')
      continue;
    if (n == cap) {
      char **bigger = realloc(names, sizeof *names * (cap = cap ? 2 * cap : 64));
      if (!bigger)
        break;
      names = bigger;
    }
    size_t len = strlen(dir) + strlen(e->d_name) + 2;
    if (!(names[n] = malloc(len)))
      break;
    snprintf(names[n++], len, "%s/%s", dir, e->d_name);
  }
  closedir(d);
  if (n)
    qsort(names, n, sizeof *names, by_name);
  int bad = 0;
  for (size_t i = 0; i < n; i++) {
    struct stat sb;
    if (stat(names[i], &sb) == 0 && S_ISREG(sb.st_mode)) {
      bad += replay_file(names[i]);
      (*count)++;
    }
    free(names[i]);
  }
  free(names);
  return bad;
}

int main(int argc, char **argv) {
  int bad = 0, count = 0;
  for (int i = 1; i < argc; i++) {
    struct stat sb;
    if (stat(argv[i], &sb) != 0) {
      fprintf(stderr, "replay: no such file or directory: %s\n", argv[i]);
      bad++;
    } else if (S_ISDIR(sb.st_mode)) {
      bad += replay_dir(argv[i], &count);
    } else {
      bad += replay_file(argv[i]);
      count++;
    }
  }
  printf("replay: %d inputs passed%s\n", count - bad, bad ? ", some could not be read" : "");
  return bad ? 1 : 0;
}
