/* sig — one SIGINT/SIGTERM handler for the long commands: record, stop at the next check, clean up. */
#include "core/sig.h"
#include "core/err.h"
#include "core/fsutil.h"

#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t g_sig;

static void on_signal(int sig) {
    if (g_sig) {   /* second signal (or a command that cannot stop in between): exit now */
        sd_fs_signal_cleanup();
        static const char msg[] = "\nshowdown: interrupted; exiting now\n";
        ssize_t k = write(2, msg, sizeof msg - 1);
        (void)k;
        _exit(128 + sig);
    }
    g_sig = sig;
}

static void on_signal_exit(int sig) {
    g_sig = sig;
    on_signal(sig);
}

static void install(void (*fn)(int)) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fn;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

void sd_sig_install(void) { install(on_signal); }
void sd_sig_install_immediate(void) { install(on_signal_exit); }

int sd_sig_pending(void) { return g_sig; }
int sd_sig_exit_code(void) { return g_sig ? 128 + g_sig : SD_EXIT_INTR; }
volatile sig_atomic_t *sd_sig_flag(void) { return &g_sig; }
void sd_sig_reset(void) { g_sig = 0; }
