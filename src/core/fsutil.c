/* fsutil — atomic writes, bounded reads, and the one check of names and paths from outside (safe names,
 * paths that must resolve inside a directory). */
#include "core/fsutil.h"
#include "core/err.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int sd_mkdir_p(const char *path, int dir_of_file) {
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    if (dir_of_file) {
        char *slash = strrchr(buf, '/');
        if (!slash) return 0;
        *slash = 0;
    }
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return sd_err(SD_EIO, "cannot create directory %s: %s", buf, strerror(errno));
        *p = '/';
    }
    if (buf[0] && mkdir(buf, 0777) != 0 && errno != EEXIST)
        return sd_err(SD_EIO, "cannot create directory %s: %s", buf, strerror(errno));
    return 0;
}

int sd_write_file_atomic(const char *path, const void *data, size_t len) {
    SD_TRY(sd_mkdir_p(path, 1));
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (fd < 0) return sd_err(SD_EIO, "cannot write %s: %s", tmp, strerror(errno));
    const char *p = data;
    size_t left = len;
    while (left > 0) {
        ssize_t k = write(fd, p, left);
        if (k < 0) {
            if (errno == EINTR) continue;
            int e = errno;
            close(fd);
            unlink(tmp);
            return sd_err(SD_EIO, "cannot write %s: %s", path, strerror(e));
        }
        p += k;
        left -= (size_t)k;
    }
    if (fsync(fd) != 0 || close(fd) != 0) {
        int e = errno;
        unlink(tmp);
        return sd_err(SD_EIO, "cannot write %s: %s", path, strerror(e));
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return sd_err(SD_EIO, "cannot write %s: %s", path, strerror(e));
    }
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
