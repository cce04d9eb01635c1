/* Snapshot compression: Baton's own lz4 framing of the state machine's
 * snapshot, since libraft 0.22.1 writes snapshots as they are given. */
#include "snapzip.h"

#include <string.h>

#include <lz4frame.h>

#include "../../../include/baton.h"
#include "../../lib/cursor.h"

static const uint8_t magic[4] = {'B', 'T', 'N', 'Z'};

/* LZ4 cannot expand data more than 255-fold: a claimed length beyond that
 * is corrupt, and is refused before anything is allocated for it. */
#define MAX_RATIO 256

int snapzip_pack(const struct mem *mem, const struct iovec *parts, unsigned n,
                 void **out, size_t *out_len)
{
        LZ4F_preferences_t prefs;
        LZ4F_cctx *cctx = NULL;
        struct wcursor w;
        size_t raw = 0, cap, len, r;
        uint8_t *buf = NULL;
        unsigned i;

        for (i = 0; i < n; i++) {
                raw += parts[i].iov_len;
        }
        memset(&prefs, 0, sizeof prefs);
        prefs.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
        /* The bound of one update with everything, plus the end mark: the
         * parts are fed one by one, which never needs more. */
        cap = SNAPZIP_HEADER_SIZE + LZ4F_HEADER_SIZE_MAX +
              LZ4F_compressBound(raw, &prefs) + n * 16;
        buf = mem_alloc(mem, cap);
        if (buf == NULL ||
            LZ4F_isError(LZ4F_createCompressionContext(&cctx, LZ4F_VERSION))) {
                goto err;
        }
        wcursor_init(&w, buf, SNAPZIP_HEADER_SIZE);
        wcursor_bytes(&w, magic, sizeof magic);
        wcursor_u32(&w, 0);
        wcursor_u64(&w, raw);
        len = SNAPZIP_HEADER_SIZE;
        r = LZ4F_compressBegin(cctx, buf + len, cap - len, &prefs);
        if (LZ4F_isError(r)) {
                goto err;
        }
        len += r;
        for (i = 0; i < n; i++) {
                r = LZ4F_compressUpdate(cctx, buf + len, cap - len,
                                        parts[i].iov_base, parts[i].iov_len,
                                        NULL);
                if (LZ4F_isError(r)) {
                        goto err;
                }
                len += r;
        }
        r = LZ4F_compressEnd(cctx, buf + len, cap - len, NULL);
        if (LZ4F_isError(r)) {
                goto err;
        }
        len += r;
        LZ4F_freeCompressionContext(cctx);
        *out = buf;
        *out_len = len;
        return 0;
err:
        /* Only a failed allocation (lz4's or ours) gets here: the bound
         * above is what lz4 documents as enough. */
        LZ4F_freeCompressionContext(cctx);
        mem_free(mem, buf);
        return BATON_ENOMEM;
}

bool snapzip_is_packed(const void *buf, size_t len)
{
        return len >= sizeof magic && memcmp(buf, magic, sizeof magic) == 0;
}

int snapzip_unpack(const struct mem *mem, const void *buf, size_t len,
                   void **out, size_t *out_len)
{
        LZ4F_dctx *dctx = NULL;
        struct rcursor c;
        size_t raw, done = 0, used = 0, r = 1;
        const uint8_t *src = buf;
        uint8_t *dst;
        int rv = BATON_ECORRUPT;

        if (!snapzip_is_packed(buf, len) || len < SNAPZIP_HEADER_SIZE) {
                return BATON_ECORRUPT;
        }
        rcursor_init(&c, src + sizeof magic, SNAPZIP_HEADER_SIZE - 4);
        if (rcursor_u32(&c) != 0) {
                return BATON_ECORRUPT;
        }
        raw = rcursor_u64(&c);
        if (raw / MAX_RATIO > len) {
                return BATON_ECORRUPT;
        }
        dst = mem_alloc(mem, raw > 0 ? raw : 1);
        if (dst == NULL) {
                return BATON_ENOMEM;
        }
        if (LZ4F_isError(
                LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION))) {
                rv = BATON_ENOMEM;
                goto out;
        }
        src += SNAPZIP_HEADER_SIZE;
        len -= SNAPZIP_HEADER_SIZE;
        /* r == 0 once the frame (checksum included) is complete. */
        while (r != 0 && used < len) {
                size_t in = len - used, room = raw - done;
                r = LZ4F_decompress(dctx, dst + done, &room, src + used, &in,
                                    NULL);
                if (LZ4F_isError(r) || (in == 0 && room == 0)) {
                        goto out;
                }
                used += in;
                done += room;
        }
        if (r == 0 && used == len && done == raw) {
                rv = 0;
        }
out:
        LZ4F_freeDecompressionContext(dctx);
        if (rv != 0) {
                mem_free(mem, dst);
                return rv;
        }
        *out = dst;
        *out_len = raw;
        return 0;
}
