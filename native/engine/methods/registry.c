/* SPDX-License-Identifier: BSD-3-Clause */
/* Every method the engine knows: the peers' (as --methods names them), then
 * the reference series the attribution compares them with. */
#include <string.h>

#include "method.h"

extern const method_def method_osu, method_imb, method_skampi, method_mpptest, method_mpibench;
extern const method_def method_ref_barrier, method_ref_b2b, method_ref_rotate, method_ref_cycle;

static const method_def *const all[] = {
    &method_osu, &method_imb, &method_skampi, &method_mpptest, &method_mpibench,
    &method_ref_barrier, &method_ref_b2b, &method_ref_rotate, &method_ref_cycle,
};

const method_def *method_find(const char *name)
{
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        if (!strcmp(all[i]->name, name)) return all[i];
    return NULL;
}

const method_def *method_at(int i) { return i >= 0 && (size_t)i < sizeof all / sizeof *all ? all[i] : NULL; }
