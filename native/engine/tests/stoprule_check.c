/* SPDX-License-Identifier: BSD-3-Clause */
/* The stopping rule's arithmetic on known numbers (tests/mpi/test_stoprule.py):
 * the distribution-free CI of the median, the projected repetitions, the
 * next batch, when a target is out of reach, and the target of samples between ranks' clocks. Prints each failed check; exits 1 if any.
 * `stoprule-check ranks N...` prints "N lo hi" (0-based CI ranks) per N
 * instead, for the test to compare with Python's exact rule. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../stoprule.h"

static int failed;

static void check(int ok, const char *what)
{
    if (!ok) printf("FAILED: %s\n", what), failed = 1;
}

static int print_ranks(int argc, char **argv)
{
    for (int i = 2; i < argc; i++) {
        long n = atol(argv[i]), lo = -1, hi = -1;
        stop_median_ci_ranks(n, &lo, &hi);
        printf("%ld %ld %ld\n", n, lo, hi);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "ranks")) return print_ranks(argc, argv);
    /* 1..101 in reverse: median 51; the exact binomial rule takes x_(41)
     * and x_(61) (1-based; P(B <= 40) = 2.3 % <= 2.5 % < P(B <= 41)):
     * (61 - 41) / 2 / 51. */
    stop_state st = {0};
    double g[101 * 4];
    for (int i = 0; i < 101; i++) {
        double *r = g + 4 * i;
        r[0] = 0, r[1] = 101 - i, r[2] = NAN, r[3] = 1; /* start, end, no schedule (barrier), valid */
    }
    check(stop_add_batch(&st, PAT_COLL, g, 1, 101, NULL, 0) == 0, "101 valid samples, none invalid");
    check(fabs(stop_ci_halfwidth(&st) - 20.0 / 2 / 51) < 1e-12, "half-width of 1..101");
    stop_free(&st);
    /* The same samples in three batches, each checked: the same interval. */
    stop_state parts = {0};
    stop_add_batch(&parts, PAT_COLL, g + 4 * 60, 1, 41, NULL, 0);
    stop_ci_halfwidth(&parts);
    stop_add_batch(&parts, PAT_COLL, g, 1, 30, NULL, 0);
    stop_ci_halfwidth(&parts);
    stop_add_batch(&parts, PAT_COLL, g + 4 * 30, 1, 30, NULL, 0);
    check(fabs(stop_ci_halfwidth(&parts) - 20.0 / 2 / 51) < 1e-12 && parts.median == 51,
          "half-width of 1..101 added in three checked batches");
    for (long i = 1; i < parts.n; i++) check(parts.values[i - 1] <= parts.values[i], "merged samples in order");
    stop_free(&parts);
    /* 3000 shuffled samples in 12 checked batches, past the first capacity
     * (every merge reuses the spare array): as if added at once. */
    static double h[3000 * 4];
    for (long i = 0; i < 3000; i++) {
        double *r = h + 4 * i;
        r[0] = 0, r[1] = (double)((i * 1103) % 3000) + 1, r[2] = NAN, r[3] = 1;
    }
    stop_state once = {0}, many = {0};
    stop_add_batch(&once, PAT_COLL, h, 1, 3000, NULL, 0);
    double whole = stop_ci_halfwidth(&once);
    for (int b = 0; b < 12; b++) {
        stop_add_batch(&many, PAT_COLL, h + 4 * 250 * b, 1, 250, NULL, 0);
        stop_ci_halfwidth(&many);
    }
    check(stop_ci_halfwidth(&many) == whole && many.median == once.median, "12 checked batches: the same interval");
    int same = many.n == 3000;
    for (long i = 0; same && i < 3000; i++) same = many.values[i] == (double)(i + 1);
    check(same, "12 checked batches: every sample once, in order");
    stop_free(&once);
    stop_free(&many);
    stop_state few = {0};
    check(stop_add_batch(&few, PAT_COLL, g, 1, 5, NULL, 0) == 0 && isinf(stop_ci_halfwidth(&few)),
          "fewer than 6 samples: no interval");
    stop_free(&few);

    /* 100 done at ±20 %: ±2 % needs 100 * 10^2 repetitions. */
    check(fabs(stop_needed_reps(0.02, 100, 0.2) - 10000) < 1e-9, "projected repetitions");
    /* The next check after a 32nd of what was done, however far the target. */
    check(stop_next_batch(0.02, 100, 0.03, 1e-3) == 3 && stop_next_batch(0.02, 100, 0.2, 1e-3) == 3,
          "a 32nd of what was done, near the target or far from it");
    check(stop_next_batch(0.02, 3200, 0.0201, 1e-3) == 100, "3200 done: 100 more");
    check(stop_next_batch(0.02, 2000, 0.0201, 1e-6) == 1000, "and no shorter than STOP_BATCH_MIN_S (1 ms)");
    check(stop_next_batch(0.02, 10, 0.0201, 1e-5) == 10, "at most as many as were done (batches at most double)");
    check(stop_next_batch(0.02, 10, 0.0201, 1e-3) == 1, "at least one repetition");
    check(stop_next_batch(0.02, 10, INFINITY, 1e-3) == 5 && stop_next_batch(0.0, 100, 0.1, 1e-3) == 50,
          "no interval yet or no target: half of what was done");
    /* 250 done in 0.25 s at ±20 %: 25000 more at 1 ms each against a 1 s
     * budget is out of reach once a quarter of it is spent ... */
    check(stop_out_of_reach(0.02, 1.0, 1, 250, 0.2, 0.25) == 1,
          "25 s needed of a 1 s budget, a quarter spent: out of reach");
    check(stop_out_of_reach(0.02, 1.0, 1, 100, 0.15, 0.2) == 0,
          "11 s needed, before a quarter of the budget: keep going");
    /* ... sooner when it is far out of reach: more than 16 budgets after an
     * eighth of the budget and 40 repetitions (40 at 3.125 ms, ±30 %: 28 s) ... */
    check(stop_out_of_reach(0.02, 1.0, 1, 40, 0.3, 0.125) == 1, "28 s needed, an eighth spent: out of reach");
    check(stop_out_of_reach(0.02, 1.0, 1, 40, 0.3, 0.1) == 0, "28 s needed, before an eighth: keep going");
    check(stop_out_of_reach(0.02, 1.0, 1, 39, 0.3, 0.125) == 0, "28 s needed, 39 repetitions: keep going");
    /* ... but not when twice the budget would do, nor before reps_min, nor without a target. */
    check(stop_out_of_reach(0.02, 1.0, 1, 500, 0.03, 0.5) == 0, "1.1 s needed of a 1 s budget: keep going");
    check(stop_out_of_reach(0.02, 1.0, 0, 100, 0.2, 0.5) == 0, "reps_min not done: keep going");
    check(stop_out_of_reach(0.0, 1.0, 1, 100, 0.2, 0.5) == 0, "no target (ci_width 0): never");
    check(stop_out_of_reach(0.02, 1.0, 1, 3, INFINITY, 0.5) == 0, "no interval yet: keep going");

    /* Samples between ranks' clocks must be within the target by the clock's
     * residual (2 ns of 1 µs: 0.2%), by at most a quarter of it; others need not. */
    check(fabs(stop_target(0.02, 1, 2e-9, 1e-6) - 0.018) < 1e-12, "cross-rank: target less the residual");
    check(stop_target(0.02, 1, 9e-9, 273e-9) == 0.015, "cross-rank, residual 3% of the median: 3/4 of the target");
    check(stop_target(0.02, 0, 9e-9, 273e-9) == 0.02, "within one rank's clock: the target");
    check(stop_target(0.0, 1, 9e-9, 273e-9) == 0.0, "no target stays none");
    check(stop_target(0.02, 1, 0.0, 273e-9) == 0.02, "no residual (one rank): the target");
    check(stop_cross_rank(PAT_COLL, 1, -1) && !stop_cross_rank(PAT_COLL, 0, -1) &&
              stop_cross_rank(PAT_ONEWAY, 0, -1) && stop_cross_rank(PAT_PAIRS, 0, -1) &&
              !stop_cross_rank(PAT_PINGPONG, 1, -1) && !stop_cross_rank(PAT_BW, 1, -1),
          "cross-rank samples: window-started collectives, one-way, pairs");
    check(stop_cross_rank(PAT_COLL, 0, 40) && !stop_cross_rank(PAT_PINGPONG, 0, 40),
          "a collective fallen back to barrier starts keeps its window-started samples");
    if (!failed) printf("ok\n");
    return failed;
}
