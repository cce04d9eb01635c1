/* One job on a thread of its own (bgjob.h). */
#include "bgjob.h"

#include <string.h>

#include "../../../include/baton/errors.h"
#include "../base/crashpoint.h"

void bgjob_init(struct bgjob *j)
{
        memset(j, 0, sizeof *j);
        atomic_init(&j->finished, false);
}

static void *run(void *data)
{
        struct bgjob *j = data;

        j->rv = j->fn(j->arg);
        /* A restore decoded or a tail spilled, the loop not told yet. */
        CRASHPOINT("bgjob-after");
        /* Release: the loop that sees `finished` sees everything the job
         * wrote before it. */
        atomic_store_explicit(&j->finished, true, memory_order_release);
        if (j->wake != NULL) {
                j->wake(j->wake_data);
        }
        return NULL;
}

int bgjob_start(struct bgjob *j, int (*fn)(void *arg), void *arg)
{
        j->fn = fn;
        j->arg = arg;
        j->rv = 0;
        atomic_store(&j->finished, false);
        if (pthread_create(&j->thread, NULL, run, j) != 0) {
                return BATON_ENOMEM;
        }
        j->running = true;
        return 0;
}

void bgjob_set_wake(struct bgjob *j, void (*wake)(void *data), void *data)
{
        j->wake = wake;
        j->wake_data = data;
}

bool bgjob_running(const struct bgjob *j)
{
        return j->running;
}

bool bgjob_finished(const struct bgjob *j)
{
        return j->running &&
               atomic_load_explicit(&j->finished, memory_order_acquire);
}

int bgjob_join(struct bgjob *j)
{
        if (!j->running) {
                return 0;
        }
        pthread_join(j->thread, NULL);
        j->running = false;
        return j->rv;
}
