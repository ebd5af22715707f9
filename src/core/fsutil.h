/* fsutil — files written so that nothing is ever half-written: temp file in the same directory,
 * fsync, rename; parent directories created as needed. Names and paths from outside are checked here. */
#ifndef SD_FSUTIL_H
#define SD_FSUTIL_H

#include <stddef.h>

/* mkdir -p for the directory part of path (dir_of_file = 1) or for path itself (0). */
int sd_mkdir_p(const char *path, int dir_of_file);
/* Write len bytes to path atomically: path.tmp.PID, fsync, rename. SD_EIO names path and the OS error. */
int sd_write_file_atomic(const char *path, const void *data, size_t len);
/* Read a whole file (bounded by max bytes, SD_ELIMIT past it); *out is NUL-terminated, caller frees. */
int sd_read_file(const char *path, size_t max, char **out, size_t *len);

/* Names from outside (workload, framework, template, repository owner/name) that become one path
 * component: letters, digits and . _ - + only, not starting with '.', at most SD_NAME_MAX bytes; so no
 * "..", no '/', no absolute path. what names the value in the one-line error (SD_EINPUT / SD_ELIMIT). */
#define SD_NAME_MAX 128
int sd_safe_name(const char *name, const char *what);
/* Does path (which may not exist yet: then its parent must) resolve, symlinks followed, inside dir?
 * 0 if so; SD_EINPUT "PATH leaves DIR (it resolves to ...)" if not; SD_EIO if dir cannot be resolved. */
int sd_path_within(const char *dir, const char *path);

#endif
