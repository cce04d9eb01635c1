/* The incremental frame reader: whole frames out of a byte stream, with no
 * I/O. */
#include "reader.h"

#include <limits.h>
#include <string.h>

#include "../../include/baton/errors.h"
#include "reply.h"

void proto_reader_init(struct proto_reader *r, uint32_t max_body,
                       const struct mem *mem)
{
        memset(r, 0, sizeof *r);
        r->mem = mem != NULL ? mem : &mem_libc;
        r->max_body = max_body;
}

void proto_reader_close(struct proto_reader *r)
{
        mem_free(r->mem, r->body);
        r->body = NULL;
        r->body_cap = 0;
        r->body_len = 0;
        r->head_len = 0;
        r->ready = false;
}

/* Fails the reader for good: the stream has lost its framing. */
static long fail(struct proto_reader *r, int err)
{
        r->err = err;
        r->ready = false;
        return err;
}

/* Makes room for the body of r->h, whose length the header check has
 * already bounded by max_body. The buffer only ever grows, and is reused. */
static int reserve_body(struct proto_reader *r)
{
        size_t need = r->h.length;

        if (need <= r->body_cap) {
                return 0;
        }
        mem_free(r->mem, r->body);
        r->body = NULL;
        r->body_cap = 0;
        r->body = mem_alloc(r->mem, need);
        if (r->body == NULL) {
                return BATON_ENOMEM;
        }
        r->body_cap = need;
        return 0;
}

long proto_reader_feed(struct proto_reader *r, const uint8_t *buf, size_t len)
{
        size_t used = 0;
        size_t n;
        int rv;

        if (r->err != 0) {
                return r->err;
        }
        if (r->ready) {
                /* The caller is done with the previous frame. */
                r->ready = false;
                r->head_len = 0;
                r->body_len = 0;
        }
        if (len > LONG_MAX) {
                len = LONG_MAX;
        }
        if (r->head_len < PROTO_HEADER_SIZE) {
                n = PROTO_HEADER_SIZE - r->head_len;
                if (n > len) {
                        n = len;
                }
                if (n > 0) {
                        memcpy(r->head + r->head_len, buf, n);
                }
                r->head_len += n;
                used += n;
                if (r->head_len < PROTO_HEADER_SIZE) {
                        return (long)used;
                }
                rv = proto_header_decode(&r->h, r->head, r->max_body);
                if (rv != 0) {
                        return fail(r, rv);
                }
                rv = reserve_body(r);
                if (rv != 0) {
                        return fail(r, rv);
                }
                r->body_len = 0;
        }
        n = r->h.length - r->body_len;
        if (n > len - used) {
                n = len - used;
        }
        if (n > 0) {
                memcpy(r->body + r->body_len, buf + used, n);
        }
        r->body_len += n;
        used += n;
        if (r->body_len == r->h.length) {
                r->ready = true;
        }
        return (long)used;
}

size_t proto_reader_refusal(const struct proto_reader *r, uint8_t *out,
                            size_t cap, const char *message)
{
        size_t n = proto_write_error(out, cap, r->h.id, r->err, message);

        /* Version 1's header and ERROR body are this version's. */
        if (n > 0 && r->err == BATON_EVERSION && r->h.version >= 1 &&
            r->h.version < PROTO_VERSION) {
                out[0] = r->h.version;
        }
        return n;
}
