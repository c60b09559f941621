/* A bounded hand-off between threads: mutex, two condition variables, and a
 * ring that is read FIFO (a fair queue) or LIFO (the stack of source 003, kept
 * because its starvation of early arrivals is part of what the study shows). */
#ifndef ARCHBENCH_WORK_QUEUE_H
#define ARCHBENCH_WORK_QUEUE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct work_queue {
    intptr_t *items;
    size_t capacity;
    size_t head; /* oldest item */
    size_t count;
    bool lifo;
    bool closed;
    pthread_mutex_t lock;
    pthread_cond_t not_empty;
    pthread_cond_t not_full;
};

enum work_queue_order { WORK_QUEUE_FIFO, WORK_QUEUE_LIFO };

bool work_queue_init(struct work_queue *q, size_t capacity, enum work_queue_order order);
void work_queue_destroy(struct work_queue *q);
/* Blocks while full; false once the queue is closed (the item was not queued). */
bool work_queue_push(struct work_queue *q, intptr_t item);
/* Blocks while empty; false once the queue is closed. */
bool work_queue_pop(struct work_queue *q, intptr_t *item);
/* Takes an item without waiting, closed or not (for draining at shutdown). */
bool work_queue_take(struct work_queue *q, intptr_t *item);
/* Wakes every waiter; later pushes and pops fail. */
void work_queue_close(struct work_queue *q);

#endif
