/* SPDX-License-Identifier: BSD-3-Clause */
/* The stopping rule, evaluated on rank 0 between batches of repetitions:
 * samples from every rank's timestamps (on the current global clock), then
 * the 95% confidence interval of their median. */
#ifndef MPISCOPE_STOPRULE_H
#define MPISCOPE_STOPRULE_H

#include "bench.h"

/* Why a series ended (recorded as the block's "stop"). */
typedef enum { STOP_NONE, STOP_CI, STOP_REPS_MAX, STOP_BUDGET, STOP_SKIPPED, STOP_OUT_OF_REACH } stop_reason;

/* How a series went, as its block records it. */
typedef struct series_outcome {
    long reps, invalid;
    stop_reason stop;
    double window_s;     /* the last batch's window (window starts) */
    long fallback_rep;   /* first repetition started by a barrier after window starts failed; -1: none */
    long late_arrived;   /* this rank's window starts it reached after the agreed time */
    long late_left;      /* ... reached in time but left late: preempted while waiting */
    int barrier_chosen;  /* --sync auto started every repetition with a barrier */
    double barrier_skew_s; /* the warm-up barriers' median exit skew (global clock) */
    double warmup_median_s; /* the warm-up's median repetition (slowest rank): sizes the window */
} series_outcome;

typedef struct stop_state {
    double *values; /* valid samples so far */
    long n, cap;
    long sorted;    /* values[0 .. sorted) are in ascending order */
    double *spare;  /* the array the next merge writes (sort_new) */
    long spare_cap;
    long invalid;   /* samples that were not valid */
    double median;  /* of the values, as of the last stop_ci_halfwidth */
} stop_state;

/* `g`: per world rank r, `nrep` records of 4 doubles (start, end, sched in
 * global time, valid), at g + r * nrep * 4; ranks without data have valid 0.
 * A collective repetition with a scheduled start (window) is timed from it;
 * one without (barrier) by the longest local duration.
 * `pairs`: (initiator, responder) world ranks for point-to-point patterns.
 * Returns how many samples of this batch were invalid. */
long stop_add_batch(stop_state *st, pattern pat, const double *g, int np, long nrep,
                    const int *pairs, int npairs);
/* 0-based ranks of the order statistics bounding the distribution-free 95%
 * CI of the median of n sorted samples: the exact binomial rule of Python's
 * stats.summary.median_ci_ranks, so a series stopped at its target shows the
 * same interval in `show`. 0 (no interval) below 6 samples. */
int stop_median_ci_ranks(long n, long *lo, long *hi);
/* Relative half-width of that CI, or infinity with fewer than 6 samples
 * (and the median, in st->median). */
double stop_ci_halfwidth(stop_state *st);
/* 1 when the series' samples (stop_add_batch) are differences between two
 * ranks' clocks: one-way times, pairs, and collectives timed from a window's
 * start (`window`: its repetitions have a scheduled start; `fallback_rep` >= 0:
 * they had until that repetition, and those samples stay in the series). */
int stop_cross_rank(pattern pat, int window, long fallback_rep);
/* The half-width a series must reach for the target `ci_width`. A sample that
 * is a difference between two ranks' clocks (`cross_rank`) moves with the
 * clock model, which is refined until the run ends (`show` converts with the
 * final one) by about the fit's residual `clock_err_s`: such a series must be
 * within the target by that much of its median, but by no more than a quarter
 * of the target (the interval's ends move less than the model: most samples
 * move together). */
double stop_target(double ci_width, int cross_rank, double clock_err_s, double median);
/* Repetitions the target half-width `ci_width` needs in all, projected from
 * `done` with half-width `hw`: it shrinks about as 1/sqrt(n). */
double stop_needed_reps(double ci_width, long done, double hw);
/* The shortest batch between two checks of the rule, in seconds: a check
 * (gathering the batch's records, one pass over the samples, a broadcast,
 * a new window schedule's lead) costs tens of microseconds, a few percent
 * of it. */
#define STOP_BATCH_MIN_S 1e-3
/* Repetitions of the next batch after `done` with half-width `hw` against
 * the target `ci_width`, each taking `per_rep_s`: a 32nd of what was done,
 * and at least STOP_BATCH_MIN_S, at most `done` (batches at most double).
 * The rule is checked as soon as the interval may have reached its target,
 * not when a projection says it will have: the half-width is a random
 * quantity whose first pass under a fixed width ends the series, the
 * fixed-width sequential interval of Chow and Robbins (1965), for the
 * median Geertsema (1970). Without a target or an interval yet: half of
 * what was done. The caller caps it by the budget and reps_max. */
double stop_next_batch(double ci_width, long done, double hw, double per_rep_s);
/* Once a quarter of the budget is spent (and reps_min done), a target that
 * would take more than twice the whole budget will not be reached: 1 then,
 * so the rest is not spent on it. One that would take STOP_FAR_BUDGETS
 * budgets is given up after an eighth of the budget and STOP_FAR_REPS
 * repetitions. Never with ci_width 0 (no target). */
#define STOP_FAR_BUDGETS 16
#define STOP_FAR_REPS 40
int stop_out_of_reach(double ci_width, double budget_s, int reps_min_done, long done, double hw, double elapsed);
void stop_free(stop_state *st);

#endif
