/* Fuzz target of the client protocol's frame reader (src/proto/reader.h):
 * an arbitrary byte stream fed to proto_reader_feed() twice, whole and in
 * chunks the input chooses, every frame it yields handed on to the body
 * decoder of its type, as the server's and the client's dispatch would.
 *
 * An input is a 5-byte prologue, then the stream:
 *
 *   u8  setup     bits 0-1 the reader's max_body (PROTO_MAX_BODY, 0, 48
 *                 or 4096), bits 2-4 which allocation of the reader's
 *                 fails (0: none), so that BATON_ETOOBIG and BATON_ENOMEM
 *                 are reached as easily as a bad header
 *   u8  chunk[4]  the sizes of the chunks of the second feeding, in turn
 *                 (0: the rest of the stream)
 *
 * The reader may refuse a stream; it must never crash, read or write out of
 * bounds, leak, or grow its buffer past max_body. What it must hold:
 *
 *   - each frame it yields is the stream's next 16 + length bytes: its
 *     header, re-encoded, and its body are the stream's, frames abut, and
 *     its header is one proto_header_decode() takes;
 *   - a feed consumes at least one byte and no more than it was given, and
 *     stops short of its buffer only at a frame's end;
 *   - a refusal is sticky, comes right after the refused header, and
 *     proto_reader_refusal() answers it with an ERROR frame (in the refused
 *     header's version when that is an older one) carrying its status and
 *     the refused header's id;
 *   - how the stream is split changes nothing: both feedings yield as many
 *     frames, consume as many bytes, end in the same refusal or the same
 *     partial frame. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "../../src/proto/aclwire.h"
#include "../../src/proto/attach.h"
#include "../../src/proto/backup.h"
#include "../../src/proto/command.h"
#include "../../src/proto/keepalive.h"
#include "../../src/proto/list.h"
#include "../../src/proto/member.h"
#include "../../src/proto/proto.h"
#include "../../src/proto/query.h"
#include "../../src/proto/reader.h"
#include "../../src/proto/reply.h"
#include "../../src/proto/sesslist.h"
#include "../../src/proto/status.h"
#include "../../src/proto/watch.h"
#include "replay.h"

#define PROLOGUE 5
#define N_CHUNKS 4

static const uint32_t max_bodies[4] = {PROTO_MAX_BODY, 0, 48, 4096};

struct setup {
        uint32_t max_body;
        unsigned fail_at; /* the allocation that fails, from 1; 0: none */
        uint8_t chunk[N_CHUNKS];
};

/* How one feeding ended. */
struct pass {
        size_t frames;
        size_t used;    /* stream bytes consumed */
        size_t at;      /* where the last frame, whole or not, started */
        long err;       /* the refusal, or 0 */
        size_t partial; /* bytes of an unfinished frame at the end */
};

/* An allocator that fails one chosen allocation, counted per feeding, so
 * that both feedings fail at the same frame. */
struct failmem {
        unsigned n;
        unsigned fail_at;
};

static void *fail_alloc(void *ctx, size_t size)
{
        struct failmem *f = ctx;

        if (++f->n == f->fail_at) {
                return NULL;
        }
        return malloc(size);
}

static void fail_free(void *ctx, void *ptr)
{
        (void)ctx;
        free(ptr);
}

static void fail(const char *what)
{
        fprintf(stderr, "fuzz_reader: %s\n", what);
        abort();
}

/* ---- The frames' bodies, as the dispatch reads them --------------------- */

/* Hands a frame's body to its type's reader. Only safety is asked of them
 * here (fuzz_message holds them to their writers); they get the header's
 * flags, and the body as the reader holds it: NULL when nothing has been
 * allocated yet, as for an empty body. */
