#include "work_queue.h"

#include <stdlib.h>

bool work_queue_init(struct work_queue *q, size_t capacity, enum work_queue_order order)
{
    q->items = calloc(capacity, sizeof q->items[0]);
    q->capacity = capacity;
    q->head = 0;
    q->count = 0;
    q->lifo = order == WORK_QUEUE_LIFO;
    q->closed = false;
    pthread_mutex_init(&q->lock, NULL);
    pthread_cond_init(&q->not_empty, NULL);
    pthread_cond_init(&q->not_full, NULL);
    return q->items != NULL;
}

void work_queue_destroy(struct work_queue *q)
{
    pthread_cond_destroy(&q->not_full);
    pthread_cond_destroy(&q->not_empty);
    pthread_mutex_destroy(&q->lock);
    free(q->items);
    q->items = NULL;
}

bool work_queue_push(struct work_queue *q, intptr_t item)
{
    pthread_mutex_lock(&q->lock);
    while (q->count == q->capacity && !q->closed)
        pthread_cond_wait(&q->not_full, &q->lock);
    bool ok = !q->closed;
    if (ok) {
        q->items[(q->head + q->count) % q->capacity] = item;
        q->count++;
        pthread_cond_signal(&q->not_empty);
    }
    pthread_mutex_unlock(&q->lock);
    return ok;
}

static intptr_t remove_one(struct work_queue *q)
{
    intptr_t item;
    if (q->lifo) {
        item = q->items[(q->head + q->count - 1) % q->capacity];
    } else {
        item = q->items[q->head];
        q->head = (q->head + 1) % q->capacity;
    }
    q->count--;
    return item;
}

bool work_queue_pop(struct work_queue *q, intptr_t *item)
{
    pthread_mutex_lock(&q->lock);
    while (q->count == 0 && !q->closed)
        pthread_cond_wait(&q->not_empty, &q->lock);
    bool ok = !q->closed;
    if (ok) {
        *item = remove_one(q);
        pthread_cond_signal(&q->not_full);
    }
    pthread_mutex_unlock(&q->lock);
    return ok;
}

bool work_queue_take(struct work_queue *q, intptr_t *item)
{
    pthread_mutex_lock(&q->lock);
    bool ok = q->count > 0;
    if (ok)
        *item = remove_one(q);
    pthread_mutex_unlock(&q->lock);
    return ok;
}

void work_queue_close(struct work_queue *q)
{
    pthread_mutex_lock(&q->lock);
    q->closed = true;
    pthread_cond_broadcast(&q->not_empty);
    pthread_cond_broadcast(&q->not_full);
    pthread_mutex_unlock(&q->lock);
}
