/* A min-heap of deadlines; see deadline_heap.h. */
#include <stddef.h>
#include <stdint.h>

#include "deadline_heap.h"

static void heap_swap(struct heap_node **items, size_t a, size_t b)
{
    struct heap_node *t = items[a];
    items[a] = items[b];
    items[b] = t;
    items[a]->index = a;
    items[b]->index = b;
}

static void heap_sift(struct heap_node **items, size_t len, size_t i)
{
    while (i > 0 && items[(i - 1) / 2]->key > items[i]->key) {
        heap_swap(items, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < len && items[l]->key < items[m]->key)
            m = l;
        if (r < len && items[r]->key < items[m]->key)
            m = r;
        if (m == i)
            return;
        heap_swap(items, i, m);
        i = m;
    }
}

void heap_remove(struct deadline_heap *h, struct heap_node *n)
{
    size_t i = n->index;
    if (i == SIZE_MAX)
        return;
    n->index = SIZE_MAX;
    h->len--;
    if (i == h->len)
        return;
    h->items[i] = h->items[h->len];
    h->items[i]->index = i;
    heap_sift(h->items, h->len, i);
}

void heap_set(struct deadline_heap *h, struct heap_node *n, uint64_t key)
{
    n->key = key;
    if (n->index == SIZE_MAX) {
        n->index = h->len;
        h->items[h->len++] = n;
    }
    heap_sift(h->items, h->len, n->index);
}

void heap_clear(struct deadline_heap *h)
{
    for (size_t i = 0; i < h->len; i++)
        h->items[i]->index = SIZE_MAX;
    h->len = 0;
}
