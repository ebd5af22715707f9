/* triad — the memory bandwidth this process sees: STREAM's triad a[i] = b[i] + s*c[i] over three arrays far
 * larger than the last-level cache, on every thread, best of repeats (as STREAM reports it). */
#ifndef SD_CORE_TRIAD_H
#define SD_CORE_TRIAD_H

#include <stddef.h>

/* Bytes per second of the triad over arrays of elems floats each with threads OpenMP threads (0: all), the best
 * of repeat timed passes after one untimed one. Counted as STREAM counts it: 3 × 4 × elems bytes a pass (two
 * reads, one write; a cache's write-allocate read is not counted). SD_ENOMEM when the arrays do not fit. */
int sd_triad_bandwidth(int threads, size_t elems, int repeat, double *bytes_per_s);

/* Bytes of the last-level cache as the kernel's sysfs lists it (the largest unified cache of cpu0), else as
 * sysconf says; 0 when neither knows. sysfs first: under a hypervisor cpuid may report the host's cache. */
double sd_llc_bytes(void);

#endif
