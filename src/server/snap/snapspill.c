/* Tail segments written into files on a worker thread (snapspill.h). */
#include "snapspill.h"

#include <string.h>

void snapspill_init(struct snapspill *sp)
{
        memset(sp, 0, sizeof *sp);
        bgjob_init(&sp->job);
        sp->dir_fd = -1;
}

/* On the worker: the file's bytes in `out`; its result is the errno. */
static int write_job(void *data)
{
        struct snapspill *sp = data;

        return snapimage_bytes_write(sp->dir_fd, sp->src, sp->len, &sp->out);
}

int snapspill_start(struct snapspill *sp, int dir_fd, const void *p, size_t len,
                    void *tag)
{
        sp->dir_fd = dir_fd;
        sp->src = p;
        sp->len = len;
        sp->tag = tag;
        memset(&sp->out, 0, sizeof sp->out);
        return bgjob_start(&sp->job, write_job, sp);
}

bool snapspill_running(const struct snapspill *sp)
{
        return bgjob_running(&sp->job);
}

bool snapspill_finished(const struct snapspill *sp)
{
        return bgjob_finished(&sp->job);
}

int snapspill_join(struct snapspill *sp, struct snapimage_bytes *out,
                   void **tag)
{
        int err = bgjob_join(&sp->job);

        *out = sp->out;
        *tag = sp->tag;
        memset(&sp->out, 0, sizeof sp->out);
        if (err != 0) {
                sp->n_failed++;
                sp->last_err = err;
        } else {
                sp->n_spilled++;
        }
        return err;
}
