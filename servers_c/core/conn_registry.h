/* The connections that threads are blocked on, so shutdown can wake them.
 *
 * A thread blocked in read() on a socket only returns when the socket is shut
 * down. Each serving thread registers its descriptor before it first blocks and
 * checks the stop flag after registering; the stop path sets the flag before it
 * shuts every registered descriptor down. With both sides sequentially
 * consistent, either the thread sees the flag or the stop path sees the entry.
 */
#ifndef ARCHBENCH_CONN_REGISTRY_H
#define ARCHBENCH_CONN_REGISTRY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

struct conn_registry {
    atomic_bool *active; /* indexed by descriptor */
    size_t size;
};

/* Sized by the open-file limit; false if memory is short. */
bool conn_registry_init(struct conn_registry *r);
void conn_registry_destroy(struct conn_registry *r);
void conn_registry_add(struct conn_registry *r, int fd);
void conn_registry_remove(struct conn_registry *r, int fd);
/* shutdown(SHUT_RDWR) on every registered descriptor. */
void conn_registry_shutdown_all(struct conn_registry *r);

#endif
