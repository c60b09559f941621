/* Reading one HTTP/1.x response; see http_response.h. */
#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "http_response.h"

void http_response_init(struct http_response *r)
{
    r->head_len = 0;
    r->head_done = false;
    r->body_left = 0;
    r->status = 0;
    r->connection_close = false;
    r->problem = NULL;
    r->chunked = false;
    r->chunk_state = 0;
    r->chunk_size = 0;
    r->line_len = 0;
}

static enum http_progress bad(struct http_response *r, const char *problem)
{
    r->problem = problem;
    return HTTP_BAD;
}

/* Does the comma-separated header value hold this token (any case)? */
static bool has_token(const char *value, size_t len, const char *token)
{
    size_t tlen = strlen(token);
    size_t i = 0;
    while (i < len) {
        while (i < len && (value[i] == ' ' || value[i] == '\t' || value[i] == ','))
            i++;
        size_t start = i;
        while (i < len && value[i] != ',')
            i++;
        size_t end = i;
        while (end > start && (value[end - 1] == ' ' || value[end - 1] == '\t'))
            end--;
        if (end - start == tlen && strncasecmp(value + start, token, tlen) == 0)
            return true;
    }
    return false;
}

/* The head, head[0, len) ending in CRLF CRLF: status line and the headers that decide the body. */
static enum http_progress parse_head(struct http_response *r, size_t len)
{
    const char *p = r->head, *end = r->head + len;
    if (len < 12 || strncmp(p, "HTTP/1.", 7) != 0 || !isdigit((unsigned char)p[7]) || p[8] != ' ' ||
        !isdigit((unsigned char)p[9]) || !isdigit((unsigned char)p[10]) || !isdigit((unsigned char)p[11]))
        return bad(r, "not an HTTP/1.x status line");
    r->status = (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
    if (r->status < 200)
        return bad(r, "an interim (1xx) response");
    bool have_length = false;
    const char *line = (const char *)memchr(p, '\n', (size_t)(end - p)) + 1;
    while (line < end && !(line[0] == '\r' && line[1] == '\n')) {
        const char *eol = (const char *)memchr(line, '\n', (size_t)(end - line));
        const char *colon = (const char *)memchr(line, ':', (size_t)(eol - line));
        if (colon == NULL)
            return bad(r, "a header line without a colon");
        size_t name_len = (size_t)(colon - line);
        const char *value = colon + 1;
        size_t value_len = (size_t)(eol - value);
        if (value_len > 0 && value[value_len - 1] == '\r')
            value_len--;
        while (value_len > 0 && (*value == ' ' || *value == '\t'))
            value++, value_len--;
        if (name_len == 14 && strncasecmp(line, "Content-Length", 14) == 0) {
            uint64_t n = 0;
            size_t i = 0;
            for (; i < value_len && isdigit((unsigned char)value[i]); i++) {
                if (n > (UINT64_MAX - 9) / 10)
                    return bad(r, "a Content-Length too large");
                n = n * 10 + (uint64_t)(value[i] - '0');
            }
            while (i < value_len && (value[i] == ' ' || value[i] == '\t'))
                i++;
            if (i == 0 || i != value_len || (have_length && n != r->body_left))
                return bad(r, "an invalid Content-Length");
            r->body_left = n;
            have_length = true;
        } else if (name_len == 17 && strncasecmp(line, "Transfer-Encoding", 17) == 0) {
            if (!r->allow_chunked)
                return bad(r, "a Transfer-Encoding (only Content-Length bodies are read)");
            if (value_len != 7 || strncasecmp(value, "chunked", 7) != 0)
                return bad(r, "a Transfer-Encoding other than chunked");
            r->chunked = true;
        } else if (name_len == 10 && strncasecmp(line, "Connection", 10) == 0) {
            r->connection_close |= has_token(value, value_len, "close");
        }
        line = eol + 1;
    }
    bool no_body = r->status == 204 || r->status == 304;
    if (no_body) {
        r->body_left = 0;
        r->chunked = false;
    } else if (r->chunked && have_length) {
        return bad(r, "both Content-Length and Transfer-Encoding");
    } else if (!have_length && !r->chunked)
        return bad(r, "no Content-Length (a body that ends with the connection)");
    r->head_done = true;
    return HTTP_MORE;
}

/* Where a chunked body is: the hex size, the rest of its line (extensions, CR),
 * the chunk's data, the CRLF after the data, the trailer lines and the empty
 * line that ends them. */
enum { CHUNK_SIZE, CHUNK_SIZE_REST, CHUNK_DATA, CHUNK_DATA_END, CHUNK_TRAILER };

#define CHUNK_LINE_MAX 4096 /* a chunk-size line (with extensions) or a trailer line */

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = (char)(c | 0x20);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* The end of a size line: the data next, or the trailers after the last (0) chunk. */
static void size_line_done(struct http_response *r)
{
    r->line_len = 0;
    r->chunk_state = r->chunk_size == 0 ? CHUNK_TRAILER : CHUNK_DATA;
}

/* A chunked body fed in pieces; *used as for http_response_feed. */
static enum http_progress feed_chunks(struct http_response *r, const char *p, size_t n, size_t *used)
{
    size_t i = 0;
    *used = 0;
    while (i < n) {
        if (r->chunk_state == CHUNK_DATA) {
            size_t take = r->chunk_size < n - i ? (size_t)r->chunk_size : n - i;
            r->chunk_size -= take;
            i += take;
            if (r->chunk_size == 0)
                r->chunk_state = CHUNK_DATA_END;
            continue;
        }
        char c = p[i++];
        if (++r->line_len > CHUNK_LINE_MAX)
            return bad(r, "a chunk-size or trailer line too long");
        switch (r->chunk_state) {
        case CHUNK_SIZE: {
            int d = hex_digit(c);
            if (d >= 0) {
                if (r->chunk_size > (UINT64_MAX >> 4))
                    return bad(r, "a chunk size too large");
                r->chunk_size = r->chunk_size * 16 + (uint64_t)d;
            } else if (r->line_len == 1) {
                return bad(r, "a chunk-size line without a hex size");
            } else if (c == '\n') {
                size_line_done(r);
            } else {
                r->chunk_state = CHUNK_SIZE_REST;
            }
            break;
        }
        case CHUNK_SIZE_REST:
            if (c == '\n')
                size_line_done(r);
            break;
        case CHUNK_DATA_END: /* CRLF (or a bare LF) after the data */
            if (c == '\n') {
                r->line_len = 0;
                r->chunk_state = CHUNK_SIZE;
            } else if (c != '\r' || r->line_len > 1) {
                return bad(r, "chunk data not followed by CRLF");
            }
            break;
        case CHUNK_TRAILER:
            if (c == '\n') {
                bool empty = r->line_len <= 2; /* "\n" or "\r\n": the end of the body */
                r->line_len = 0;
                if (empty) {
                    *used = i;
                    return HTTP_DONE;
                }
            }
            break;
        }
    }
    *used = i;
    return HTTP_MORE;
}

enum http_progress http_response_feed(struct http_response *r, const char *bytes, size_t n, size_t *used)
{
    size_t taken = 0;
    *used = 0;
    if (!r->head_done) {
        /* Copy what fits and look for the end of the head (it may straddle pieces), in one
         * memcpy and memmem rather than byte by byte: open_loop reads one head per request. */
        size_t old = r->head_len, room = HTTP_HEAD_MAX - old;
        size_t copy = n < room ? n : room;
        memcpy(r->head + old, bytes, copy);
        size_t from = old >= 3 ? old - 3 : 0;
        const char *end = memmem(r->head + from, old + copy - from, "\r\n\r\n", 4);
        if (end == NULL) {
            r->head_len = old + copy;
            *used = copy;
            return copy < n ? bad(r, "a response head over 8192 bytes") : HTTP_MORE;
        }
        r->head_len = (size_t)(end - r->head) + 4;
        taken = r->head_len - old;
        *used = taken;
        enum http_progress p = parse_head(r, r->head_len);
        if (p == HTTP_BAD)
            return p;
    }
    if (r->chunked) {
        size_t more;
        enum http_progress p = feed_chunks(r, bytes + taken, n - taken, &more);
        *used = taken + more;
        return p;
    }
    size_t left = n - taken;
    size_t body = r->body_left < left ? (size_t)r->body_left : left;
    r->body_left -= body;
    *used = taken + body;
    return r->body_left == 0 ? HTTP_DONE : HTTP_MORE;
}
