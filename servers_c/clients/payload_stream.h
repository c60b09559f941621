/* The payload streams: connection i sends a pseudo-random stream in which byte
 * k is a function of (--seed, i, k) (splitmix64 over 8-byte blocks), so every
 * received byte is checked against what must be at its offset without keeping
 * a copy of what was sent. Inline: the worker calls them for every chunk. */
#ifndef ARCHBENCH_PAYLOAD_STREAM_H
#define ARCHBENCH_PAYLOAD_STREAM_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline uint64_t stream_key(uint64_t seed, uint64_t connection)
{
    return mix64(seed * 0x9e3779b97f4a7c15ull + mix64(connection + 1));
}

/* Bytes [offset, offset + len) of the stream with this key. */
static inline void stream_fill(uint64_t key, uint64_t offset, unsigned char *out, size_t len)
{
    uint64_t block = offset / 8;
    size_t skip = (size_t)(offset % 8);
    while (len > 0) {
        uint64_t word = mix64(key + block * 0x9e3779b97f4a7c15ull);
        for (size_t b = skip; b < 8 && len > 0; b++, len--)
            *out++ = (unsigned char)(word >> (8 * b));
        skip = 0;
        block++;
    }
}

#endif
