/* SPDX-License-Identifier: BSD-3-Clause */
/* The placement classes this machine offers: CPU 0 against every other
 * online CPU (symmetric machines show every class that way), with one pair
 * of each, so a lab run can pin a pair to each class. */
#define _GNU_SOURCE
#include <stdio.h>
#include <unistd.h>

#include "tp.h"

void tp_classes_json(char *out, size_t n)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int first[TP_CLASSES], count[TP_CLASSES] = {0};
    for (int c = 0; c < TP_CLASSES; c++) first[c] = -1;
    for (int j = 1; j < cpus; j++) {
        tp_class c = tp_classify(0, j);
        if (first[c] < 0) first[c] = j;
        count[c]++;
    }
    size_t used = (size_t)snprintf(out, n, "{\"cpus\": %ld, \"classes\": [", cpus);
    int k = 0;
    for (int c = 0; c < TP_CLASSES && used < n; c++)
        if (count[c])
            used += (size_t)snprintf(out + used, n - used, "%s{\"class\": \"%s\", \"pair\": [0, %d], \"pairs_with_cpu0\": %d}",
                                     k++ ? ", " : "", tp_class_name((tp_class)c), first[c], count[c]);
    if (used < n) snprintf(out + used, n - used, "]}");
}
