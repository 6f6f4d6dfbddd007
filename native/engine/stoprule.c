/* SPDX-License-Identifier: BSD-3-Clause */
#include "stoprule.h"
#include "../clock/sorted.h"

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

/* P(B <= q) for B ~ Binomial(n, 1/2) and q below the median: the terms are
 * summed from q downward, where each is at most half the one before within
 * a few standard deviations, so a few dozen terms reach double precision. */
static double binomial_half_cdf(long n, long q)
{
    if (q < 0) return 0;
    if (q >= n) return 1;
    double term = exp(lgamma(n + 1.0) - lgamma(q + 1.0) - lgamma((double)(n - q) + 1) - (double)n * M_LN2);
    double sum = 0;
    for (long i = q; i >= 0; i--) {
        sum += term;
        if (term < sum * 1e-17) break;
        term *= (double)i / (double)(n - i + 1); /* pmf(i - 1) from pmf(i) */
    }
    return sum;
}

int stop_median_ci_ranks(long n, long *lo, long *hi)
{
    if (n < 6) return 0;
    /* As stats/summary.py's median_ci_ranks: q = j - 1 is the largest q with
     * P(B <= q) <= 2.5 %, from the normal approximation then checked exactly;
     * the interval is x_(j) .. x_(n - j + 1), 1-based. */
    const double tail = 0.025;
    long q = (long)floor(n / 2.0 - 1.96 * sqrt((double)n) / 2);
    if (q < 0) q = 0;
    while (q < n && binomial_half_cdf(n, q + 1) <= tail) q++;
    while (q >= 0 && binomial_half_cdf(n, q) > tail) q--;
    *lo = q;         /* 0-based j - 1 */
    *hi = n - 1 - q; /* 0-based n - j */
    return 1;
}

/* The samples added since the last check, sorted, merged into the sorted
 * ones before them: a check costs one pass over the samples, not a sort. */
static void sort_new(stop_state *st)
{
    long old = st->sorted, n = st->n;
    if (old == n) return;
    sort_doubles(st->values + old, (size_t)(n - old));
    if (old > 0 && st->values[old - 1] > st->values[old]) {
        /* Merged into the spare array, which then holds the samples: memory
         * touched before, not fresh pages at every check. */
        if (st->spare_cap < st->cap) {
            free(st->spare);
            st->spare = malloc((size_t)st->cap * sizeof *st->spare);
            st->spare_cap = st->cap;
        }
        double *merged = st->spare, *v = st->values;
        long i = 0, j = old, k = 0;
        while (i < old && j < n) merged[k++] = v[j] < v[i] ? v[j++] : v[i++];
        while (i < old) merged[k++] = v[i++];
        while (j < n) merged[k++] = v[j++];
        st->spare = v, st->values = merged;
        long cap = st->cap;
        st->cap = st->spare_cap, st->spare_cap = cap;
    }
    st->sorted = n;
}

double stop_ci_halfwidth(stop_state *st)
{
    long n = st->n, lo, hi;
    if (!stop_median_ci_ranks(n, &lo, &hi)) return INFINITY;
    sort_new(st);
    double median = n % 2 ? st->values[n / 2] : 0.5 * (st->values[n / 2 - 1] + st->values[n / 2]);
    st->median = median;
    if (!(median > 0)) return INFINITY;
    return 0.5 * (st->values[hi] - st->values[lo]) / median;
}

int stop_cross_rank(pattern pat, int window, long fallback_rep)
{
    return pat == PAT_ONEWAY || pat == PAT_PAIRS || (pat == PAT_COLL && (window || fallback_rep >= 0));
}

double stop_target(double ci_width, int cross_rank, double clock_err_s, double median)
{
    if (!cross_rank || !(ci_width > 0) || !(clock_err_s > 0) || !(median > 0)) return ci_width;
    return ci_width - fmin(clock_err_s / median, ci_width / 4);
}

double stop_needed_reps(double ci_width, long done, double hw)
{
    return (double)done * (hw / ci_width) * (hw / ci_width);
}

int stop_out_of_reach(double ci_width, double budget_s, int reps_min_done, long done, double hw, double elapsed)
{
    if (!(ci_width > 0) || !isfinite(hw) || !reps_min_done || done < 1) return 0;
    double needed_s = stop_needed_reps(ci_width, done, hw) * (elapsed / (double)done);
    if (elapsed >= budget_s / 4 && needed_s > 2 * budget_s) return 1;
    return elapsed >= budget_s / 8 && done >= STOP_FAR_REPS && needed_s > STOP_FAR_BUDGETS * budget_s;
}

double stop_next_batch(double ci_width, long done, double hw, double per_rep_s)
{
    if (!(ci_width > 0) || !isfinite(hw)) return fmax(1, 0.5 * (double)done);
    double least = fmax(fmax(1, done / 32.0), per_rep_s > 0 ? STOP_BATCH_MIN_S / per_rep_s : 1);
    return floor(fmin(least, fmax(1, (double)done)));
}

void stop_free(stop_state *st)
{
    free(st->values);
    free(st->spare);
}
