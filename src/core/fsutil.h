/* fsutil — files written so that nothing is ever half-written (temp file in the same directory, fsync,
 * rename) and nothing that is not a regular file is ever replaced. Names and paths from outside are checked here. */
#ifndef SD_FSUTIL_H
#define SD_FSUTIL_H

#include <stddef.h>

/* An output path (file or directory) must name something: "" and the root directory are SD_EUSAGE. */
int sd_out_path_ok(const char *path, const char *what);
/* mkdir -p for a directory the user named: path itself (dir_of_file = 0) or its directory part (1). */
int sd_mkdir_p(const char *path, int dir_of_file);
/* The same for a path inside the output directory root the user named (path must start with root/):
 * root is created as sd_mkdir_p does, then the directories between root and path; nothing outside it. */
int sd_mkdir_under(const char *root, const char *path, int dir_of_file);
/* The one way showdown writes an output file. A regular file (or none) at path is replaced atomically
 * (path.tmp.PID, fsync, rename; a symlink is followed and keeps pointing at the new file); a character
 * device or FIFO is written through in place; a directory, socket, block device or dangling symlink is
 * refused. The parent directory must exist (SD_EIO says which one does not). */
int sd_write_file_atomic(const char *path, const void *data, size_t len);
/* rm -r path (symlinks removed, never followed); 0 when it does not exist. */
int sd_remove_tree(const char *path);
/* Before the work that produces it: would sd_write_file_atomic accept path? SD_EUSAGE "what: ..." if not. */
int sd_out_file_check(const char *path, const char *what);
/* Remove the temp file of a write in progress; async-signal-safe (for signal handlers). */
void sd_fs_signal_cleanup(void);
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
