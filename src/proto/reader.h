/* The incremental frame reader: whole frames out of a byte stream, with no
 * I/O. */
#ifndef PROTO_READER_H
#define PROTO_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../lib/mem.h"
#include "proto.h"

/*
 * Incremental frame reader: feed it bytes as they arrive, in any split, and
 * it yields whole frames. Its body buffer grows to the largest frame seen
 * (never past max_body), so steady traffic allocates nothing.
 */
struct proto_reader {
        const struct mem *mem;
        uint32_t max_body;
        uint8_t head[PROTO_HEADER_SIZE];
        size_t head_len;
        struct proto_header h;
        uint8_t *body;
        size_t body_cap;
        size_t body_len;
        bool ready; /* a whole frame is in h/body */
        int err;    /* sticky: after an error the reader accepts nothing */
};

void proto_reader_init(struct proto_reader *r, uint32_t max_body,
                       const struct mem *mem);
void proto_reader_close(struct proto_reader *r);

/*
 * Consume bytes from `buf` until one frame is complete or `len` runs out;
 * returns the number of bytes consumed, or a negative BATON_E* code (sticky)
 * for a bad header, too large a frame, or no memory. When r->ready is set,
 * r->h and r->body hold the frame until the next call; call again with the
 * rest of the buffer for the following frames.
 */
long proto_reader_feed(struct proto_reader *r, const uint8_t *buf, size_t len);

/*
 * After proto_reader_feed() failed: write the ERROR frame that answers it
 * (status r->err, `message`, the refused header's id) into `out`
 * (capacity `cap`), and return its length (0 when it does not fit). A
 * header of an older version (1..PROTO_VERSION - 1) is answered in that
 * version's header, whose ERROR has the same shape, so that an old client
 * can read the BATON_EVERSION it gets; anything else in the current one.
 */
size_t proto_reader_refusal(const struct proto_reader *r, uint8_t *out,
                            size_t cap, const char *message);

#endif /* PROTO_READER_H */
