/* The data directory's part of the raft hellos (rafthello.h). */
#include "rafthello.h"

#include <string.h>

#include "../../lib/cursor.h"

#define EXT_VERSION     1
#define VERDICT_VERSION 1
#define TLS_MAGIC       0x315250544f544142ull /* "BATONPR1" little-endian */

size_t rafthello_field(uint8_t *out, size_t cap, const char *address,
                       const struct rafthello_ext *e)
{
        size_t len = strlen(address);
        struct wcursor w;

        if (len + 1 + RAFTHELLO_EXT_LEN > cap) {
                return 0;
        }
        wcursor_init(&w, out, cap);
        wcursor_bytes(&w, address, len);
        wcursor_u8(&w, 0);
        wcursor_u8(&w, 'b');
        wcursor_u8(&w, 'x');
        wcursor_u8(&w, EXT_VERSION);
        wcursor_u64(&w, e->cluster);
        wcursor_u64(&w, e->incarnation);
        return len + 1 + RAFTHELLO_EXT_LEN;
}

int rafthello_split(const uint8_t *field, size_t len, char *address, size_t cap,
                    struct rafthello_ext *e, bool *has_ext)
{
        const uint8_t *nul = memchr(field, 0, len);
        size_t alen = nul != NULL ? (size_t)(nul - field) : len;
        struct rcursor r;

        *has_ext = false;
        memset(e, 0, sizeof *e);
        if (alen == 0 || alen + 1 > cap) {
                return -1;
        }
        memcpy(address, field, alen);
        address[alen] = '\0';
        if (nul == NULL || len - alen - 1 < RAFTHELLO_EXT_LEN) {
                return 0;
        }
        rcursor_init(&r, nul + 1, RAFTHELLO_EXT_LEN);
        if (rcursor_u8(&r) != 'b' || rcursor_u8(&r) != 'x' ||
            rcursor_u8(&r) != EXT_VERSION) {
                return 0; /* padding, or an addition this build does not
                             know: taken for an older node's */
        }
        e->cluster = rcursor_u64(&r);
        e->incarnation = rcursor_u64(&r);
        *has_ext = e->incarnation != 0;
        return 0;
}

size_t rafthello_tls_encode(uint8_t *out, uint64_t id, const uint8_t *field,
                            size_t len)
{
        struct wcursor w;

        wcursor_init(&w, out, RAFTHELLO_TLS_MAX);
        wcursor_u64(&w, TLS_MAGIC);
        wcursor_u64(&w, id);
        wcursor_u16(&w, (uint16_t)len);
        wcursor_bytes(&w, field, len);
        return RAFTHELLO_TLS_FIXED + len;
}

/* Copy up to `want` bytes in all from `p` into `in`: how many it took. */
static size_t gather(struct rafthello_in *in, size_t want, const uint8_t *p,
                     size_t n)
{
        size_t take = want > in->len ? want - in->len : 0;

        take = take < n ? take : n;
        memcpy(in->buf + in->len, p, take);
        in->len += take;
        return take;
}

long rafthello_tls_take(struct rafthello_in *in, const uint8_t *p, size_t n,
                        bool *done, struct rafthello_hello *h)
{
        size_t used = gather(in, RAFTHELLO_TLS_FIXED, p, n);
        struct rcursor r;
        uint16_t flen;

        *done = false;
        if (in->len < RAFTHELLO_TLS_FIXED) {
                return (long)used;
        }
        rcursor_init(&r, in->buf, RAFTHELLO_TLS_FIXED);
        if (rcursor_u64(&r) != TLS_MAGIC) {
                return -1;
        }
        h->id = rcursor_u64(&r);
        flen = rcursor_u16(&r);
        if (h->id == 0 || flen == 0 || flen > ADDRESS_MAX) {
                return -1;
        }
        used += gather(in, RAFTHELLO_TLS_FIXED + flen, p + used, n - used);
        if (in->len < RAFTHELLO_TLS_FIXED + (size_t)flen) {
                return (long)used;
        }
        if (rafthello_split(in->buf + RAFTHELLO_TLS_FIXED, flen, h->address,
                            sizeof h->address, &h->ext, &h->has_ext) != 0) {
                return -1;
        }
        *done = true;
        return (long)used;
}

size_t rafthello_own_field(uint8_t *out, size_t cap, const char *address,
                           const struct rafthello_ext *e, bool *ext)
{
        size_t len = e != NULL ? rafthello_field(out, cap, address, e) : 0;

        *ext = len > 0;
        if (len == 0) {
                len = strlen(address);
                len = len < cap ? len : cap;
                memcpy(out, address, len);
        }
        return len;
}

long rafthello_verdict_take(struct rafthello_in *in, const uint8_t *p, size_t n,
                            bool *done, struct rafthello_verdict *v)
{
        size_t used = gather(in, RAFTHELLO_VERDICT_LEN, p, n);

        *done = in->len == RAFTHELLO_VERDICT_LEN;
        if (*done && !rafthello_verdict_decode(in->buf, v)) {
                return -1;
        }
        return (long)used;
}

void rafthello_verdict_encode(uint8_t *out, const struct rafthello_verdict *v)
{
        struct wcursor w;

        wcursor_init(&w, out, RAFTHELLO_VERDICT_LEN);
        wcursor_u8(&w, 'b');
        wcursor_u8(&w, 'v');
        wcursor_u8(&w, VERDICT_VERSION);
        wcursor_u8(&w, v->code);
        wcursor_u64(&w, v->cluster);
        wcursor_u64(&w, v->incarnation);
        wcursor_u64(&w, v->known);
}

bool rafthello_verdict_decode(const uint8_t *in, struct rafthello_verdict *v)
{
        struct rcursor r;

        rcursor_init(&r, in, RAFTHELLO_VERDICT_LEN);
        if (rcursor_u8(&r) != 'b' || rcursor_u8(&r) != 'v' ||
            rcursor_u8(&r) != VERDICT_VERSION) {
                return false;
        }
        v->code = rcursor_u8(&r);
        v->cluster = rcursor_u64(&r);
        v->incarnation = rcursor_u64(&r);
        v->known = rcursor_u64(&r);
        return v->code <= RAFTHELLO_REMOVED;
}

enum rafthello_code rafthello_judge(const struct dirid *self, uint64_t peer,
                                    bool voter, uint64_t cluster,
                                    uint64_t incarnation)
{
        uint64_t known = dirid_peer(self, peer);

        if (self->cluster != 0 && cluster != 0 && self->cluster != cluster) {
                return RAFTHELLO_CLUSTER;
        }
        if (known != 0 && incarnation != 0 && known != incarnation && voter) {
                return RAFTHELLO_INCARNATION;
        }
        return RAFTHELLO_OK;
}
