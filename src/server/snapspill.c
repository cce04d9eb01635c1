/* Tail segments written into files on a worker thread (snapspill.h). */
#include "snapspill.h"

#include <string.h>

#include "../../include/baton.h"

void snapspill_init(struct snapspill *sp)
{
        memset(sp, 0, sizeof *sp);
        sp->dir_fd = -1;
        atomic_init(&sp->finished, false);
}

static void *run(void *data)
{
        struct snapspill *sp = data;

        sp->err = snapimage_bytes_write(sp->dir_fd, sp->src, sp->len, &sp->out);
        /* Release: the loop that sees `finished` sees `out` and `err`. */
        atomic_store_explicit(&sp->finished, true, memory_order_release);
        return NULL;
}

int snapspill_start(struct snapspill *sp, int dir_fd, const void *p, size_t len,
                    void *tag)
{
        sp->dir_fd = dir_fd;
        sp->src = p;
        sp->len = len;
        sp->tag = tag;
        sp->err = 0;
        memset(&sp->out, 0, sizeof sp->out);
        atomic_store(&sp->finished, false);
        if (pthread_create(&sp->worker, NULL, run, sp) != 0) {
                return BATON_ENOMEM;
        }
        sp->running = true;
        return 0;
}

bool snapspill_finished(const struct snapspill *sp)
{
        return sp->running &&
               atomic_load_explicit(&sp->finished, memory_order_acquire);
}

int snapspill_join(struct snapspill *sp, struct snapimage_bytes *out,
                   void **tag)
{
        pthread_join(sp->worker, NULL);
        sp->running = false;
        *out = sp->out;
        *tag = sp->tag;
        memset(&sp->out, 0, sizeof sp->out);
        if (sp->err != 0) {
                sp->n_failed++;
                sp->last_err = sp->err;
        } else {
                sp->n_spilled++;
        }
        return sp->err;
}
