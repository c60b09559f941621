/* faulty_echo: a test-only echo server that misbehaves on purpose, so the
 * tests can show that echo_client notices. A thread per connection echoes
 * with blocking I/O, except that, per connection:
 *
 *   --corrupt-every N  flips every bit of the byte at stream offsets N-1,
 *                      2N-1, ... (the echo is otherwise intact and in order)
 *   --drop-after N     closes the connection once N bytes have been echoed
 *                      (with --reset: a reset instead of a FIN)
 *   --stall-after N    after N bytes, reads on but echoes nothing more
 *
 * Prints "listening on 127.0.0.1:PORT" like the real servers; any signal
 * ends it. Not an architecture: built for the tests only.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static long long corrupt_every, drop_after, stall_after;
static bool reset_on_drop;

static bool write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        buf += n;
        len -= (size_t)n;
    }
    return true;
}

static void *serve(void *arg)
{
    int fd = (int)(intptr_t)arg;
    char buf[16384];
    long long offset = 0; /* stream offset of buf[0] */
    for (;;) {
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        size_t len = (size_t)n;
        if (drop_after > 0 && offset + (long long)len >= drop_after) {
            write_all(fd, buf, (size_t)(drop_after - offset));
            if (reset_on_drop) {
                struct linger lg = {1, 0};
                setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
            }
            break;
        }
        if (stall_after > 0 && offset + (long long)len > stall_after)
            len = offset < stall_after ? (size_t)(stall_after - offset) : 0;
        if (corrupt_every > 0)
            for (long long k = offset / corrupt_every + 1; k * corrupt_every - 1 < offset + (long long)len; k++)
                buf[k * corrupt_every - 1 - offset] ^= (char)0xff;
        if (!write_all(fd, buf, len))
            break;
        offset += n;
    }
    close(fd);
    return NULL;
}

static long long number(const char *flag, const char *value)
{
    char *end;
    long long n = strtoll(value, &end, 10);
    if (*value == '\0' || *end != '\0' || n < 1) {
        fprintf(stderr, "faulty_echo: %s expects a positive integer, got '%s'\n", flag, value);
        exit(2);
    }
    return n;
}

int main(int argc, char **argv)
{
    int port = 0;
    for (int i = 1; i < argc; i++) {
        const char *next = i + 1 < argc ? argv[i + 1] : "";
        if (strcmp(argv[i], "--port") == 0)
            port = (int)number("--port", next), i++;
        else if (strcmp(argv[i], "--corrupt-every") == 0)
            corrupt_every = number(argv[i], next), i++;
        else if (strcmp(argv[i], "--drop-after") == 0)
            drop_after = number(argv[i], next), i++;
        else if (strcmp(argv[i], "--stall-after") == 0)
            stall_after = number(argv[i], next), i++;
        else if (strcmp(argv[i], "--reset") == 0)
            reset_on_drop = true;
        else {
            fprintf(stderr, "faulty_echo: unknown option '%s'\n", argv[i]);
            return 2;
        }
    }
    signal(SIGPIPE, SIG_IGN);
    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (bind(lfd, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(lfd, 4096) != 0 ||
        getsockname(lfd, (struct sockaddr *)&addr, &len) != 0) {
        perror("faulty_echo: listen");
        return 1;
    }
    printf("listening on 127.0.0.1:%d\n", ntohs(addr.sin_port));
    fflush(stdout);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    for (;;) {
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            perror("faulty_echo: accept");
            return 1;
        }
        pthread_t t;
        if (pthread_create(&t, &attr, serve, (void *)(intptr_t)fd) != 0)
            close(fd);
    }
}
