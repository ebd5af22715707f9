/* fsutil — safe writes (a regular file replaced atomically; a device or FIFO written through; anything else
 * refused, never replaced), bounded reads, and the one check of names and paths from outside (safe names,
 * paths that must resolve inside a directory). */
#define _XOPEN_SOURCE 700   /* nftw */
#include "core/fsutil.h"
#include "core/err.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int sd_out_path_ok(const char *path, const char *what) {
    if (!path || !path[0]) return sd_err(SD_EUSAGE, "%s: an empty path (give a file or directory name)", what);
    char rp[PATH_MAX];
    const char *p = path;
    while (*p == '/') p++;
    /* "/", "//", and anything that resolves to the root directory: an output there would scatter over / */
    if (!*p || (realpath(path, rp) && strcmp(rp, "/") == 0))
        return sd_err(SD_EUSAGE, "%s '%s': the root directory is not an output path", what, path);
    return 0;
}

/* mkdir each missing component of buf from the one starting at from (earlier ones must exist). */
static int mkdirs_from(char *buf, size_t from) {
    for (char *p = buf + (from ? from : 1); *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return sd_err(SD_EIO, "cannot create directory %s: %s", buf, strerror(errno));
        *p = '/';
    }
    if (buf[0] && mkdir(buf, 0777) != 0 && errno != EEXIST)
        return sd_err(SD_EIO, "cannot create directory %s: %s", buf, strerror(errno));
    struct stat st;
    if (buf[0] && (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode)))
        return sd_err(SD_EIO, "cannot create directory %s: not a directory", buf);
    return 0;
}

int sd_mkdir_p(const char *path, int dir_of_file) {
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) return sd_err(SD_ELIMIT, "path too long: %.60s...", path);
    if (dir_of_file) {
        char *slash = strrchr(buf, '/');
        if (!slash || slash == buf) return 0;   /* the current or the root directory: exists */
        *slash = 0;
    }
    SD_TRY(sd_out_path_ok(buf, "output directory"));
    return mkdirs_from(buf, 0);
}

int sd_mkdir_under(const char *root, const char *path, int dir_of_file) {
    size_t n = strlen(root);
    while (n > 1 && root[n - 1] == '/') n--;
    if (strncmp(path, root, n) != 0 || (path[n] != '/' && path[n] != 0))
        return sd_err(SD_ERROR, "%s is not inside the output directory %s", path, root);
    SD_TRY(sd_mkdir_p(root, 0));
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) return sd_err(SD_ELIMIT, "path too long: %.60s...", path);
    if (dir_of_file) {
        char *slash = strrchr(buf, '/');
        if (!slash || (size_t)(slash - buf) < n) return 0;
        *slash = 0;
    }
    return mkdirs_from(buf, n);
}

/* The temp file being written, for sd_fs_signal_cleanup (a handler may run between open and rename). */
static char g_tmp[PATH_MAX + 32];
static volatile sig_atomic_t g_tmp_live;

void sd_fs_signal_cleanup(void) {
    if (g_tmp_live) unlink(g_tmp);
}

static int write_all(int fd, const void *data, size_t len) {
    const char *p = data;
    while (len > 0) {
        ssize_t k = write(fd, p, len);
        if (k < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += k;
        len -= (size_t)k;
    }
    return 0;
}

/* A character device or FIFO (/dev/null, /dev/stdout, a pipe): written in place, never replaced. */
static int write_through(const char *path, const void *data, size_t len) {
    int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) return sd_err(SD_EIO, "cannot write %s: %s", path, strerror(errno));
    if (write_all(fd, data, len) != 0) {
        int e = errno;
        close(fd);
        return sd_err(SD_EIO, "cannot write %s: %s", path, strerror(e));
    }
    if (close(fd) != 0) return sd_err(SD_EIO, "cannot write %s: %s", path, strerror(errno));
    return 0;
}

/* What sd_write_file_atomic will do with path: 1 replace, 2 write through, or an error (nothing written). */
static int out_kind(const char *path, char *real) {
    struct stat st;
    if (lstat(path, &st) == 0) {
        if (S_ISLNK(st.st_mode)) {
            /* a symlink stays: the file it names is what gets written */
            if (stat(path, &st) != 0 || !realpath(path, real))
                return sd_err(SD_EIO, "cannot write %s: a symlink to a missing file (%s); not replacing it", path,
                              strerror(errno));
        }
        if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return 2;
        if (S_ISDIR(st.st_mode)) return sd_err(SD_EIO, "cannot write %s: it is a directory", path);
        if (!S_ISREG(st.st_mode))
            return sd_err(SD_EIO, "cannot write %s: not a regular file, character device or FIFO; not replacing it", path);
        return 1;
    }
    if (errno != ENOENT) return sd_err(SD_EIO, "cannot write %s: %s", path, strerror(errno));
    char dir[PATH_MAX];
    if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir) return sd_err(SD_ELIMIT, "path too long: %.60s...", path);
    char *slash = strrchr(dir, '/');
    if (!slash) return 1;
    if (slash == dir) slash[1] = 0;
    else *slash = 0;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return sd_err(SD_EIO, "cannot write %s: directory %s does not exist", path, dir);
    return 1;
}

int sd_out_file_check(const char *path, const char *what) {
    char real[PATH_MAX];
    if (sd_out_path_ok(path, what) < 0) return SD_EUSAGE;
    int k = out_kind(path, real);
    return k < 0 ? sd_err_prefix(SD_EUSAGE, "%s", what) : 0;
}

