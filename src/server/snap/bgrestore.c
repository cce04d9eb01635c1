/* A snapshot restored on a worker thread while the loop queues entries. */
#include "bgrestore.h"

#include <stdlib.h>
#include <string.h>

#include "../../../include/baton.h"

void bgrestore_init(struct bgrestore *b)
{
        memset(b, 0, sizeof *b);
        bgjob_init(&b->job);
}

int bgrestore_start(struct bgrestore *b, int (*job)(void *arg), void *arg)
{
        return bgjob_start(&b->job, job, arg);
}

void bgrestore_set_wake(struct bgrestore *b, void (*wake)(void *data),
                        void *data)
{
        bgjob_set_wake(&b->job, wake, data);
}

bool bgrestore_running(const struct bgrestore *b)
{
        return bgjob_running(&b->job);
}

bool bgrestore_finished(const struct bgrestore *b)
{
        return bgjob_finished(&b->job);
}

int bgrestore_join(struct bgrestore *b)
{
        return bgjob_join(&b->job);
}

int bgrestore_queue(struct bgrestore *b, uint64_t index, const void *buf,
                    size_t len)
{
        struct bgrestore_entry *e;

        if (b->head + b->n == b->cap) {
                size_t cap = b->cap == 0 ? 64 : 2 * b->cap;
                struct bgrestore_entry *q;

                if (b->head > 0) { /* slide the live part down first */
                        memmove(b->q, b->q + b->head, b->n * sizeof *b->q);
                        b->head = 0;
                }
                if (b->n == b->cap) {
                        q = realloc(b->q, cap * sizeof *q);
                        if (q == NULL) {
                                return BATON_ENOMEM;
                        }
                        b->q = q;
                        b->cap = cap;
                }
        }
        e = &b->q[b->head + b->n];
        e->buf = malloc(len > 0 ? len : 1);
        if (e->buf == NULL) {
                return BATON_ENOMEM;
        }
        memcpy(e->buf, buf, len);
        e->index = index;
        e->len = len;
        b->n++;
        return 0;
}

const struct bgrestore_entry *bgrestore_peek(const struct bgrestore *b)
{
        return b->n > 0 ? &b->q[b->head] : NULL;
}

void bgrestore_pop(struct bgrestore *b)
{
        if (b->n == 0) {
                return;
        }
        free(b->q[b->head].buf);
        b->head++;
        b->n--;
        if (b->n == 0) {
                b->head = 0;
        }
}

void bgrestore_drop(struct bgrestore *b)
{
        while (b->n > 0) {
                bgrestore_pop(b);
        }
        free(b->q);
        b->q = NULL;
        b->cap = 0;
}

static void *run_dispose(void *data)
{
        struct bgrestore *b = data;

        b->dispose_fn(b->dispose_p);
        return NULL;
}

static void join_disposer(struct bgrestore *b)
{
        if (b->disposing) {
                pthread_join(b->disposer, NULL);
                b->disposing = false;
        }
}

void bgrestore_dispose(struct bgrestore *b, void (*fn)(void *p), void *p)
{
        join_disposer(b);
        b->dispose_fn = fn;
        b->dispose_p = p;
        if (pthread_create(&b->disposer, NULL, run_dispose, b) == 0) {
                b->disposing = true;
                return;
        }
        fn(p);
}

void bgrestore_close(struct bgrestore *b)
{
        (void)bgrestore_join(b);
        join_disposer(b);
        bgrestore_drop(b);
}
