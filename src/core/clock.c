/* clock — monotonic and wall-clock seconds (core/clock.h). */
#include "core/clock.h"

#include <time.h>

static double seconds(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

double sd_now(void) { return seconds(CLOCK_MONOTONIC); }
double sd_wall_now(void) { return seconds(CLOCK_REALTIME); }
