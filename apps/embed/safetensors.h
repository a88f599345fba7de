/* safetensors.h — reading a .safetensors file (the Hugging Face weight format): an 8-byte
 * little-endian header length, a JSON header (parsed with jansson) mapping each tensor's name
 * to its dtype, shape and byte range, then the data. st_open checks the whole header against
 * the file — every entry's dtype is known, its shape is a list of non-negative integers, its
 * byte range lies inside the data and holds exactly shape x dtype size bytes — so that a
 * truncated or corrupt file is refused with the entry and the rule it breaks in the message.
 */
#ifndef TE_EMBED_SAFETENSORS_H
#define TE_EMBED_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

typedef struct st_file st_file;

/* Maps the file and checks its header; NULL with the reason in err (naming the file). */
st_file *st_open(const char *path, char *err, size_t errlen);
void st_close(st_file *);

/* Copies the tensor called name, which must be F32 of exactly the given shape, into dst
   (room for the product of the shape's extents). 0 on success; -1 with a message naming the
   tensor and what it has instead (missing, another dtype, another shape). */
int st_read_f32(st_file *, const char *name, int ndim, const int64_t shape[], float *dst, char *err,
                size_t errlen);

#endif
