/* Raising the open-file soft limit; see open_files.h. */
#include <stdbool.h>
#include <sys/resource.h>

#include "open_files.h"

bool open_files_raise(rlim_t want, rlim_t *soft, rlim_t *hard)
{
    struct rlimit lim;
    if (getrlimit(RLIMIT_NOFILE, &lim) != 0)
        return false;
    rlim_t target = want < lim.rlim_max ? want : lim.rlim_max;
    if (lim.rlim_cur < target) {
        lim.rlim_cur = target;
        if (setrlimit(RLIMIT_NOFILE, &lim) != 0)
            getrlimit(RLIMIT_NOFILE, &lim);
    }
    *soft = lim.rlim_cur;
    *hard = lim.rlim_max;
    return true;
}
