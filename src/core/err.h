/* err — showdown's one error convention.
 * Functions return int: 0 ok, a negative SD_E* code on failure. The message is set once, where the
 * failure happens (sd_err), and propagated unchanged; callers print sd_errmsg(). Thread-local. */
#ifndef SD_ERR_H
#define SD_ERR_H

#include <stddef.h>

enum sd_status {
    SD_OK = 0,
    SD_ERROR = -1,       /* internal or unexpected failure */
    SD_EUSAGE = -2,      /* bad command line */
    SD_EINPUT = -3,      /* bad input file: spec, data set, results, scoring data */
    SD_EIO = -4,         /* cannot read/write a file */
    SD_ENOMEM = -5,
    SD_ENODEV = -6,      /* requested back-end or device not available here */
    SD_EUNSUPPORTED = -7,/* operation not supported by this back-end/build */
    SD_EBACKEND = -8,    /* a library call (oneDNN, CUDA, cuDNN, cuBLAS) failed */
    SD_ENET = -9,        /* network failure after retries */
    SD_EBUSY = -10,      /* a lock is held by another run */
    SD_ENOTIMPL = -11,   /* command or feature not built yet */
    SD_EINTR = -12,      /* interrupted by a signal */
    SD_ELIMIT = -13,     /* an input exceeds a documented bound */
    SD_ETIMEOUT = -14,   /* a child ran past its time bound and was killed */
};

/* Exit codes, documented in README.md. */
enum sd_exit {
    SD_EXIT_OK = 0,
    SD_EXIT_FAIL = 1,        /* runtime failure */
    SD_EXIT_USAGE = 2,       /* bad command line, or command not built yet */
    SD_EXIT_INPUT = 3,       /* bad input file */
    SD_EXIT_NODEV = 4,       /* requested back-end/device unavailable */
    SD_EXIT_MISMATCH = 5,    /* verify: a comparable cell did not reproduce */
    SD_EXIT_REGRESSION = 6,  /* nightly: a regression was flagged */
    SD_EXIT_BUSY = 7,        /* another run holds the lock */
    SD_EXIT_NET = 8,         /* network failure */
    SD_EXIT_NOTCOMPARABLE = 9, /* verify: nothing failed to reproduce, but some cells could not be checked */
    SD_EXIT_INTR = 130,      /* interrupted */
};

/* Set the message (printf-style) and return code. It overwrites: call it once, at the failure. */
int sd_err(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Same, with the source location prefixed (used by the CHECK macros). */
int sd_err_at(const char *file, int line, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Like sd_err but prefixes the current message ("ctx: old message"); for adding a file name. */
int sd_err_prefix(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *sd_errmsg(void);
void sd_err_clear(void);
int sd_exit_code(int status);
const char *sd_status_name(int status);

/* Propagate a negative status from a call. */
#define SD_TRY(expr) do { int sd_rc_ = (expr); if (sd_rc_ < 0) return sd_rc_; } while (0)
/* Same, but jump to the function's cleanup label with rc set. */
#define SD_TRY_GOTO(rc, expr, label) do { (rc) = (expr); if ((rc) < 0) goto label; } while (0)

/* The one CHECK generator: `ok` decides success of the stored result `r` of `call`; on failure the
 * message names the call, the library's code and text, the file and line, and a hint. Returns. */
#define SD_CHECK_GEN(lib, type, call, ok, code_of, text_of, hint) do {                          \
        type r = (call);                                                                          \
        if (!(ok)) return sd_err_at(__FILE__, __LINE__, SD_EBACKEND, "%s: %s returned %d (%s)%s%s", \
                                    lib, #call, (int)(code_of), (text_of),                        \
                                    (hint)[0] ? "\nHINT: " : "", (hint));                         \
    } while (0)

/* Allocation that reports. */
#define SD_ALLOC_CHECK(p) do { if (!(p)) return sd_err_at(__FILE__, __LINE__, SD_ENOMEM, "out of memory"); } while (0)

#endif
