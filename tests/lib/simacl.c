/* The access list in a simulated cluster: one digest of a node's whole
 * list. */
#include "simacl.h"

uint64_t simacl_digest(const struct acl *a)
{
        /* Scratch for the encoding, which no list passes (acl.h); the
         * simulation runs on one thread. */
        static uint8_t buf[ACL_ENCODED_LIMIT];
        size_t len;
        uint64_t h;

        if (!a->seeded) {
                return SIMACL_ABSENT;
        }
        len = acl_encode(a, buf, sizeof buf);
        h = fnv1a64(FNV1A64_OFFSET, buf, len);
        return h != 0 ? h : 1;
}
