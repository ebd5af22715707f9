/* fsutil — files written so that nothing is ever half-written: temp file in the same directory,
 * fsync, rename; parent directories created as needed. */
#ifndef SD_FSUTIL_H
#define SD_FSUTIL_H

#include <stddef.h>

/* mkdir -p for the directory part of path (dir_of_file = 1) or for path itself (0). */
int sd_mkdir_p(const char *path, int dir_of_file);
/* Write len bytes to path atomically: path.tmp.PID, fsync, rename. SD_EIO names path and the OS error. */
int sd_write_file_atomic(const char *path, const void *data, size_t len);
/* Read a whole file (bounded by max bytes, SD_ELIMIT past it); *out is NUL-terminated, caller frees. */
int sd_read_file(const char *path, size_t max, char **out, size_t *len);

#endif
