/* omp_policy — OpenMP's wait policy of this process: libgomp's threads spin between parallel regions (its default)
 * or sleep (passive). On small steps the two differ by up to 1.7x either way (docs/performance.md), so the policy is
 * a setting of every native measurement: chosen once as showdown starts, recorded as environment.omp_wait_policy,
 * and taken from a publication by verify --rerun. libgomp reads its environment once, when it loads: a policy is
 * set by re-executing this binary with it. */
#ifndef SD_OMP_POLICY_H
#define SD_OMP_POLICY_H

#include <stddef.h>

/* main, first thing: spin when no other task is runnable for a while, sleep otherwise; a user's OMP_WAIT_POLICY or
 * GOMP_SPINCOUNT is kept. May re-execute argv (kept for sd_omp_policy_adopt). */
void sd_omp_policy_init(char **argv);

/* This process's policy as environment.omp_wait_policy records it ("spin (libgomp default): ...", "passive: ...",
 * "OMP_WAIT_POLICY=active (from the environment)"), or "unknown". */
const char *sd_omp_policy_note(void);

/* The policy a note names, without the reason: "spin", "passive", or the user's setting ("OMP_WAIT_POLICY=active",
 * "GOMP_SPINCOUNT=1000"). 0 for an unknown or absent note. */
int sd_omp_policy_kind(const char *note, char *kind, size_t n);

/* Run this process under policy kind (sd_omp_policy_kind's), re-executing it with why as the recorded reason.
 * Returns 0 without re-executing when it already runs under kind, when the user set the policy (their setting
 * stands: a comparison names the difference), or when it was re-executed for a policy once already; an error
 * when execution failed. */
int sd_omp_policy_adopt(const char *kind, const char *why);

#endif
