/* Request-head parsing after RFC 9112: request-line, header fields, framing.
 *
 * Strictness is deliberate: anything a proxy could read differently from us
 * (whitespace before a colon, folded lines, conflicting Content-Length, both
 * Content-Length and Transfer-Encoding) is a 400, because a benchmark server
 * that guesses produces numbers nobody can reproduce.
 */
#include "http_parser.h"

#include <string.h>

static bool is_tchar(unsigned char c)
{
    /* token characters: RFC 9110 section 5.6.2 */
    static const char extra[] = "!#$%&'*+-.^_`|~";
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
        return true;
    return c != '\0' && memchr(extra, c, sizeof extra - 1) != NULL;
}

static bool is_field_value_char(unsigned char c) { return c == '\t' || (c >= 0x20 && c != 0x7f); }

static bool is_target_char(unsigned char c) { return c > 0x20 && c != 0x7f; }

static bool equals_ignore_case(const char *s, size_t len, const char *lower)
{
    size_t n = strlen(lower);
    if (len != n)
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 'A' && c <= 'Z')
            c = (unsigned char)(c - 'A' + 'a');
        if (c != (unsigned char)lower[i])
            return false;
    }
    return true;
}

static enum http_parse_status fail(struct http_request *req, int status, const char *reason)
{
    req->error_status = status;
    req->error_reason = reason;
    return HTTP_PARSE_ERROR;
}

/* Length of the line ending at buf[pos] ("\n" or "\r\n"), 0 if buf[pos] ends no line.
 * A CR that is not followed by LF is reported as -1. */
static int line_ending_at(const char *buf, size_t len, size_t pos)
{
    if (pos >= len)
        return 0;
    if (buf[pos] == '\n')
        return 1;
    if (buf[pos] == '\r')
        return (pos + 1 < len && buf[pos + 1] == '\n') ? 2 : -1;
    return 0;
}

/* Skips the empty lines a client may send before a request (RFC 9112 section 2.2). */
static size_t skip_leading_empty_lines(const char *buf, size_t len)
{
    size_t i = 0;
    for (;;) {
        if (i < len && buf[i] == '\n')
            i += 1;
        else if (i + 1 < len && buf[i] == '\r' && buf[i + 1] == '\n')
            i += 2;
        else
            return i;
    }
}

/* Validates "METHOD SP target SP HTTP/1.x" ending at buf[line_end] (a CR or LF). */
static enum http_parse_status parse_request_line(const char *buf, size_t start, size_t line_end,
                                                 struct http_request *req)
{
    size_t i = start;
    while (i < line_end && is_tchar((unsigned char)buf[i]))
        i++;
    if (i == start || i >= line_end || buf[i] != ' ')
        return fail(req, 400, "invalid method");
    req->method = buf + start;
    req->method_len = i - start;
    i++;

    size_t target_start = i;
    while (i < line_end && is_target_char((unsigned char)buf[i]))
        i++;
    if (i == target_start || i >= line_end || buf[i] != ' ')
        return fail(req, 400, "invalid request target");
    req->target = buf + target_start;
    req->target_len = i - target_start;
    i++;

    static const char prefix[] = "HTTP/";
    size_t prefix_len = sizeof prefix - 1;
    if (line_end - i != prefix_len + 3 || memcmp(buf + i, prefix, prefix_len) != 0)
        return fail(req, 400, "invalid HTTP version");
    char major = buf[i + prefix_len];
    char dot = buf[i + prefix_len + 1];
    char minor = buf[i + prefix_len + 2];
    if (major < '0' || major > '9' || dot != '.' || minor < '0' || minor > '9')
        return fail(req, 400, "invalid HTTP version");
    if (major != '1')
        return fail(req, 505, "unsupported HTTP major version");
    req->minor_version = minor - '0';
    req->is_head = req->method_len == 4 && memcmp(req->method, "HEAD", 4) == 0;
    return HTTP_PARSE_COMPLETE;
}

static bool parse_content_length(const char *value, size_t len, uint64_t *out)
{
    if (len == 0)
        return false;
    uint64_t n = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)value[i];
        if (c < '0' || c > '9')
            return false;
        if (n > (UINT64_MAX - 9) / 10)
            return false;
        n = n * 10 + (uint64_t)(c - '0');
    }
    *out = n;
    return true;
}

struct connection_tokens {
    bool close;
    bool keep_alive;
};

