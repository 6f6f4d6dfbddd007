/* Message buffers: warm (the same memory every repetition) or cold (rotating
 * through a region several times the last-level cache). Send and receive
 * memory never overlap. */
#ifndef MPISCOPE_BUFFERS_H
#define MPISCOPE_BUFFERS_H

#include <stddef.h>

typedef struct buffers {
    char *send, *recv;
    size_t region; /* bytes in each of send and recv */
    int cold;
} buffers;

/* `max_bytes`: the most one repetition touches on one side. Returns 0 or -1. */
int buffers_init(buffers *b, size_t max_bytes, int cold, size_t cold_region);
void buffers_free(buffers *b);
char *buffers_send(const buffers *b, size_t bytes, long rep);
char *buffers_recv(const buffers *b, size_t bytes, long rep);
size_t last_level_cache_bytes(void);

#endif
