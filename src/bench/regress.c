/* regress — nightly's regression check (regress.h). */
#include "bench/regress.h"
#include "bench/results.h"

#include <stdio.h>
#include <string.h>

static const char *str(const json_t *v) { return json_is_string(v) ? json_string_value(v) : ""; }

int sd_regress_compare(const json_t *cur, const json_t *prev, double thr, json_t *regs, sd_regress_note note, void *user) {
    int n = 0;
    size_t i, j;
    const json_t *c, *p;
    sd_results_foreach(cur, i, c) {
        sd_run_view vc;
        sd_run_view_of(c, &vc);
        if (strcmp(str(vc.status), "ok")) continue;
        sd_results_foreach(prev, j, p) {
            sd_run_view vp;
            sd_run_view_of(p, &vp);
            if (strcmp(str(vp.status), "ok") || strcmp(str(vc.workload), str(vp.workload)) ||
                strcmp(str(vc.implementation), str(vp.implementation)) || strcmp(str(vc.backend), str(vp.backend)))
                continue;
            const char *kc, *kp;
            sd_stat sc, sp;
            if (!sd_run_epoch_time(c, &sc, &kc) || !sd_run_epoch_time(p, &sp, &kp) || strcmp(kc, kp)) continue;
            double nm = sc.median, om = sp.median, omax = sp.max;
            double pct = om > 0 ? (nm - om) / om * 100 : 0;
            int reg = pct > thr && nm > omax;
            char line[1024];
            snprintf(line, sizeof line, "%s/%s/%s %s: %.4g s (was %.4g s, max %.4g): %+.1f%%%s", str(vc.workload),
                     str(vc.implementation), str(vc.backend), kc, nm, om, omax, pct, reg ? "  REGRESSION" : "");
            if (note) note(user, line);
            if (reg) {
                json_array_append_new(regs, json_pack("{s:s,s:s,s:s,s:s,s:f,s:f,s:f,s:f,s:f}", "workload", str(vc.workload),
                                                      "implementation", str(vc.implementation), "backend",
                                                      str(vc.backend), "metric", kc, "median", nm, "previous_median", om,
                                                      "previous_max", omax, "slower_pct", pct, "threshold_pct", thr));
                n++;
            }
            break;
        }
    }
    return n;
}