static void dispatch(uint8_t type, uint16_t flags, const uint8_t *b, size_t len)
{
        uint8_t secret[ATTACH_SECRET_SIZE];
        struct proto_acl_request acl;
        struct proto_backup_chunk chunk;
        struct proto_watch_event event;
        struct proto_versions versions;
        struct proto_status status;
        struct proto_result result;
        struct proto_backup backup;
        struct proto_watch watch;
        struct proto_string s1, s2;
        struct command c;
        uint64_t u64;
        uint32_t u32, u32b;
        uint8_t u8;
        bool more;
        int code;

        switch (type) {
        case PROTO_COMMAND:
                command_decode(&c, b, len);
                break;
        case PROTO_KEEPALIVE:
        case PROTO_MEMBER_REMOVE:
        case PROTO_TRANSFER:
        case PROTO_UNWATCH:
                proto_read_u64(b, len, &u64);
                break;
        case PROTO_QUERY:
                proto_read_query(b, len, &s1);
                break;
        case PROTO_CHECK:
                proto_read_check(b, len, &s1, &u64);
                break;
        case PROTO_MEMBER_ADD:
                proto_read_member_add(b, len, &u64, &s1, &s2);
                break;
        case PROTO_LIST:
                proto_read_list(b, len, &s1, &u32);
                break;
        case PROTO_ATTACH:
                attach_read(b, len, &u64, secret);
                break;
        case PROTO_WATCH:
                proto_read_watch(b, len, &watch);
                break;
        case PROTO_BACKUP:
                proto_read_backup(b, len, &backup);
                break;
        case PROTO_ACL:
                proto_read_acl(b, len, &acl);
                break;
        case PROTO_SESSIONS:
                proto_read_sessions(b, len, &u64, &u8, &u32);
                break;
        case PROTO_RESULT:
                proto_read_result(b, len, flags, &result);
                break;
        case PROTO_NOT_LEADER:
                proto_read_not_leader(b, len, &u64, &s1);
                break;
        case PROTO_ERROR:
                proto_read_error(b, len, &code, &s1);
                break;
        case PROTO_STATUS_REPLY:
                proto_read_status(b, len, flags, &status, &versions);
                break;
        case PROTO_KEEPALIVE_OK:
                proto_read_keepalive_ok(b, len, flags, &u32, &u32b);
                break;
        case PROTO_WATCH_EVENT:
                proto_read_watch_event(b, len, &event);
                break;
        case PROTO_BACKUP_CHUNK:
                proto_read_backup_chunk(b, len, &chunk);
                break;
        case PROTO_LIST_REPLY: {
                /* Room for as many entries as the body could hold, as the
                 * client gives the limit it asked for. */
                size_t cap = len / PROTO_LIST_ENTRY_MIN + 1;
                struct proto_lock_entry *e = calloc(cap, sizeof *e);

                if (e == NULL) {
                        abort();
                }
                proto_read_list_reply(b, len, flags, e, cap, &u32, &more);
                free(e);
                break;
        }
        case PROTO_ACL_REPLY: {
                struct proto_acl_reply *r = malloc(sizeof *r);

                if (r == NULL) {
                        abort();
                }
                proto_read_acl_reply(b, len, r);
                free(r);
                break;
        }
        case PROTO_SESSIONS_REPLY: {
                size_t cap = len / PROTO_SESSION_SIZE(0, 0, 0) + 1;
                size_t holds_cap = len / PROTO_SESSION_HOLD_MIN + 1;
                struct proto_session *s = calloc(cap, sizeof *s);
                struct proto_session_hold *h = calloc(holds_cap, sizeof *h);

                if (s == NULL || h == NULL) {
                        abort();
                }
                proto_read_sessions_reply(b, len, s, cap, h, holds_cap, &u32,
                                          &more);
                free(h);
                free(s);
                break;
        }
        default:
                /* STATUS, PING and PONG have no body to read. */
                break;
        }
}

/* ---- The reader's invariants --------------------------------------------- */

/* A frame the reader yielded, from the `n` stream bytes at `f` it took
 * since the previous one. */
static void check_frame(const struct setup *su, const struct proto_reader *r,
                        const uint8_t *f, size_t n)
{
        uint8_t head[PROTO_HEADER_SIZE];
        struct proto_header h;

        if (n != PROTO_HEADER_SIZE + (size_t)r->h.length ||
            r->body_len != r->h.length) {
                fail("a frame is not the stream bytes it took");
        }
        proto_header_encode(&r->h, head);
        if (memcmp(head, f, PROTO_HEADER_SIZE) != 0) {
                fail("a frame's header is not the stream's");
        }
        if (r->h.length > 0 &&
            memcmp(r->body, f + PROTO_HEADER_SIZE, r->h.length) != 0) {
                fail("a frame's body is not the stream's");
        }
        if (proto_header_decode(&h, f, su->max_body) != 0) {
                fail("a frame is yielded under a header the decoder refuses");
        }
        if (r->body_cap > su->max_body) {
                fail("the body buffer grew past max_body");
        }
        dispatch(r->h.type, r->h.flags, r->body, r->body_len);
}

