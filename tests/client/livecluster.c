/* The live 3-node cluster a cmocka group of libbaton tests shares: the
 * group's setup and teardown, and the case fixture that brings every node
 * back after a case that killed or paused some. */
#include "livecluster.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

/* What livecluster_use() was given: set once, before the group runs. */
static struct {
        struct harness *h;
        const char *argv0;
        unsigned watchdog_s;
} live;

void livecluster_use(struct harness *h, const char *argv0, unsigned watchdog_s)
{
        live.h = h;
        live.argv0 = argv0;
        live.watchdog_s = watchdog_s;
}

const char *livecluster_endpoints(void)
{
        return live.h->endpoints;
}

int livecluster_up(void **state)
{
        unsigned leader;

        (void)state;
        if (harness_open_healthy(live.h, 3, live.argv0, live.watchdog_s,
                                 LIVECLUSTER_HEALTHY_MS, &leader) != 0) {
                print_message("# cluster: %s\n", live.h->errmsg);
                return -1;
        }
        return 0;
}

int livecluster_down(void **state)
{
        (void)state;
        harness_close(live.h);
        return 0;
}

int livecluster_restore(void **state)
{
        struct harness *h = live.h;
        unsigned i, leader;

        (void)state;
        for (i = 1; i <= h->n; i++) {
                struct harness_node *nd = &h->nodes[i - 1];
                if (nd->pid > 0 && nd->paused) {
                        harness_resume(h, i);
                } else if (nd->pid == 0) {
                        harness_restart(h, i);
                }
        }
        if (harness_wait_healthy(h, LIVECLUSTER_HEALTHY_MS, &leader) != 0) {
                print_message("# cluster did not recover: %s\n", h->errmsg);
                h->failed = true;
                return -1;
        }
        return 0;
}
