/* io_uring ring set-up and the start-up probe: which ring mode the kernel
 * accepts, and whether everything the io_uring architecture needs is there.
 *
 * Rings are created with SINGLE_ISSUER|DEFER_TASKRUN when the kernel accepts
 * it (only the loop's own thread submits, and completion work runs when that
 * thread waits), else COOP_TASKRUN, else no task-run flag, always with
 * SUBMIT_ALL and a larger CQ. A kernel without io_uring, multishot recv or
 * provided buffer rings (Linux 6.0) makes the probe exit with
 * EXIT_UNSUPPORTED, saying what is missing.
 */
#ifndef ARCHBENCH_URING_SETUP_H
#define ARCHBENCH_URING_SETUP_H

#include <liburing.h>

/* Submission queue size; when one iteration prepares more, the loop submits early. */
#define RING_SQ_ENTRIES 1024
/* Multishot operations post many CQEs per SQE: a large CQ keeps them off the
 * kernel's slower overflow list. */
#define RING_CQ_ENTRIES 16384

struct ring_mode {
    unsigned flags; /* the task-run flags, added to SUBMIT_ALL|CQSIZE */
    const char *name;
};

/* A ring of RING_SQ_ENTRIES/RING_CQ_ENTRIES in the given mode; 0, or a negative errno. */
int uring_create_ring(struct io_uring *ring, const struct ring_mode *mode);

/* The best ring mode the kernel accepts, saying on stderr when it falls back;
 * exits with EXIT_UNSUPPORTED when io_uring cannot serve (see above). */
const struct ring_mode *uring_probe(void);

#endif
