/* A min-heap of deadlines whose nodes live inside the caller's items.
 *
 * Why: with --rate, each of a worker's (up to 10,000s of) connections waits
 * for its next message's due time; the heap finds the next one in O(1) and
 * keeps it in O(log n), with no allocation once created.
 *
 * Owns: the array of node pointers (room for `cap`, given by the caller).
 * Promises: every node is in the heap at most once (index SIZE_MAX when not);
 * heap_set inserts a node or moves it to its new key; ties come out in no
 * particular order. Used by echo_client's workers (echo_conn.c, echo_worker.c). */
#ifndef ARCHBENCH_DEADLINE_HEAP_H
#define ARCHBENCH_DEADLINE_HEAP_H

#include <stddef.h>
#include <stdint.h>

struct heap_node {
    uint64_t key; /* the deadline, ns */
    size_t index; /* in the heap, or SIZE_MAX */
};

struct deadline_heap {
    struct heap_node **items;
    size_t len;
};

static inline void heap_node_init(struct heap_node *n) { n->index = SIZE_MAX; }

/* Inserts the node with this key, or moves it if it is there already. */
void heap_set(struct deadline_heap *h, struct heap_node *n, uint64_t key);

/* Takes the node out if it is in. */
void heap_remove(struct deadline_heap *h, struct heap_node *n);

/* Empties the heap (its nodes are then not in it). */
void heap_clear(struct deadline_heap *h);

/* The node with the earliest key, or NULL. */
static inline struct heap_node *heap_top(const struct deadline_heap *h) { return h->len > 0 ? h->items[0] : NULL; }

#endif
