/* clock — the clocks of showdown, one of each kind: monotonic seconds for durations, timeouts and back-off
 * (unaffected by changes to the wall clock), and wall-clock seconds for deadlines a server gives as a date. */
#ifndef SD_CLOCK_H
#define SD_CLOCK_H

/* Seconds since an arbitrary fixed point (CLOCK_MONOTONIC); only differences mean anything. */
double sd_now(void);
/* Seconds since the Unix epoch (CLOCK_REALTIME): for times that come as dates, such as a rate limit's
 * reset time in an HTTP header. */
double sd_wall_now(void);

#endif
