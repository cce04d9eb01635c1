/* fusetmpfile: libfuse 3.14's session loop, but for FUSE_TMPFILE (see
 * fusetmpfile.h). */
#define FUSE_USE_VERSION 31

#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <fuse_lowlevel.h>
#include <linux/fuse.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fusetmpfile.h"

/* A FUSE_TMPFILE request in `b` becomes a FUSE_CREATE of a new hidden name
 * in the same directory, written to `out` (`cap` bytes), which `b` then
 * points to. The two requests carry the same arguments (fuse_create_in,
 * then a name: "/" for FUSE_TMPFILE) and take the same reply. */
static void tmpfile_as_create(unsigned *made, struct fuse_buf *b, char *out,
                              size_t cap)
{
        struct fuse_in_header h;
        struct fuse_create_in c;
        size_t args = sizeof h + sizeof c;
        int n;

        if ((b->flags & FUSE_BUF_IS_FD) || b->size < args) {
                return;
        }
        memcpy(&h, b->mem, sizeof h);
        if (h.opcode != FUSE_TMPFILE) {
                return;
        }
        memcpy(&c, (char *)b->mem + sizeof h, sizeof c);
        c.flags = (c.flags & ~(uint32_t)O_TMPFILE) | O_CREAT | O_EXCL;
        n = snprintf(out + args, cap - args, FUSETMPFILE_PREFIX "%u",
                     (*made)++);
        h.opcode = FUSE_CREATE;
        h.len = (uint32_t)(args + (size_t)n + 1);
        memcpy(out, &h, sizeof h);
        memcpy(out + sizeof h, &c, sizeof c);
        b->mem = out;
        b->size = h.len;
}

/* libfuse's fuse_session_loop, with FUSE_TMPFILE turned into a create. */
static int serve(struct fuse_session *se)
{
        struct fuse_buf buf = {.mem = NULL};
        char out[sizeof(struct fuse_in_header) + sizeof(struct fuse_create_in) +
                 64];
        unsigned made = 0;
        int rv = 0;

        while (!fuse_session_exited(se)) {
                struct fuse_buf one;

                rv = fuse_session_receive_buf(se, &buf);
                if (rv == -EINTR) {
                        continue;
                }
                if (rv <= 0) {
                        break;
                }
                one = buf;
                tmpfile_as_create(&made, &one, out, sizeof out);
                fuse_session_process_buf(se, &one);
        }
        free(buf.mem);
        fuse_session_reset(se);
        return rv < 0 ? 1 : 0;
}

int fusetmpfile_main(int argc, char **argv, const struct fuse_operations *ops,
                     void *data)
{
        struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
        struct fuse_cmdline_opts o;
        struct fuse *fuse;
        struct fuse_session *se;
        int rv = 1;

        if (fuse_parse_cmdline(&args, &o) != 0 || o.mountpoint == NULL) {
                fprintf(stderr, "%s: bad FUSE options\n", argv[0]);
                goto err;
        }
        fuse = fuse_new(&args, ops, sizeof *ops, data);
        if (fuse == NULL) {
                goto err_after_parse;
        }
        if (fuse_mount(fuse, o.mountpoint) != 0) {
                goto err_after_new;
        }
        se = fuse_get_session(fuse);
        if (fuse_daemonize(o.foreground) != 0 ||
            fuse_set_signal_handlers(se) != 0) {
                goto err_after_mount;
        }
        rv = serve(se);
        fuse_remove_signal_handlers(se);
err_after_mount:
        fuse_unmount(fuse);
err_after_new:
        fuse_destroy(fuse);
err_after_parse:
        free(o.mountpoint);
err:
        fuse_opt_free_args(&args);
        return rv;
}