static void parse_connection_tokens(const char *value, size_t len, struct connection_tokens *tokens)
{
    size_t i = 0;
    while (i < len) {
        while (i < len && (value[i] == ' ' || value[i] == '\t' || value[i] == ','))
            i++;
        size_t start = i;
        while (i < len && value[i] != ',' && value[i] != ' ' && value[i] != '\t')
            i++;
        if (equals_ignore_case(value + start, i - start, "close"))
            tokens->close = true;
        else if (equals_ignore_case(value + start, i - start, "keep-alive"))
            tokens->keep_alive = true;
    }
}

struct framing {
    bool has_content_length;
    bool has_transfer_encoding;
    int host_count;
    struct connection_tokens connection;
};

static enum http_parse_status apply_header(const char *name, size_t name_len, const char *value, size_t value_len,
                                           struct framing *framing, struct http_request *req)
{
    if (equals_ignore_case(name, name_len, "content-length")) {
        uint64_t n;
        if (!parse_content_length(value, value_len, &n))
            return fail(req, 400, "invalid Content-Length");
        if (framing->has_content_length && n != req->content_length)
            return fail(req, 400, "conflicting Content-Length");
        framing->has_content_length = true;
        req->content_length = n;
    } else if (equals_ignore_case(name, name_len, "transfer-encoding")) {
        framing->has_transfer_encoding = true;
    } else if (equals_ignore_case(name, name_len, "connection")) {
        parse_connection_tokens(value, value_len, &framing->connection);
    } else if (equals_ignore_case(name, name_len, "host")) {
        framing->host_count++;
    }
    return HTTP_PARSE_COMPLETE;
}

/* Parses the header lines in buf[pos..head_end); the head is known to be complete. */
static enum http_parse_status parse_headers(const char *buf, size_t pos, size_t head_end, struct framing *framing,
                                            struct http_request *req)
{
    for (;;) {
        int eol = line_ending_at(buf, head_end, pos);
        if (eol > 0)
            return HTTP_PARSE_COMPLETE; /* the empty line */
        if (eol < 0)
            return fail(req, 400, "bare CR in header section");
        if (buf[pos] == ' ' || buf[pos] == '\t')
            return fail(req, 400, "obsolete line folding");

        size_t name_start = pos;
        while (pos < head_end && is_tchar((unsigned char)buf[pos]))
            pos++;
        if (pos == name_start || pos >= head_end || buf[pos] != ':')
            return fail(req, 400, "invalid header name");
        size_t name_len = pos - name_start;
        pos++;

        while (pos < head_end && (buf[pos] == ' ' || buf[pos] == '\t'))
            pos++;
        size_t value_start = pos;
        while (pos < head_end && buf[pos] != '\r' && buf[pos] != '\n') {
            if (!is_field_value_char((unsigned char)buf[pos]))
                return fail(req, 400, "control character in header value");
            pos++;
        }
        size_t value_end = pos;
        while (value_end > value_start && (buf[value_end - 1] == ' ' || buf[value_end - 1] == '\t'))
            value_end--;
        eol = line_ending_at(buf, head_end, pos);
        if (eol <= 0)
            return fail(req, 400, "bare CR in header section");
        pos += (size_t)eol;

        req->header_count++;
        enum http_parse_status st =
            apply_header(buf + name_start, name_len, buf + value_start, value_end - value_start, framing, req);
        if (st != HTTP_PARSE_COMPLETE)
            return st;
    }
}

/* Finds the end of the head (the byte after its empty line) at or after scan->scanned;
 * returns 0 when the head is not complete yet. */
static size_t find_head_end(const char *buf, size_t len, size_t start, struct http_scan *scan)
{
    size_t i = scan->scanned > start ? scan->scanned : start;
    while (i < len) {
        const char *nl = memchr(buf + i, '\n', len - i);
        if (nl == NULL) {
            scan->scanned = len;
            return 0;
        }
        size_t j = (size_t)(nl - buf);
        if (j + 1 >= len) {
            scan->scanned = j; /* look at this LF again when more bytes arrive */
            return 0;
        }
        if (buf[j + 1] == '\n')
            return j + 2;
        if (buf[j + 1] == '\r') {
            if (j + 2 >= len) {
                scan->scanned = j;
                return 0;
            }
            if (buf[j + 2] == '\n')
                return j + 3;
        }
        i = j + 1;
    }
    scan->scanned = len;
    return 0;
}

