/* safetensors.c — the .safetensors reader of safetensors.h. */
#define _POSIX_C_SOURCE 200809L /* mmap */

#include "safetensors.h"

#include <jansson.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

enum { MAX_HEADER = 100 << 20, MAX_DIMS = 8 };

struct st_file {
  char path[1024];
  const unsigned char *map;
  size_t size;
  const unsigned char *data; /* after the header */
  size_t data_size;
  json_t *header;
};

static const struct {
  const char *name;
  int bytes;
} dtypes[] = {{"F64", 8}, {"F32", 4}, {"F16", 2},  {"BF16", 2},    {"I64", 8},
              {"I32", 4}, {"I16", 2}, {"I8", 1},   {"U64", 8},     {"U32", 4},
              {"U16", 2}, {"U8", 1},  {"BOOL", 1}, {"F8_E4M3", 1}, {"F8_E5M2", 1}};

static int dtype_bytes(const char *name) {
  for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
    if (!strcmp(dtypes[i].name, name))
      return dtypes[i].bytes;
  return 0;
}

/* Checks one header entry; 0 or -1 with the message. */
static int check_entry(const st_file *f, const char *name, json_t *e, char *err, size_t errlen) {
  json_t *dt = json_object_get(e, "dtype"), *shape = json_object_get(e, "shape");
  json_t *off = json_object_get(e, "data_offsets");
  if (!json_is_object(e) || !json_is_string(dt) || !json_is_array(shape) || !json_is_array(off) ||
      json_array_size(off) != 2) {
    snprintf(err, errlen,
             "%s: tensor '%s': its header entry needs \"dtype\" (a string), \"shape\" (a list) "
             "and \"data_offsets\" (two integers)",
             f->path, name);
    return -1;
  }
  int bytes = dtype_bytes(json_string_value(dt));
  if (!bytes) {
    snprintf(err, errlen, "%s: tensor '%s': unknown dtype '%s'", f->path, name,
             json_string_value(dt));
    return -1;
  }
  size_t ndim = json_array_size(shape);
  uint64_t count = 1;
  for (size_t i = 0; i < ndim; i++) {
    json_t *d = json_array_get(shape, i);
    if (ndim > MAX_DIMS || !json_is_integer(d) || json_integer_value(d) < 0 ||
        (uint64_t)json_integer_value(d) > (1ull << 40) / count) {
      snprintf(err, errlen,
               "%s: tensor '%s': the shape must be at most %d non-negative integers "
               "of at most 2^40 elements in all",
               f->path, name, MAX_DIMS);
      return -1;
    }
    count *= (uint64_t)json_integer_value(d);
  }
  json_t *b = json_array_get(off, 0), *end = json_array_get(off, 1);
  json_int_t bv = json_integer_value(b), ev = json_integer_value(end);
  if (!json_is_integer(b) || !json_is_integer(end) || bv < 0 || ev < bv ||
      (uint64_t)ev > f->data_size) {
    snprintf(err, errlen,
             "%s: tensor '%s': data_offsets [%lld, %lld] are not a range inside the %zu bytes of "
             "data (a truncated or corrupt file?)",
             f->path, name, (long long)bv, (long long)ev, f->data_size);
    return -1;
  }
  if ((uint64_t)(ev - bv) != count * (uint64_t)bytes) {
    snprintf(err, errlen,
             "%s: tensor '%s': data_offsets hold %lld bytes, but its dtype and shape need %llu",
             f->path, name, (long long)(ev - bv), (unsigned long long)(count * (uint64_t)bytes));
    return -1;
  }
  return 0;
}

