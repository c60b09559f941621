/* Tests of the timeout bookkeeping without sockets: which timeout governs a
 * session's wait, when a head deadline restarts, and the deadline lists of the
 * event loops (order, re-arming, removal, the wait until the earliest). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conn_timer.h"
#include "expect.h"

static struct responses responses;

static const char req[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";

static void feed(struct session *s, const char *bytes)
{
    session_input_copy(s, bytes, strlen(bytes));
    session_process(s);
    struct iovec *iov;
    int n = session_output(s, &iov);
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += iov[i].iov_len;
    session_output_sent(s, total);
}

static void test_wait_kinds(void)
{
    struct session_config http = {SESSION_HTTP, &responses, {2000, 5000}, NULL};
    struct session s;
    session_init(&s, &http);
    EXPECT(session_wait_kind(&s) == SESSION_WAIT_HEAD, "a new connection awaits its first head");
    EXPECT(!session_has_partial_head(&s), "nothing received yet: no 408");
    feed(&s, "GET / HT");
    EXPECT(session_wait_kind(&s) == SESSION_WAIT_HEAD && session_has_partial_head(&s), "partial head");
    feed(&s, "TP/1.1\r\nHost: x\r\n\r\n");
    EXPECT(session_wait_kind(&s) == SESSION_WAIT_IDLE, "between keep-alive requests: idle");
    feed(&s, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n01234");
    EXPECT(session_wait_kind(&s) == SESSION_WAIT_IDLE && !session_has_partial_head(&s), "a body: idle");
    feed(&s, "56789GET");
    EXPECT(session_wait_kind(&s) == SESSION_WAIT_HEAD && session_has_partial_head(&s), "next head begun");
    session_destroy(&s);

    struct session_config echo = {SESSION_ECHO, &responses, {0, 5000}, NULL};
    session_init(&s, &echo);
    EXPECT(session_wait_kind(&s) == SESSION_WAIT_IDLE, "echo: always idle");
    feed(&s, "GET / HT");
    EXPECT(session_wait_kind(&s) == SESSION_WAIT_IDLE && !session_has_partial_head(&s), "echo has no heads");
    session_destroy(&s);
}

static void test_head_deadline_holds_while_trickling(void)
{
    struct session_timeouts cfg = {2000, 5000};
    struct session_config http = {SESSION_HTTP, &responses, cfg, NULL};
    struct session s;
    session_init(&s, &http);
    struct timeout_state st = {0};
    EXPECT(timeout_state_update(&st, &cfg, &s, 1000) && st.kind == TIMEOUT_HEAD && st.deadline_ms == 3000,
           "accept at 1000: head deadline 3000 (got kind %d, %llu)", st.kind, (unsigned long long)st.deadline_ms);
    feed(&s, "G");
    EXPECT(!timeout_state_update(&st, &cfg, &s, 1500) && st.deadline_ms == 3000, "a byte does not restart it");
    feed(&s, "ET / HTTP/1.1\r\nHost: x\r\n");
    EXPECT(!timeout_state_update(&st, &cfg, &s, 2900) && st.deadline_ms == 3000, "nor do more");
    feed(&s, "\r\n");
    EXPECT(timeout_state_update(&st, &cfg, &s, 2950) && st.kind == TIMEOUT_IDLE && st.deadline_ms == 7950,
           "complete: idle from now");
    EXPECT(!timeout_state_update(&st, &cfg, &s, 2960), "within the slack: not moved");
    EXPECT(timeout_state_update(&st, &cfg, &s, 4000) && st.deadline_ms == 9000, "later activity moves it");
    feed(&s, "GET /");
    EXPECT(timeout_state_update(&st, &cfg, &s, 4100) && st.kind == TIMEOUT_HEAD && st.deadline_ms == 6100,
           "the next head gets a fresh deadline");
    /* A pipelined stream split at arbitrary points: each read completes one
     * head and begins the next, so the deadline restarts each time. */
    feed(&s, " HTTP/1.1\r\nHost: x\r\n\r\nGET /");
    EXPECT(timeout_state_update(&st, &cfg, &s, 5000) && st.kind == TIMEOUT_HEAD && st.deadline_ms == 7000,
           "a new head in the same read restarts the clock (%llu)", (unsigned long long)st.deadline_ms);
    session_destroy(&s);

    struct session_timeouts no_header = {0, 5000};
    struct session_config http2 = {SESSION_HTTP, &responses, no_header, NULL};
    session_init(&s, &http2);
    struct timeout_state st2 = {0};
    feed(&s, "GET /");
    EXPECT(timeout_state_update(&st2, &no_header, &s, 100) && st2.kind == TIMEOUT_IDLE && st2.deadline_ms == 5100,
           "header timeout off: a head in progress falls under the idle timeout");
    session_destroy(&s);

    struct session_timeouts off = {0, 0};
    session_init(&s, &http2);
    struct timeout_state st3 = {0};
    EXPECT(!timeout_state_update(&st3, &off, &s, 100) && st3.kind == TIMEOUT_NONE, "both off: no deadline");
    session_destroy(&s);
}

