/* Work deferred past a per-turn budget of loop time (pacer.h). */
#include "pacer.h"

static void on_busy(uv_idle_t *h)
{
        (void)h; /* active, it keeps the poll from blocking; on_turn works */
}

/* Before the loop polls: a new budget, first for what waited. */
static void on_turn(uv_prepare_t *h)
{
        struct pacer *p = h->data;

        p->spent_ns = 0;
        while (!queue_empty(&p->waiting) && pacer_room(p)) {
                struct queue *item = queue_head(&p->waiting);
                queue_remove(item);
                p->resume(p->data, item);
        }
        if (queue_empty(&p->waiting)) {
                uv_idle_stop(&p->busy);
        }
}

int pacer_init(struct pacer *p, uv_loop_t *loop, uint64_t budget_ns,
               pacer_resume_cb resume, void *data)
{
        int rv;

        queue_init(&p->waiting);
        p->budget_ns = budget_ns;
        p->spent_ns = 0;
        p->deferred = 0;
        p->resume = resume;
        p->data = data;
        rv = uv_prepare_init(loop, &p->turn);
        if (rv != 0) {
                return rv;
        }
        uv_idle_init(loop, &p->busy); /* cannot fail */
        p->turn.data = p;
        p->busy.data = p;
        uv_prepare_start(&p->turn, on_turn);
        /* Neither keeps the loop alive on its own. */
        uv_unref((uv_handle_t *)&p->turn);
        uv_unref((uv_handle_t *)&p->busy);
        return 0;
}

bool pacer_room(const struct pacer *p)
{
        return p->spent_ns < p->budget_ns;
}

void pacer_spend(struct pacer *p, uint64_t ns)
{
        p->spent_ns += ns;
}

void pacer_defer(struct pacer *p, struct queue *item)
{
        if (!queue_empty(item)) {
                return; /* waits already */
        }
        queue_push_tail(&p->waiting, item);
        p->deferred++;
        uv_idle_start(&p->busy, on_busy);
}

void pacer_cancel(struct queue *item)
{
        queue_remove(item);
}

void pacer_close(struct pacer *p)
{
        while (!queue_empty(&p->waiting)) {
                queue_remove(queue_head(&p->waiting));
        }
        uv_close((uv_handle_t *)&p->turn, NULL);
        uv_close((uv_handle_t *)&p->busy, NULL);
}