int sd_write_file_atomic(const char *path, const void *data, size_t len) {
    SD_TRY(sd_out_path_ok(path, "output file"));
    char real[PATH_MAX];
    real[0] = 0;
    int kind = out_kind(path, real);
    if (kind < 0) return kind;
    const char *target = real[0] ? real : path;
    if (kind == 2) return write_through(target, data, len);
    char tmp[sizeof g_tmp];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", target, (long)getpid()) >= (int)sizeof tmp)
        return sd_err(SD_ELIMIT, "path too long: %.60s...", path);
    memcpy(g_tmp, tmp, sizeof tmp);
    g_tmp_live = 1;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno == EEXIST && unlink(tmp) == 0)   /* left by an earlier process with this pid */
        fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) {
        int e = errno;
        g_tmp_live = 0;
        if (e == ENOENT) {
            char *slash = strrchr(tmp, '/');
            if (slash) *slash = 0;
            return sd_err(SD_EIO, "cannot write %s: directory %s does not exist", path, slash ? tmp : ".");
        }
        return sd_err(SD_EIO, "cannot write %s: %s", path, strerror(e));
    }
    int e = 0;
    if (write_all(fd, data, len) != 0 || fsync(fd) != 0) e = errno;
    if (close(fd) != 0 && !e) e = errno;
    if (!e && rename(tmp, target) != 0) e = errno;
    if (e) unlink(tmp);
    g_tmp_live = 0;
    if (e) return sd_err(SD_EIO, "cannot write %s: %s", path, strerror(e));
    return 0;
}

static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb; (void)flag; (void)ftw;
    return remove(p) != 0 && errno != ENOENT ? -1 : 0;
}

int sd_remove_tree(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0) return errno == ENOENT ? 0 : sd_err(SD_EIO, "cannot remove %s: %s", path, strerror(errno));
    if (nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
        return sd_err(SD_EIO, "cannot remove %s: %s", path, strerror(errno));
    return 0;
}

int sd_read_file(const char *path, size_t max, char **out, size_t *len) {
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return sd_err(SD_EIO, "cannot read %s: %s", path, strerror(errno));
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap + 1);
    if (!buf) { fclose(f); return sd_err(SD_ENOMEM, "out of memory reading %s", path); }
    for (;;) {
        if (n == cap) {
            if (cap >= max) { free(buf); fclose(f); return sd_err(SD_ELIMIT, "%s: larger than %zu bytes", path, max); }
            cap = cap * 2 > max ? max : cap * 2;
            char *nb = realloc(buf, cap + 1);
            if (!nb) { free(buf); fclose(f); return sd_err(SD_ENOMEM, "out of memory reading %s", path); }
            buf = nb;
        }
        size_t k = fread(buf + n, 1, cap - n, f);
        n += k;
        if (k == 0) break;
    }
    if (ferror(f)) { int e = errno; free(buf); fclose(f); return sd_err(SD_EIO, "cannot read %s: %s", path, strerror(e)); }
    fclose(f);
    if (n > max) { free(buf); return sd_err(SD_ELIMIT, "%s: larger than %zu bytes", path, max); }
    buf[n] = 0;
    *out = buf;
    if (len) *len = n;
    return 0;
}

int sd_safe_name(const char *name, const char *what) {
    size_t n = strlen(name);
    if (n == 0) return sd_err(SD_EINPUT, "%s: an empty name", what);
    if (n > SD_NAME_MAX) return sd_err(SD_ELIMIT, "%s '%.40s...': longer than %d bytes", what, name, SD_NAME_MAX);
    if (name[0] == '.') return sd_err(SD_EINPUT, "%s '%s': a name may not start with '.'", what, name);
    for (const char *p = name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_' ||
              *p == '-' || *p == '.' || *p == '+'))
            return sd_err(SD_EINPUT, "%s '%s': a name holds only letters, digits and . _ - + (no '/')", what, name);
    return 0;
}

/* realpath of path, or of its parent directory + the last component when path does not exist yet. */
static int resolve(const char *path, char *out) {
    if (realpath(path, out)) return 0;
    if (errno != ENOENT) return -1;
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) return -1;
    char *slash = strrchr(buf, '/');
    const char *last = slash ? slash + 1 : buf;
    if (!*last || strcmp(last, ".") == 0 || strcmp(last, "..") == 0) return -1;
    char parent[PATH_MAX];
    if (slash == buf) snprintf(parent, sizeof parent, "/");
    else if (slash) { *slash = 0; snprintf(parent, sizeof parent, "%s", buf); }
    else snprintf(parent, sizeof parent, ".");
    char rp[PATH_MAX];
    if (!realpath(parent, rp)) return -1;
    if (snprintf(out, PATH_MAX, "%s/%s", strcmp(rp, "/") ? rp : "", last) >= PATH_MAX) return -1;
    return 0;
}

int sd_path_within(const char *dir, const char *path) {
    char rd[PATH_MAX], rp[PATH_MAX];
    if (!realpath(dir, rd)) return sd_err(SD_EIO, "cannot resolve directory %s: %s", dir, strerror(errno));
    if (resolve(path, rp) != 0) return sd_err(SD_EIO, "cannot resolve %s: %s", path, strerror(errno));
    size_t n = strlen(rd);
    if (strcmp(rd, "/") == 0 || (strncmp(rp, rd, n) == 0 && (rp[n] == '/' || rp[n] == 0))) return 0;
    return sd_err(SD_EINPUT, "%s leaves %s (it resolves to %s)", path, dir, rp);
}
