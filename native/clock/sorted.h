/* SPDX-License-Identifier: BSD-3-Clause */
/* Sorting doubles ascending, for medians and order statistics (clock
 * calibration, start windows, the stopping rule). */
#ifndef MPISCOPE_SORTED_H
#define MPISCOPE_SORTED_H

#include <stdlib.h>

static inline int sorted_cmp(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static inline void sort_doubles(double *v, size_t n) { qsort(v, n, sizeof *v, sorted_cmp); }

#endif
