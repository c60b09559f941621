/* pong's output: what is owed goes out as the response repeated, byte-exact,
 * across partial sends (a small send buffer, a reader that drains slowly). */
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "expect.h"
#include "pong_output.h"

#define RESPONSE "HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nContent-Length: 4\r\nContent-Type: text/html\r\n\r\ntest"

static void test_block_holds_whole_copies(void)
{
    struct pong_block block;
    EXPECT(pong_block_build(&block, RESPONSE, strlen(RESPONSE)), "build");
    EXPECT(block.len % block.response_len == 0 && block.len >= 65536, "block of %zu bytes", block.len);
    for (size_t at = 0; at < block.len; at += block.response_len)
        EXPECT(memcmp(block.bytes + at, RESPONSE, block.response_len) == 0, "copy at %zu", at);
    pong_block_free(&block);
}

/* Owes `responses` responses over a non-blocking socket pair and reads them back. */
static void send_and_check(size_t responses)
{
    int fds[2];
    EXPECT(socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0, "socketpair");
    int small = 4096;
    setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
    fcntl(fds[0], F_SETFL, O_NONBLOCK);
    struct pong_block block;
    pong_block_build(&block, RESPONSE, strlen(RESPONSE));
    size_t total = responses * block.response_len;
    uint64_t owed = total;
    char *got = malloc(total + 1);
    size_t received = 0;
    int blocked = 0;
    while (received < total) {
        enum pong_send_result r = pong_send_owed(fds[0], &block, &owed);
        EXPECT(r != PONG_SEND_FAILED, "send failed");
        if (r == PONG_SEND_FAILED)
            break;
        blocked += r == PONG_SEND_BLOCKED;
        ssize_t n = read(fds[1], got + received, 1000); /* a slow reader: small reads */
        if (n > 0)
            received += (size_t)n;
    }
    EXPECT(owed == 0, "%llu bytes still owed", (unsigned long long)owed);
    EXPECT(received == total, "received %zu of %zu", received, total);
    for (size_t at = 0; at + block.response_len <= received; at += block.response_len)
        EXPECT(memcmp(got + at, RESPONSE, block.response_len) == 0, "response %zu", at / block.response_len);
    EXPECT(responses < 1000 || blocked > 0, "%zu responses never blocked: no partial send was tested", responses);
    free(got);
    pong_block_free(&block);
    close(fds[0]);
    close(fds[1]);
}

int main(void)
{
    test_block_holds_whole_copies();
    send_and_check(1);
    send_and_check(16);
    send_and_check(5000); /* more than the block and the socket buffers: partial sends resumed mid-response */
    return expect_report("pong_output");
}
