/* Threads that call baton_acquire() on a handle. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "../lib/tclient.h"
#include "acqthread.h"
#include "livecluster.h"

static void *acquire_main(void *arg)
{
        struct acqthread *k = arg;

        k->started = tclient_now_ms();
        k->rv = baton_acquire(k->c, k->name, k->owner, k->wait_ms, &k->token);
        k->took = tclient_now_ms() - k->started;
        atomic_store(&k->done, true);
        return NULL;
}

void acqthread_start_owner(struct acqthread *k, baton_client *c,
                           const char *name, uint64_t owner, int64_t wait_ms)
{
        memset(k, 0, sizeof *k);
        k->c = c;
        k->name = name;
        k->owner = owner;
        k->wait_ms = wait_ms;
        atomic_init(&k->done, false);
        assert_int_equal(pthread_create(&k->thread, NULL, acquire_main, k), 0);
}

void acqthread_start(struct acqthread *k, baton_client *c, const char *name,
                     int64_t wait_ms)
{
        acqthread_start_owner(k, c, name, BATON_OWNER_THREAD, wait_ms);
}

void acqthread_wait_waiters(baton_client *c, const char *name, uint32_t waiters)
{
        int64_t deadline = tclient_now_ms() + LIVECLUSTER_HEALTHY_MS;
        struct baton_holder h;

        for (;;) {
                if (baton_holder(c, name, &h) == 0 && h.waiters >= waiters) {
                        return;
                }
                assert_true(tclient_now_ms() < deadline);
                tclient_sleep_ms(10);
        }
}
