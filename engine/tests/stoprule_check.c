/* The stopping rule's arithmetic on known numbers (tests/test_stoprule.py):
 * the distribution-free CI of the median, the projected repetitions, and when
 * a target is out of reach. Prints each failed check; exits 1 if any. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../stoprule.h"

static int failed;

static void check(int ok, const char *what)
{
    if (!ok) printf("FAILED: %s\n", what), failed = 1;
}

int main(void)
{
    /* 1..101 in reverse: median 51; ranks floor(50.5 - 9.85) = 40 and
     * ceil(50.5 + 9.85) = 61 (0-based) bracket it: (62 - 41) / 2 / 51. */
    stop_state st = {0};
    double g[101 * 4];
    for (int i = 0; i < 101; i++) {
        double *r = g + 4 * i;
        r[0] = 0, r[1] = 101 - i, r[2] = NAN, r[3] = 1; /* start, end, no schedule (barrier), valid */
    }
    check(stop_add_batch(&st, PAT_COLL, g, 1, 101, NULL, 0) == 0, "101 valid samples, none invalid");
    check(fabs(stop_ci_halfwidth(&st) - 21.0 / 2 / 51) < 1e-12, "half-width of 1..101");
    stop_free(&st);
    stop_state few = {0};
    check(stop_add_batch(&few, PAT_COLL, g, 1, 5, NULL, 0) == 0 && isinf(stop_ci_halfwidth(&few)),
          "fewer than 6 samples: no interval");
    stop_free(&few);

    /* 100 done at ±20 %: ±2 % needs 100 * 10^2 repetitions. */
    check(fabs(stop_needed_reps(0.02, 100, 0.2) - 10000) < 1e-9, "projected repetitions");
    /* 250 done in 0.25 s at ±20 %: 25000 more at 1 ms each against a 1 s
     * budget is out of reach once a quarter of it is spent ... */
    check(stop_out_of_reach(0.02, 1.0, 1, 250, 0.2, 0.25) == 1,
          "25 s needed of a 1 s budget, a quarter spent: out of reach");
    check(stop_out_of_reach(0.02, 1.0, 1, 100, 0.2, 0.2) == 0, "before a quarter of the budget: keep going");
    /* ... but not when twice the budget would do, nor before reps_min, nor without a target. */
    check(stop_out_of_reach(0.02, 1.0, 1, 500, 0.03, 0.5) == 0, "1.1 s needed of a 1 s budget: keep going");
    check(stop_out_of_reach(0.02, 1.0, 0, 100, 0.2, 0.5) == 0, "reps_min not done: keep going");
    check(stop_out_of_reach(0.0, 1.0, 1, 100, 0.2, 0.5) == 0, "no target (ci_width 0): never");
    check(stop_out_of_reach(0.02, 1.0, 1, 3, INFINITY, 0.5) == 0, "no interval yet: keep going");
    if (!failed) printf("ok\n");
    return failed;
}
