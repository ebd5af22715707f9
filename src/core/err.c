/* err — the thread-local error message behind showdown's status codes. */
#include "core/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char g_msg[2048];

static int vset(const char *prefix, int code, const char *fmt, va_list ap) {
    char tmp[2048];
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    if (prefix) snprintf(g_msg, sizeof g_msg, "%s%s", prefix, tmp);
    else snprintf(g_msg, sizeof g_msg, "%s", tmp);
    return code;
}

int sd_err(int code, const char *fmt, ...) {
    va_list ap; va_start(ap, fmt);
    vset(NULL, code, fmt, ap);
    va_end(ap);
    return code;
}

int sd_err_at(const char *file, int line, int code, const char *fmt, ...) {
    char where[512];
    const char *base = strrchr(file, '/');
    snprintf(where, sizeof where, "%s:%d: ", base ? base + 1 : file, line);
    va_list ap; va_start(ap, fmt);
    vset(where, code, fmt, ap);
    va_end(ap);
    return code;
}

int sd_err_prefix(int code, const char *fmt, ...) {
    char old[2048], pre[1024];
    snprintf(old, sizeof old, "%s", g_msg);
    va_list ap; va_start(ap, fmt);
    vsnprintf(pre, sizeof pre, fmt, ap);
    va_end(ap);
    snprintf(g_msg, sizeof g_msg, "%s: %s", pre, old);
    return code;
}

const char *sd_errmsg(void) { return g_msg[0] ? g_msg : "unknown error"; }
void sd_err_clear(void) { g_msg[0] = 0; }

int sd_exit_code(int status) {
    switch (status) {
    case SD_OK: return SD_EXIT_OK;
    case SD_EUSAGE: case SD_ENOTIMPL: return SD_EXIT_USAGE;
    case SD_EINPUT: case SD_ELIMIT: return SD_EXIT_INPUT;
    case SD_ENODEV: case SD_EUNSUPPORTED: return SD_EXIT_NODEV;
    case SD_ENET: return SD_EXIT_NET;
    case SD_EBUSY: return SD_EXIT_BUSY;
    case SD_EINTR: return SD_EXIT_INTR;
    default: return SD_EXIT_FAIL;
    }
}

const char *sd_status_name(int status) {
    switch (status) {
    case SD_OK: return "ok";
    case SD_EUSAGE: return "usage";
    case SD_EINPUT: return "bad input";
    case SD_EIO: return "i/o";
    case SD_ENOMEM: return "out of memory";
    case SD_ENODEV: return "no device";
    case SD_EUNSUPPORTED: return "unsupported";
    case SD_EBACKEND: return "back-end";
    case SD_ENET: return "network";
    case SD_EBUSY: return "busy";
    case SD_ENOTIMPL: return "not implemented";
    case SD_EINTR: return "interrupted";
    case SD_ELIMIT: return "limit";
    case SD_ETIMEOUT: return "timed out";
    default: return "error";
    }
}
