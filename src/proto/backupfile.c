/* Backup files: header, digest, snapshot. */
#include "backupfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/evp.h>

#include "../../include/baton/cluster.h"
#include "../../include/baton/errors.h"
#include "../lib/cursor.h"

struct backupfile_digest {
        EVP_MD_CTX *ctx;
};

/* The header without its digest, which the digest covers. */
#define HEADER_FIELDS (BACKUPFILE_HEADER - BACKUPFILE_DIGEST)

static void put_fields(const struct baton_backup_info *info,
                       uint8_t out[HEADER_FIELDS])
{
        struct wcursor w;

        wcursor_init(&w, out, HEADER_FIELDS);
        wcursor_bytes(&w, BACKUPFILE_MAGIC, 8);
        wcursor_u32(&w, BACKUPFILE_FORMAT);
        wcursor_u32(&w, BACKUPFILE_HEADER);
        wcursor_u64(&w, info->index);
        wcursor_u64(&w, info->term);
        wcursor_u64(&w, info->made_ms);
        wcursor_u64(&w, info->size);
        wcursor_u64(&w, info->sessions);
        wcursor_u64(&w, info->locks);
        wcursor_u64(&w, info->grants);
        wcursor_u64(&w, info->waiters);
}

struct backupfile_digest *
backupfile_digest_new(const struct baton_backup_info *info)
{
        struct backupfile_digest *d;
        uint8_t fields[HEADER_FIELDS];

        d = OPENSSL_zalloc(sizeof *d);
        if (d == NULL) {
                return NULL;
        }
        d->ctx = EVP_MD_CTX_new();
        put_fields(info, fields);
        if (d->ctx == NULL ||
            EVP_DigestInit_ex(d->ctx, EVP_sha256(), NULL) != 1 ||
            EVP_DigestUpdate(d->ctx, fields, sizeof fields) != 1) {
                backupfile_digest_free(d);
                return NULL;
        }
        return d;
}

int backupfile_digest_add(struct backupfile_digest *d, const void *p, size_t n)
{
        return EVP_DigestUpdate(d->ctx, p, n) == 1 ? 0 : BATON_ENOMEM;
}

void backupfile_digest_free(struct backupfile_digest *d)
{
        if (d != NULL) {
                EVP_MD_CTX_free(d->ctx);
                OPENSSL_free(d);
        }
}

int backupfile_digest_finish(struct backupfile_digest *d,
                             const struct baton_backup_info *info,
                             uint8_t out[BACKUPFILE_HEADER])
{
        unsigned n = 0;
        int ok;

        put_fields(info, out);
        ok = EVP_DigestFinal_ex(d->ctx, out + HEADER_FIELDS, &n) == 1 &&
             n == BACKUPFILE_DIGEST;
        backupfile_digest_free(d);
        return ok ? 0 : BATON_ENOMEM;
}

int backupfile_check(const uint8_t *buf, size_t len,
                     struct baton_backup_info *info, const uint8_t **snapshot)
{
        uint8_t want[BACKUPFILE_HEADER];
        struct backupfile_digest *d;
        struct rcursor r;
        int rv;

        if (len < 16 || memcmp(buf, BACKUPFILE_MAGIC, 8) != 0) {
                return BATON_ECORRUPT;
        }
        rcursor_init(&r, buf + 8, 8);
        if (rcursor_u32(&r) != BACKUPFILE_FORMAT) {
                return BATON_EVERSION;
        }
        if (rcursor_u32(&r) != BACKUPFILE_HEADER || len < BACKUPFILE_HEADER) {
                return BATON_ECORRUPT;
        }
        rcursor_init(&r, buf + 16, 8 * 8);
        info->index = rcursor_u64(&r);
        info->term = rcursor_u64(&r);
        info->made_ms = rcursor_u64(&r);
        info->size = rcursor_u64(&r);
        info->sessions = rcursor_u64(&r);
        info->locks = rcursor_u64(&r);
        info->grants = rcursor_u64(&r);
        info->waiters = rcursor_u64(&r);
        if (info->size != len - BACKUPFILE_HEADER) {
                return BATON_ECORRUPT;
        }
        d = backupfile_digest_new(info);
        if (d == NULL) {
                return BATON_ENOMEM;
        }
        rv = backupfile_digest_add(d, buf + BACKUPFILE_HEADER, info->size);
        if (rv != 0) {
                backupfile_digest_free(d);
                return rv;
        }
        rv = backupfile_digest_finish(d, info, want);
        if (rv != 0) {
                return rv;
        }
        if (memcmp(want, buf, BACKUPFILE_HEADER) != 0) {
                return BATON_ECORRUPT;
        }
        *snapshot = buf + BACKUPFILE_HEADER;
        return 0;
}

int backupfile_read(const char *path, uint8_t **buf, size_t *len)
{
        FILE *f = fopen(path, "rb");
        struct stat st;
        uint8_t *b = NULL;
        size_t size = 0;
        int rv = BATON_EIO;
        int err = 0;

        if (f == NULL) {
                return BATON_EIO; /* errno says why */
        }
        if (fstat(fileno(f), &st) != 0) {
                err = errno;
        } else if (S_ISDIR(st.st_mode)) {
                err = EISDIR;
        } else {
                size = (size_t)st.st_size;
                b = malloc(size > 0 ? size : 1);
                rv = b == NULL ? BATON_ENOMEM : BATON_EIO;
                if (b != NULL && fread(b, 1, size, f) == size) {
                        rv = 0;
                } else if (b != NULL) {
                        /* A short read with no error: the file shrank. */
                        err = ferror(f) ? errno : EIO;
                }
        }
        fclose(f);
        if (rv != 0) {
                free(b);
                errno = err;
                return rv;
        }
        *buf = b;
        *len = size;
        return 0;
}
