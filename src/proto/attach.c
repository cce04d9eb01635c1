/* Session ownership on the wire: the ATTACH request, and the sizes of a
 * session's secret and of the hash of it that OPEN carries. */
#include "attach.h"

#include <string.h>

#include <openssl/evp.h>

#include "../../include/baton/errors.h"
#include "../lib/cursor.h"
#include "proto.h"

size_t attach_write(uint8_t *out, size_t cap, uint64_t id, uint64_t session,
                    const uint8_t *secret)
{
        struct proto_header h = {PROTO_VERSION, PROTO_ATTACH, 0,
                                 ATTACH_BODY_SIZE, id};
        struct wcursor w;

        if (cap < PROTO_HEADER_SIZE + ATTACH_BODY_SIZE || secret == NULL) {
                return 0;
        }
        proto_header_encode(&h, out);
        wcursor_init(&w, out + PROTO_HEADER_SIZE, ATTACH_BODY_SIZE);
        wcursor_u64(&w, session);
        wcursor_bytes(&w, secret, ATTACH_SECRET_SIZE);
        return PROTO_HEADER_SIZE + ATTACH_BODY_SIZE;
}

int attach_hash(const uint8_t *secret, uint8_t *hash)
{
        unsigned len = 0;

        if (EVP_Digest(secret, ATTACH_SECRET_SIZE, hash, &len, EVP_sha256(),
                       NULL) != 1 ||
            len != ATTACH_HASH_SIZE) {
                return BATON_ENOMEM;
        }
        return 0;
}

int attach_read(const uint8_t *body, size_t len, uint64_t *session,
                uint8_t *secret)
{
        struct rcursor r;

        if (len != ATTACH_BODY_SIZE) {
                return BATON_EMALFORMED;
        }
        rcursor_init(&r, body, len);
        *session = rcursor_u64(&r);
        memcpy(secret, rcursor_bytes(&r, ATTACH_SECRET_SIZE),
               ATTACH_SECRET_SIZE);
        return 0;
}
