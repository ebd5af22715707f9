/* sig — how a long command stops on SIGINT/SIGTERM. The first signal is only recorded: the command sees it
 * at its next check, removes what it was writing and exits 128 + signal (130 SIGINT, 143 SIGTERM). A second
 * signal removes the temp file being written (core/fsutil) and exits at once. */
#ifndef SD_SIG_H
#define SD_SIG_H

#include <signal.h>

/* Install the handler for SIGINT and SIGTERM (idempotent). */
void sd_sig_install(void);
/* For commands with no point to stop at (score, verify, perf, collect): a signal removes the temp file
 * being written and exits 128 + signal at once (a child started by sd_run_self dies with the process). */
void sd_sig_install_immediate(void);
/* The signal received since sd_sig_install, or 0. */
int sd_sig_pending(void);
/* 128 + the signal received (SD_EXIT_INTR when none was: an SD_EINTR from elsewhere). */
int sd_sig_exit_code(void);
/* The flag itself, non-zero once a signal arrived (nn_train_opts.stop and the runner watch it). */
volatile sig_atomic_t *sd_sig_flag(void);
/* For tests and for a parent that forwards: forget the signal received. */
void sd_sig_reset(void);

#endif