static size_t request_line_end(const char *buf, size_t start, size_t len)
{
    const char *nl = memchr(buf + start, '\n', len - start);
    if (nl == NULL)
        return 0;
    size_t end = (size_t)(nl - buf);
    if (end > start && buf[end - 1] == '\r')
        end--;
    return end;
}

/* The errors a head can show before it is complete, decided the way a client
 * sending it one byte at a time meets them, so that the answer never depends
 * on how the bytes were split: the request line once its line feed has
 * arrived within the size limit, then a NUL byte within the limit, then the
 * limit itself. (Of two errors the earlier byte decides; at the same byte, in
 * that order.) buf[0..len) is a prefix of the head, or the whole head; bytes
 * before nul_from are known to hold no NUL. */
static enum http_parse_status early_error(const char *buf, size_t start, size_t len, size_t nul_from,
                                          struct http_request *req)
{
    const char *nl = start < len ? memchr(buf + start, '\n', len - start) : NULL;
    if (nl != NULL && (size_t)(nl - buf) <= HTTP_MAX_HEAD_BYTES &&
        parse_request_line(buf, start, request_line_end(buf, start, len), req) == HTTP_PARSE_ERROR)
        return HTTP_PARSE_ERROR;
    size_t limit = len < HTTP_MAX_HEAD_BYTES + 1 ? len : HTTP_MAX_HEAD_BYTES + 1;
    if (nul_from < limit && memchr(buf + nul_from, '\0', limit - nul_from) != NULL)
        return fail(req, 400, "NUL byte in request head");
    if (len > HTTP_MAX_HEAD_BYTES)
        return fail(req, 431, "request head too large");
    return HTTP_PARSE_INCOMPLETE;
}

enum http_parse_status http_parse_request(const char *buf, size_t len, struct http_scan *scan, struct http_request *req)
{
    memset(req, 0, sizeof *req);
    size_t previously_scanned = scan->scanned < len ? scan->scanned : len;
    size_t start = skip_leading_empty_lines(buf, len);
    size_t head_end = find_head_end(buf, len, start, scan);
    if (head_end == 0) {
        /* Everything here is head so far: reject what can never become a valid head
         * now, instead of waiting for the rest of a head that may never come. */
        if (early_error(buf, start, len, previously_scanned, req) == HTTP_PARSE_ERROR)
            return HTTP_PARSE_ERROR;
        memset(req, 0, sizeof *req);
        return HTTP_PARSE_INCOMPLETE;
    }
    if (head_end > HTTP_MAX_HEAD_BYTES) {
        /* Over the limit: whichever error a byte-by-byte sender would have met first. */
        size_t nul_from = previously_scanned < head_end ? previously_scanned : head_end;
        early_error(buf, start, head_end, nul_from, req);
        return HTTP_PARSE_ERROR;
    }
    /* Within the limit the checks below meet the early errors in the same order:
     * the request line first, then any NUL (a 400 wherever it is in the header
     * section, before the framing checks). */
    req->head_bytes = head_end;

    size_t line_end = request_line_end(buf, start, head_end);
    if (parse_request_line(buf, start, line_end, req) == HTTP_PARSE_ERROR)
        return HTTP_PARSE_ERROR;
    int eol = line_ending_at(buf, head_end, line_end);
    if (eol <= 0)
        return fail(req, 400, "bare CR in request line");

    struct framing framing;
    memset(&framing, 0, sizeof framing);
    if (parse_headers(buf, line_end + (size_t)eol, head_end, &framing, req) == HTTP_PARSE_ERROR)
        return HTTP_PARSE_ERROR;

    if (framing.has_transfer_encoding) {
        if (framing.has_content_length)
            return fail(req, 400, "both Transfer-Encoding and Content-Length");
        return fail(req, 501, "Transfer-Encoding not supported");
    }
    if (req->minor_version >= 1 && framing.host_count != 1)
        return fail(req, 400, framing.host_count == 0 ? "missing Host" : "repeated Host");
    if (req->content_length > HTTP_MAX_BODY_BYTES)
        return fail(req, 413, "request body too large");

    if (req->minor_version >= 1)
        req->keep_alive = !framing.connection.close;
    else
        req->keep_alive = framing.connection.keep_alive && !framing.connection.close;
    return HTTP_PARSE_COMPLETE;
}
