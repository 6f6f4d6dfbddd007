#include "stoprule.h"
#include "sorted.h"

#include <math.h>
#include <stdlib.h>

static void push(stop_state *st, double v)
{
    if (st->n == st->cap) {
        st->cap = st->cap ? 2 * st->cap : 1024;
        st->values = realloc(st->values, (size_t)st->cap * sizeof *st->values);
    }
    st->values[st->n++] = v;
}

#define REC(r, i, k) g[((size_t)(r) * nrep + (i)) * 4 + (k)]
enum { START, END, SCHED, VALID };

static int keep(stop_state *st, int ok, double v)
{
    if (ok && isfinite(v)) push(st, v);
    else st->invalid++;
    return !(ok && isfinite(v));
}

long stop_add_batch(stop_state *st, pattern pat, const double *g, int np, long nrep,
                    const int *pairs, int npairs)
{
    long bad = 0;
    for (long i = 0; i < nrep; i++) {
        if (pat == PAT_COLL) {
            double worst = -INFINITY;
            int ok = 1, window = isfinite(REC(0, i, SCHED));
            for (int r = 0; r < np; r++) {
                double t = window ? REC(r, i, END) - REC(0, i, SCHED) : REC(r, i, END) - REC(r, i, START);
                if (t > worst) worst = t;
                ok &= REC(r, i, VALID) != 0;
            }
            bad += keep(st, ok, worst);
            continue;
        }
        for (int k = 0; k < npairs; k++) {
            int a = pairs[2 * k], b = pairs[2 * k + 1];
            int ok = REC(a, i, VALID) != 0 && REC(b, i, VALID) != 0;
            switch (pat) {
            case PAT_PINGPONG: bad += keep(st, ok, 0.5 * (REC(a, i, END) - REC(a, i, START))); break;
            case PAT_BW: bad += keep(st, ok, REC(a, i, END) - REC(a, i, START)); break;
            case PAT_ONEWAY: bad += keep(st, ok, REC(b, i, END) - REC(a, i, START)); break;
            default:
                bad += keep(st, ok, REC(b, i, END) - REC(a, i, START));
                bad += keep(st, ok, REC(a, i, END) - REC(b, i, START));
            }
        }
    }
    return bad;
}

double stop_ci_halfwidth(stop_state *st)
{
    long n = st->n;
    if (n < 6) return INFINITY;
    sort_doubles(st->values, (size_t)n);
    /* Order statistics bracketing the median: normal approximation of the
     * binomial(n, 1/2) rank distribution. */
    double h = 1.96 * sqrt((double)n) / 2;
    long lo = (long)floor(n / 2.0 - h), hi = (long)ceil(n / 2.0 + h);
    if (lo < 0) lo = 0;
    if (hi > n - 1) hi = n - 1;
    double median = n % 2 ? st->values[n / 2] : 0.5 * (st->values[n / 2 - 1] + st->values[n / 2]);
    if (!(median > 0)) return INFINITY;
    return 0.5 * (st->values[hi] - st->values[lo]) / median;
}

double stop_needed_reps(double ci_width, long done, double hw)
{
    return (double)done * (hw / ci_width) * (hw / ci_width);
}

int stop_out_of_reach(double ci_width, double budget_s, int reps_min_done, long done, double hw, double elapsed)
{
    if (!(ci_width > 0) || !isfinite(hw) || !reps_min_done || done < 1 || elapsed < budget_s / 4) return 0;
    return stop_needed_reps(ci_width, done, hw) * (elapsed / (double)done) > 2 * budget_s;
}

void stop_free(stop_state *st) { free(st->values); }
