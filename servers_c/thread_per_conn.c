/* thread_per_conn: the main thread accepts; every connection gets a new thread
 * that serves it with blocking I/O until it closes (source 001's second server,
 * source 003's second). --max-threads caps the live threads as 001 did at 1000:
 * at the cap the acceptor stops accepting and later clients wait in the backlog. */
#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "conn_io.h"
#include "conn_registry.h"
#include "listener.h"
#include "server.h"

/* Small stacks: the serving path needs a few KiB, and 10,000 threads must fit. */
#define CONN_THREAD_STACK_BYTES (256 * 1024)

static long max_threads = 0;

static const struct flag_spec flags[] = {
    {"--max-threads", FLAG_INT, &max_threads, 0, 1000000, NULL,
     "most connection threads alive at once, 0 for no cap (default 0)"},
};

static const struct server_cli cli = {
    .architecture = "thread_per_conn",
    .summary = "The main thread accepts connections and starts a thread per connection, which\n"
               "serves it with blocking I/O until it closes. With --max-threads N, accepting\n"
               "pauses while N connection threads are alive.",
    .threads_help = "must be 1: threads follow connections (see --max-threads)",
    .threads_min = 1,
    .threads_max = 1,
    .extra = flags,
    .extra_count = sizeof flags / sizeof flags[0],
};

struct tpc_server {
    struct server_base base;
    struct conn_registry registry;
    pthread_attr_t thread_attr;
    pthread_mutex_t lock;
    pthread_cond_t live_changed;
    long live;
    struct shared_counters totals;
};

struct conn_task {
    struct tpc_server *srv;
    int fd;
};

static void thread_finished(struct tpc_server *srv)
{
    pthread_mutex_lock(&srv->lock);
    srv->live--;
    pthread_cond_broadcast(&srv->live_changed);
    pthread_mutex_unlock(&srv->lock);
}

static void *serve_connection(void *arg)
{
    struct conn_task task = *(struct conn_task *)arg;
    free(arg);
    struct tpc_server *srv = task.srv;
    struct server_counters counters = {0};
    struct session session;
    if (session_init(&session, &srv->base.session)) {
        if (!lifecycle_stopping())
            conn_serve_blocking(task.fd, &session, &counters);
        counters_add_session(&counters, &session.counters);
        conn_registry_remove(&srv->registry, task.fd);
        conn_close(task.fd, &session, CLOSE_LINGERING_MAY_WAIT);
        session_destroy(&session);
    } else {
        counters.errors++;
        conn_registry_remove(&srv->registry, task.fd);
        close(task.fd);
    }
    shared_counters_add(&srv->totals, &counters);
    thread_finished(srv);
    return NULL;
}

static void wake(void *arg)
{
    struct tpc_server *srv = arg;
    shutdown(srv->base.listen_fd, SHUT_RDWR);
    conn_registry_shutdown_all(&srv->registry);
    pthread_mutex_lock(&srv->lock);
    pthread_cond_broadcast(&srv->live_changed);
    pthread_mutex_unlock(&srv->lock);
}

/* Waits while the cap is reached; false once stopping. */
static bool wait_for_thread_slot(struct tpc_server *srv)
{
    pthread_mutex_lock(&srv->lock);
    while (max_threads > 0 && srv->live >= max_threads && !lifecycle_stopping())
        pthread_cond_wait(&srv->live_changed, &srv->lock);
    bool ok = !lifecycle_stopping();
    if (ok)
        srv->live++;
    pthread_mutex_unlock(&srv->lock);
    return ok;
}

static void start_connection_thread(struct tpc_server *srv, int fd, struct server_counters *counters)
{
    struct conn_task *task = malloc(sizeof *task);
    pthread_t thread;
    if (task != NULL) {
        *task = (struct conn_task){srv, fd};
        conn_registry_add(&srv->registry, fd);
        if (pthread_create(&thread, &srv->thread_attr, serve_connection, task) == 0)
            return;
        conn_registry_remove(&srv->registry, fd);
        free(task);
    }
    counters->errors++;
    close(fd);
    thread_finished(srv);
}

int main(int argc, char **argv)
{
    struct tpc_server srv = {.live = 0};
    server_start(&srv.base, &cli, argc, argv, (struct server_start_options){.nonblocking_listener = false});
    if (!conn_registry_init(&srv.registry))
        lifecycle_fail(cli.architecture, "out of memory");
    pthread_mutex_init(&srv.lock, NULL);
    pthread_cond_init(&srv.live_changed, NULL);
    pthread_attr_init(&srv.thread_attr);
    pthread_attr_setdetachstate(&srv.thread_attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&srv.thread_attr, CONN_THREAD_STACK_BYTES);
    lifecycle_watch_signals(wake, &srv);
    server_announce_ready(&srv.base);

    struct server_counters counters = {0};
    while (wait_for_thread_slot(&srv)) {
        int fd = server_accept_blocking(&srv.base, SOCKET_BLOCKING, &counters);
        if (fd < 0) {
            thread_finished(&srv); /* the slot reserved for it */
            break;
        }
        start_connection_thread(&srv, fd, &counters);
    }

    pthread_mutex_lock(&srv.lock);
    while (srv.live > 0)
        pthread_cond_wait(&srv.live_changed, &srv.lock);
    pthread_mutex_unlock(&srv.lock);

    struct server_counters served = shared_counters_load(&srv.totals);
    counters_add(&counters, &served);
    bool failed = !lifecycle_stopping();
    server_finish(&srv.base, &counters);
    pthread_attr_destroy(&srv.thread_attr);
    conn_registry_destroy(&srv.registry);
    return failed ? 1 : 0;
}
