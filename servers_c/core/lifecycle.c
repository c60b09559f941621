#include "lifecycle.h"

#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

static atomic_bool stop_requested;
static pthread_t watcher;
static bool watcher_started;
static void (*stop_callback)(void *);
static void *stop_callback_arg;

void lifecycle_init(void)
{
    signal(SIGPIPE, SIG_IGN);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
}

static void *watch(void *unused)
{
    (void)unused;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    int sig;
    while (sigwait(&set, &sig) != 0) {
    }
    atomic_store(&stop_requested, true);
    if (stop_callback != NULL)
        stop_callback(stop_callback_arg);
    return NULL;
}

void lifecycle_watch_signals(void (*on_stop)(void *arg), void *arg)
{
    stop_callback = on_stop;
    stop_callback_arg = arg;
    if (pthread_create(&watcher, NULL, watch, NULL) != 0)
        lifecycle_fail("lifecycle", "cannot start the signal watcher thread");
    watcher_started = true;
}

bool lifecycle_stopping(void) { return atomic_load(&stop_requested); }

void lifecycle_request_stop(void)
{
    if (watcher_started)
        pthread_kill(watcher, SIGTERM);
    else
        atomic_store(&stop_requested, true);
}

void lifecycle_finish(void)
{
    if (!watcher_started)
        return;
    if (!atomic_load(&stop_requested))
        pthread_kill(watcher, SIGTERM);
    pthread_join(watcher, NULL);
    watcher_started = false;
}

void lifecycle_announce_ready(const char *host, int port, const char *fields)
{
    printf("listening on %s:%d%s\n", host, port, fields);
    fflush(stdout);
}

void lifecycle_report(const char *architecture, long threads, const struct server_counters *c)
{
    printf("{\"architecture\":\"%s\",\"threads\":%ld,\"connections_accepted\":%" PRIu64
           ",\"connections_served\":%" PRIu64 ",\"requests_served\":%" PRIu64 ",\"bad_requests\":%" PRIu64
           ",\"connection_resets\":%" PRIu64 ",\"errors\":%" PRIu64 ",\"bytes_echoed\":%" PRIu64
           ",\"timeouts\":%" PRIu64 "}\n",
           architecture, threads, c->connections_accepted, c->connections_served, c->requests_served, c->bad_requests,
           c->connection_resets, c->errors, c->bytes_echoed, c->timeouts);
    fflush(stdout);
}

_Noreturn void lifecycle_fail(const char *architecture, const char *message)
{
    fprintf(stderr, "%s: %s\n", architecture, message);
    exit(1);
}