struct fake_conn {
    int id;
    struct conn_timer timer;
    struct session session;
};

static void test_lists(void)
{
    struct session_timeouts cfg = {1000, 10000};
    struct session_config http = {SESSION_HTTP, &responses, cfg, NULL};
    struct conn_timers timers;
    conn_timers_init(&timers, &cfg);
    EXPECT(conn_timers_enabled(&timers), "enabled");
    EXPECT(conn_timers_wait_ms(&timers, 0) == -1 && conn_timers_expired(&timers, 0) == NULL, "empty");

    struct fake_conn c[4];
    for (int i = 0; i < 4; i++) {
        memset(&c[i], 0, sizeof c[i]);
        c[i].id = i;
        session_init(&c[i].session, &http);
    }
    /* c0, c1: new connections (head) at 0 and 100; c2 answered at 200 (idle). */
    conn_timers_update(&timers, &c[0].timer, &c[0].session, 0);
    conn_timers_update(&timers, &c[1].timer, &c[1].session, 100);
    feed(&c[2].session, req);
    conn_timers_update(&timers, &c[2].timer, &c[2].session, 200);
    EXPECT(conn_timers_wait_ms(&timers, 500) == 500, "earliest is c0 at 1000 (wait %d)",
           conn_timers_wait_ms(&timers, 500));
    /* c0 completes a request at 600: moves to the idle list (deadline 10600). */
    feed(&c[0].session, req);
    conn_timers_update(&timers, &c[0].timer, &c[0].session, 600);
    EXPECT(conn_timers_wait_ms(&timers, 600) == 500, "now c1 at 1100 (wait %d)", conn_timers_wait_ms(&timers, 600));
    struct conn_timer *t = conn_timers_expired(&timers, 1100);
    EXPECT(t != NULL && CONN_TIMER_OWNER(t, struct fake_conn, timer)->id == 1, "c1 expires at 1100");
    conn_timers_remove(t);
    conn_timers_remove(t); /* twice is harmless */
    EXPECT(conn_timers_expired(&timers, 1100) == NULL, "nothing else yet");
    EXPECT(conn_timers_wait_ms(&timers, 1100) == 9100, "then c2 at 10200 (wait %d)",
           conn_timers_wait_ms(&timers, 1100));
    t = conn_timers_expired(&timers, 20000);
    EXPECT(t != NULL && CONN_TIMER_OWNER(t, struct fake_conn, timer)->id == 2, "c2 before c0 (idle FIFO)");
    conn_timers_remove(t);
    t = conn_timers_expired(&timers, 20000);
    EXPECT(t != NULL && CONN_TIMER_OWNER(t, struct fake_conn, timer)->id == 0, "then c0");
    conn_timers_remove(t);
    EXPECT(conn_timers_wait_ms(&timers, 20000) == -1, "empty again");
    /* A closing session (Connection: close with output pending) stays under the idle timeout. */
    feed(&c[3].session, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    conn_timers_update(&timers, &c[3].timer, &c[3].session, 0);
    EXPECT(c[3].timer.state.kind == TIMEOUT_IDLE, "closing: idle");
    conn_timers_remove(&c[3].timer);
    for (int i = 0; i < 4; i++)
        session_destroy(&c[i].session);
}

int main(void)
{
    char err[256];
    if (!responses_build(&responses, "test", err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    EXPECT(responses.request_timeout.len > 0 &&
               memcmp(responses.request_timeout.bytes, "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n", 48) ==
                   0,
           "a pre-built 408 that closes");
    test_wait_kinds();
    test_head_deadline_holds_while_trickling();
    test_lists();
    responses_free(&responses);
    return expect_report("timer tests");
}