static int parse_header(st_file *f, char *err, size_t errlen) {
  if (f->size < 8) {
    snprintf(err, errlen, "%s: %zu bytes: too short for a safetensors file", f->path, f->size);
    return -1;
  }
  uint64_t n = 0;
  for (int i = 7; i >= 0; i--)
    n = n << 8 | f->map[i];
  if (n > MAX_HEADER || n > f->size - 8) {
    snprintf(err, errlen,
             "%s: the header length %llu exceeds the file (%zu bytes) or %d MB: not a "
             "safetensors file, or a truncated one",
             f->path, (unsigned long long)n, f->size, MAX_HEADER >> 20);
    return -1;
  }
  json_error_t jerr;
  f->header = json_loadb((const char *)f->map + 8, (size_t)n, JSON_REJECT_DUPLICATES, &jerr);
  if (!f->header || !json_is_object(f->header)) {
    snprintf(err, errlen, "%s: the header is not a JSON object: %s (line %d, column %d)", f->path,
             f->header ? "another JSON value" : jerr.text, jerr.line, jerr.column);
    return -1;
  }
  f->data = f->map + 8 + n;
  f->data_size = f->size - 8 - (size_t)n;
  const char *key;
  json_t *e;
  json_object_foreach(f->header, key, e) {
    if (strcmp(key, "__metadata__") != 0 && check_entry(f, key, e, err, errlen) < 0)
      return -1;
  }
  return 0;
}

st_file *st_open(const char *path, char *err, size_t errlen) {
  st_file *f = calloc(1, sizeof *f);
  if (!f) {
    snprintf(err, errlen, "%s: out of memory", path);
    return NULL;
  }
  snprintf(f->path, sizeof f->path, "%s", path);
  int fd = open(path, O_RDONLY);
  struct stat sb;
  if (fd < 0 || fstat(fd, &sb) < 0) {
    snprintf(err, errlen, "%s: cannot open the model file: %s", path, strerror(errno));
    if (fd >= 0)
      close(fd);
    free(f);
    return NULL;
  }
  f->size = (size_t)sb.st_size;
  void *map = f->size ? mmap(NULL, f->size, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
  close(fd);
  if (map == MAP_FAILED) {
    snprintf(err, errlen, "%s: cannot map the model file: %s", path, strerror(errno));
    free(f);
    return NULL;
  }
  f->map = map;
  if (parse_header(f, err, errlen) < 0) {
    st_close(f);
    return NULL;
  }
  return f;
}

void st_close(st_file *f) {
  if (!f)
    return;
  if (f->map)
    munmap((void *)f->map, f->size);
  json_decref(f->header);
  free(f);
}

static void shape_text(char *buf, size_t n, int ndim, const int64_t *shape) {
  size_t used = (size_t)snprintf(buf, n, "[");
  for (int i = 0; i < ndim && used < n; i++)
    used += (size_t)snprintf(buf + used, n - used, "%s%lld", i ? ", " : "", (long long)shape[i]);
  if (used < n)
    snprintf(buf + used, n - used, "]");
}

int st_read_f32(st_file *f, const char *name, int ndim, const int64_t shape[], float *dst,
                char *err, size_t errlen) {
  json_t *e = json_object_get(f->header, name);
  char want[128], got[128];
  shape_text(want, sizeof want, ndim, shape);
  if (!e || !strcmp(name, "__metadata__")) {
    snprintf(err, errlen, "%s: no tensor '%s' (f32 %s): is this all-MiniLM-L6-v2?", f->path, name,
             want);
    return -1;
  }
  const char *dt = json_string_value(json_object_get(e, "dtype"));
  json_t *sh = json_object_get(e, "shape");
  int64_t have[MAX_DIMS];
  int hn = (int)json_array_size(sh);
  for (int i = 0; i < hn; i++)
    have[i] = json_integer_value(json_array_get(sh, (size_t)i));
  shape_text(got, sizeof got, hn, have);
  if (strcmp(dt, "F32") != 0) {
    snprintf(err, errlen, "%s: tensor '%s' is %s; te-embed needs F32", f->path, name, dt);
    return -1;
  }
  int same = hn == ndim;
  for (int i = 0; same && i < ndim; i++)
    same = have[i] == shape[i];
  if (!same) {
    snprintf(err, errlen, "%s: tensor '%s' has shape %s; te-embed needs %s", f->path, name, got,
             want);
    return -1;
  }
  json_int_t begin = json_integer_value(json_array_get(json_object_get(e, "data_offsets"), 0));
  json_int_t end = json_integer_value(json_array_get(json_object_get(e, "data_offsets"), 1));
  memcpy(dst, f->data + begin, (size_t)(end - begin)); /* the data may be unaligned */
  return 0;
}