/* A refusal `err` of the header at `head` (the stream's 16 bytes). */
static void check_refusal(const struct setup *su, const struct proto_reader *r,
                          long err, const uint8_t *head)
{
        uint8_t out[PROTO_HEADER_SIZE + 4 + 1 + PROTO_MESSAGE_MAX];
        struct proto_header h, refused;
        uint8_t version;
        struct proto_string msg;
        uint64_t id = 0;
        size_t n;
        int rv, status;
        int i;

        rv = proto_header_decode(&refused, head, su->max_body);
        if (err != r->err || r->ready ||
            (rv != 0 ? err != rv : err != BATON_ENOMEM)) {
                fail("a refusal is not the refused header's");
        }
        for (i = 7; i >= 0; i--) {
                id = id << 8 | head[8 + i];
        }
        n = proto_reader_refusal(r, out, sizeof out, "fuzz");
        if (n < PROTO_HEADER_SIZE) {
                fail("a refusal's ERROR frame does not fit");
        }
        /* An older client reads its refusal in its own version. */
        version =
            err == BATON_EVERSION && head[0] >= 1 && head[0] < PROTO_VERSION
                ? head[0]
                : PROTO_VERSION;
        if (out[0] != version) {
                fail("a refusal is written in the wrong version");
        }
        out[0] = PROTO_VERSION;
        if (proto_header_decode(&h, out, PROTO_MAX_BODY) != 0 ||
            h.type != PROTO_ERROR || h.flags != 0 || h.id != id ||
            h.length != n - PROTO_HEADER_SIZE ||
            proto_read_error(out + PROTO_HEADER_SIZE, h.length, &status,
                             &msg) != 0 ||
            status != err || msg.len != 4 || memcmp(msg.p, "fuzz", 4) != 0) {
                fail("a refusal's ERROR frame is not the refusal");
        }
}

/* Feeds `len` stream bytes at `s` to a fresh reader, whole or in the
 * setup's chunks, checking each frame and the refusal, if any. */
static void feed(const struct setup *su, const uint8_t *s, size_t len,
                 bool chunked, struct pass *p)
{
        struct failmem fm = {0, su->fail_at};
        const struct mem mem = {fail_alloc, fail_free, &fm, NULL};
        struct proto_reader r;
        size_t off = 0;
        unsigned k = 0;

        memset(p, 0, sizeof *p);
        proto_reader_init(&r, su->max_body, &mem);
        while (off < len && p->err == 0) {
                size_t chunk = chunked ? su->chunk[k++ % N_CHUNKS] : 0;
                size_t end;

                if (chunk == 0 || chunk > len - off) {
                        chunk = len - off;
                }
                end = off + chunk;
                while (off < end) {
                        long n = proto_reader_feed(&r, s + off, end - off);

                        if (n < 0) {
                                /* Refused on its header's last byte. */
                                if (p->at + PROTO_HEADER_SIZE > len ||
                                    r.head_len != PROTO_HEADER_SIZE) {
                                        fail("a refusal before its header");
                                }
                                check_refusal(su, &r, n, s + p->at);
                                p->err = n;
                                break;
                        }
                        if (n == 0 || (size_t)n > end - off) {
                                fail("a feed took nothing, or more than it "
                                     "was given");
                        }
                        off += (size_t)n;
                        if (r.ready) {
                                check_frame(su, &r, s + p->at, off - p->at);
                                p->frames++;
                                p->at = off;
                        } else if (off != end) {
                                fail("a feed stopped short with no frame");
                        }
                }
        }
        if (p->err != 0) {
                /* Sticky: nothing more is taken, whatever comes. */
                if (proto_reader_feed(&r, s, len) != p->err || r.ready) {
                        fail("a refused reader took more");
                }
        } else {
                p->used = off;
                p->partial = r.ready ? 0 : r.head_len + r.body_len;
                if (p->at + p->partial != off) {
                        fail("a partial frame is not the stream's tail");
                }
        }
        proto_reader_close(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct pass whole, chunked;
        struct setup su;

        if (size < PROLOGUE) {
                return 0;
        }
        su.max_body = max_bodies[data[0] & 3];
        su.fail_at = (data[0] >> 2) & 7;
        memcpy(su.chunk, data + 1, N_CHUNKS);
        feed(&su, data + PROLOGUE, size - PROLOGUE, false, &whole);
        feed(&su, data + PROLOGUE, size - PROLOGUE, true, &chunked);
        if (whole.frames != chunked.frames || whole.used != chunked.used ||
            whole.at != chunked.at || whole.err != chunked.err ||
            whole.partial != chunked.partial) {
                fail("the stream reads otherwise in chunks than whole");
        }
        return 0;
}

#ifndef BATON_LIBFUZZER
int main(int argc, char **argv)
{
        return fuzz_replay_main(argc, argv, "reader");
}
#endif
