/* The process's own open-file limit.
 *
 * Why: a client needs one descriptor per connection, and the default soft
 * limit (often 1024) is far below what a study opens; the hard limit is the
 * ceiling a process may raise it to without privileges.
 *
 * Promises: the soft RLIMIT_NOFILE is raised to `want` (RLIM_INFINITY: to the
 * hard limit), never above the hard limit and never lowered; *soft and *hard
 * are the limits in force afterwards. False (and *soft, *hard untouched) if the
 * limits cannot be read. Used by echo_client (everything the hard limit allows)
 * and idle_holder (what its --connections need). */
#ifndef ARCHBENCH_OPEN_FILES_H
#define ARCHBENCH_OPEN_FILES_H

#include <stdbool.h>
#include <sys/resource.h>

bool open_files_raise(rlim_t want, rlim_t *soft, rlim_t *hard);

#endif
