#include "session.h"

#include <stdlib.h>
#include <string.h>

const char *const session_proto_names[] = {"http", "echo", NULL};

bool session_init(struct session *s, const struct session_config *config)
{
    memset(s, 0, sizeof *s);
    s->proto = config->proto;
    s->responses = config->responses;
    s->timeouts = config->timeouts;
    s->workload = config->workload;
    s->in = malloc(SESSION_INPUT_BYTES);
    return s->in != NULL;
}

void session_destroy(struct session *s)
{
    free(s->in);
    s->in = NULL;
}

void session_reset(struct session *s)
{
    char *in = s->in;
    enum session_proto proto = s->proto;
    const struct responses *responses = s->responses;
    struct session_timeouts timeouts = s->timeouts;
    const struct workload *workload = s->workload;
    memset(s, 0, sizeof *s);
    s->in = in;
    s->proto = proto;
    s->responses = responses;
    s->timeouts = timeouts;
    s->workload = workload;
}

char *session_input_space(struct session *s, size_t *space)
{
    /* Echo output points into the input buffer: nothing may move or arrive
     * until it has been sent. This is echo's backpressure. */
    if (s->proto == SESSION_ECHO && s->out_count > 0) {
        *space = 0;
        return s->in + s->in_len;
    }
    if (s->in_start > 0) {
        /* Usually nothing or a partial request remains: a short move. */
        memmove(s->in, s->in + s->in_start, s->in_len - s->in_start);
        s->in_len -= s->in_start;
        s->in_start = 0;
    }
    *space = s->closing ? 0 : SESSION_INPUT_BYTES - s->in_len;
    return s->in + s->in_len;
}

void session_input_commit(struct session *s, size_t n) { s->in_len += n; }

size_t session_input_copy(struct session *s, const char *bytes, size_t len)
{
    size_t space;
    char *dst = session_input_space(s, &space);
    size_t n = len < space ? len : space;
    memcpy(dst, bytes, n);
    s->in_len += n;
    return n;
}

/* ---- http ---------------------------------------------------------------- */

static bool queue_response(struct session *s, const struct prebuilt *response)
{
    if (s->out_first + s->out_count == SESSION_MAX_QUEUED) {
        if (s->out_first == 0)
            return false;
        memmove(s->out, s->out + s->out_first, s->out_count * sizeof s->out[0]);
        s->out_first = 0;
    }
    /* The iovec only points at immutable pre-built bytes. */
    s->out[s->out_first + s->out_count] = (struct iovec){(void *)response->bytes, response->len};
    s->out_count++;
    return true;
}

static bool queue_full(const struct session *s) { return s->out_count == SESSION_MAX_QUEUED; }

static bool http_process(struct session *s)
{
    bool progressed = false;
    while (!s->closing) {
        size_t available = s->in_len - s->in_start;
        if (s->body_remaining > 0) {
            size_t skip = available < s->body_remaining ? available : (size_t)s->body_remaining;
            s->in_start += skip;
            s->body_remaining -= skip;
            progressed |= skip > 0;
            if (s->body_remaining > 0)
                break;
            continue;
        }
        if (available == 0 || queue_full(s))
            break;

        struct http_request req;
        enum http_parse_status st = http_parse_request(s->in + s->in_start, available, &s->scan, &req);
        if (st == HTTP_PARSE_INCOMPLETE)
            break;
        if (st == HTTP_PARSE_ERROR) {
            queue_response(s, responses_for_error(s->responses, req.error_status));
            s->counters.bad_requests++;
            s->closing = true;
            s->bad_request = true;
            progressed = true;
            break;
        }
        if (s->workload != NULL)
            workload_serve(s->workload);
        queue_response(s, &s->responses->ok[req.keep_alive][req.is_head]);
        s->counters.requests_served++;
        s->in_start += req.head_bytes;
        s->body_remaining = req.content_length;
        http_scan_reset(&s->scan);
        progressed = true;
        if (!req.keep_alive)
            s->closing = true;
    }
    /* With the input ended, only a full queue can make more processing useful. */
    if (s->input_ended && !queue_full(s))
        s->closing = true;
    if (s->in_start == s->in_len)
        s->in_start = s->in_len = 0;
    return progressed;
}

/* ---- echo ---------------------------------------------------------------- */

/* Queues every byte received since the last echo as one iovec over the input
 * buffer. Input space stays 0 until it has been sent, so at most one echo is
 * pending and no received byte is ever waiting behind it. */
static bool echo_process(struct session *s)
{
    bool progressed = false;
    if (!s->closing && s->out_count == 0 && s->in_start < s->in_len) {
        s->out[0] = (struct iovec){s->in + s->in_start, s->in_len - s->in_start};
        s->out_first = 0;
        s->out_count = 1;
        s->in_start = s->in_len; /* compacted away once sent (session_input_space) */
        s->counters.echoes++;
        progressed = true;
    }
    /* Everything received is queued: after the peer's EOF nothing more comes. */
    if (s->input_ended && s->in_start == s->in_len)
        s->closing = true;
    return progressed;
}

/* ---- both ---------------------------------------------------------------- */

bool session_process(struct session *s)
{
    if (s->proto == SESSION_ECHO)
        return echo_process(s);
    return http_process(s);
}

int session_output(struct session *s, struct iovec **iov)
{
    *iov = s->out + s->out_first;
    return (int)s->out_count;
}

void session_output_sent(struct session *s, size_t n)
{
    if (s->proto == SESSION_ECHO)
        s->counters.bytes_echoed += n;
    while (n > 0 && s->out_count > 0) {
        struct iovec *v = &s->out[s->out_first];
        if (n < v->iov_len) {
            v->iov_base = (char *)v->iov_base + n;
            v->iov_len -= n;
            return;
        }
        n -= v->iov_len;
        s->out_first++;
        s->out_count--;
    }
    if (s->out_count == 0)
        s->out_first = 0;
}
