/* prefork: --workers N processes share one listener and each runs a
 * single-threaded event loop (source 002's prefork Mighty). The listener is
 * registered with EPOLLEXCLUSIVE, so a new connection wakes one worker instead
 * of all of them (no thundering herd). The parent only supervises: it prints
 * the ready line once every worker has said, through its pipe, that its loop
 * is on the listener; SIGTERM stops every worker, the parent waits for them
 * (so their CPU time counts in its children's usage, which the runner reads),
 * sums the counters each sends back through the same pipe and prints the one
 * shutdown line. */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "event_loop.h"
#include "listener.h"
#include "server.h"

static int trigger = TRIGGER_LEVEL;
static long workers = 1;

static const struct flag_spec flags[] = {
    {"--workers", FLAG_INT, &workers, 1, 1024, NULL, "worker processes N (default 1)"},
    {"--trigger", FLAG_CHOICE, &trigger, 0, 0, trigger_names, "epoll notification in the workers (default level)"},
};

static const struct server_cli cli = {
    .architecture = "prefork",
    .summary = "N worker processes, forked after the listener is open, each a single-threaded\n"
               "event loop accepting from the shared listener (EPOLLEXCLUSIVE). The parent\n"
               "supervises and does not serve.",
    .threads_help = "must be 1: one thread per worker process (see --workers)",
    .threads_min = 1,
    .threads_max = 1,
    .extra = flags,
    .extra_count = sizeof flags / sizeof flags[0],
};

struct worker {
    _Atomic pid_t pid; /* 0 once reaped; the signal watcher reads it */
    int counters_fd;   /* read end of the worker's pipe: a byte once it is ready, its counters at the end */
};

static void stop_loop(void *loop) { event_loop_stop(loop); }

static _Noreturn void run_worker(struct server_base *base, int report_fd)
{
    /* A worker must not outlive a parent killed without a chance to stop it. */
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() == 1)
        _exit(1);
    struct event_loop_options options = {
        .session = &base->session,
        .edge_triggered = trigger == TRIGGER_EDGE,
        .listen_fd = base->listen_fd,
        .exclusive_accept = true,
    };
    struct event_loop *loop = event_loop_create(&options);
    if (loop == NULL) {
        fprintf(stderr, "prefork worker %d: cannot create the event loop: %s\n", getpid(), strerror(errno));
        _exit(1);
    }
    lifecycle_watch_signals(stop_loop, loop);
    const char ready = 'r';
    if (write(report_fd, &ready, 1) != 1)
        _exit(1);
    event_loop_run(loop);
    bool told_to_stop = lifecycle_stopping(); /* else the loop failed on its own */
    lifecycle_finish(); /* the watcher may still be in event_loop_stop: join it before the loop is freed */
    struct server_counters counters = event_loop_finish(loop);
    ssize_t written = write(report_fd, &counters, sizeof counters);
    /* 0 means exactly "stopped by a signal, counters sent": the parent relies on it. */
    _exit(told_to_stop && written == (ssize_t)sizeof counters ? 0 : 1);
}

struct prefork_server {
    struct server_base base;
    struct worker *workers;
};

static void stop_workers(void *arg)
{
    struct prefork_server *srv = arg;
    for (long i = 0; i < workers; i++) {
        pid_t pid = atomic_load(&srv->workers[i].pid);
        if (pid > 0)
            kill(pid, SIGTERM);
    }
}

static void start_workers(struct prefork_server *srv)
{
    fflush(stdout);
    for (long i = 0; i < workers; i++) {
        int report[2];
        if (pipe(report) != 0)
            lifecycle_fail(cli.architecture, "cannot create a pipe");
        pid_t pid = fork();
        if (pid < 0)
            lifecycle_fail(cli.architecture, "cannot fork a worker");
        if (pid == 0) {
            close(report[0]);
            run_worker(&srv->base, report[1]);
        }
        close(report[1]);
        srv->workers[i].counters_fd = report[0];
        atomic_init(&srv->workers[i].pid, pid); /* before the watcher thread exists */
    }
}

/* Returns once every worker's loop is on the listener (its one byte has come
 * through its pipe): before that a ready line would send load to fewer
 * workers than --workers says. A worker that exits first ends the server. */
static void wait_until_workers_ready(struct prefork_server *srv)
{
    for (long i = 0; i < workers; i++) {
        char ready;
        ssize_t n;
        do
            n = read(srv->workers[i].counters_fd, &ready, 1);
        while (n < 0 && errno == EINTR);
        if (n != 1)
            lifecycle_fail(cli.architecture, "a worker ended before its event loop was ready");
    }
}

/* Waits for every worker; true if all stopped because they were told to. */
static bool collect_workers(struct prefork_server *srv, struct server_counters *total)
{
    bool clean = true;
    for (long remaining = workers; remaining > 0; remaining--) {
        int status;
        pid_t pid = wait(&status);
        if (pid < 0) {
            if (errno == EINTR) {
                remaining++;
                continue;
            }
            break;
        }
        bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        if (!ok) {
            /* A worker that dies on its own ends the experiment, loudly. */
            fprintf(stderr, "prefork: worker %d ended unexpectedly (status %d)\n", pid, status);
            total->errors++;
            clean = false;
            lifecycle_request_stop();
        } else if (!lifecycle_stopping()) {
            /* A worker exits 0 only after a stop signal (run_worker). A SIGTERM sent to the process group (as the
             * runner sends it) can reach a worker and end it before this process's watcher has seen its own copy: that
             * is the requested stop arriving in another order, so stop the others too. */
            lifecycle_request_stop();
        }
        for (long i = 0; i < workers; i++) {
            if (atomic_load(&srv->workers[i].pid) != pid)
                continue;
            atomic_store(&srv->workers[i].pid, 0);
            struct server_counters reported;
            if (read(srv->workers[i].counters_fd, &reported, sizeof reported) == (ssize_t)sizeof reported)
                counters_add(total, &reported);
            close(srv->workers[i].counters_fd);
        }
    }
    return clean;
}

int main(int argc, char **argv)
{
    struct prefork_server srv;
    server_start(&srv.base, &cli, argc, argv, (struct server_start_options){.nonblocking_listener = true});
    srv.workers = calloc((size_t)workers, sizeof srv.workers[0]);
    if (srv.workers == NULL)
        lifecycle_fail(cli.architecture, "out of memory");
    start_workers(&srv); /* before any thread exists in this process */
    lifecycle_watch_signals(stop_workers, &srv);
    wait_until_workers_ready(&srv);
    server_announce_ready(&srv.base);

    struct server_counters counters = {0};
    bool clean = collect_workers(&srv, &counters);
    srv.base.options.threads = workers;
    server_finish(&srv.base, &counters);
    free(srv.workers);
    return clean ? 0 : 1;
}
