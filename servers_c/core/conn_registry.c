#include "conn_registry.h"

#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>

bool conn_registry_init(struct conn_registry *r)
{
    struct rlimit lim;
    size_t size = 65536;
    if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY)
        size = (size_t)lim.rlim_cur;
    r->active = calloc(size, sizeof r->active[0]);
    r->size = size;
    return r->active != NULL;
}

void conn_registry_destroy(struct conn_registry *r)
{
    free(r->active);
    r->active = NULL;
    r->size = 0;
}

void conn_registry_add(struct conn_registry *r, int fd)
{
    if (fd >= 0 && (size_t)fd < r->size)
        atomic_store(&r->active[fd], true);
}

void conn_registry_remove(struct conn_registry *r, int fd)
{
    if (fd >= 0 && (size_t)fd < r->size)
        atomic_store(&r->active[fd], false);
}

void conn_registry_shutdown_all(struct conn_registry *r)
{
    for (size_t fd = 0; fd < r->size; fd++)
        if (atomic_load(&r->active[fd]))
            shutdown((int)fd, SHUT_RDWR);
}
