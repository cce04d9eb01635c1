/* Online backups: pinned snapshots handed out in pulled chunks. */
#include "backup.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <raft.h>

#include "../../../include/baton/errors.h"
#include "../base/log.h"

static uint64_t wall_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void backups_init(struct backups *b, uv_loop_t *loop, struct node *node)
{
        memset(b, 0, sizeof *b);
        b->loop = loop;
        b->node = node;
}

static void unpin(struct backup_pin *p)
{
        if (p->id != 0) {
                node_backup_release(p->bufs, p->n_bufs);
        }
        memset(p, 0, sizeof *p);
}

void backup_forget_conn(struct backups *b, const struct conn *c)
{
        unsigned i;

        for (i = 0; i < BACKUP_MAX_PINNED; i++) {
                if (b->pins[i].id != 0 && (c == NULL || b->pins[i].conn == c)) {
                        unpin(&b->pins[i]);
                }
        }
}

/* A free slot, after dropping pins left idle; NULL when every slot is in
 * use. */
static struct backup_pin *free_pin(struct backups *b, uint64_t now)
{
        struct backup_pin *found = NULL;
        unsigned i;

        for (i = 0; i < BACKUP_MAX_PINNED; i++) {
                struct backup_pin *p = &b->pins[i];
                if (p->id != 0 && now - p->last_ms >= BACKUP_IDLE_MS) {
                        unpin(p);
                }
                if (p->id == 0 && found == NULL) {
                        found = p;
                }
        }
        return found;
}

static struct backup_pin *find_pin(struct backups *b, uint64_t id,
                                   const struct conn *c)
{
        unsigned i;

        for (i = 0; i < BACKUP_MAX_PINNED; i++) {
                if (id != 0 && b->pins[i].id == id && b->pins[i].conn == c) {
                        return &b->pins[i];
                }
        }
        return NULL;
}

/* Copy the pin's bytes from `offset` on into `out` (room for `cap`), across
 * the snapshot's buffers; how many were copied. */
static size_t copy_out(const struct backup_pin *p, uint64_t offset,
                       uint8_t *out, size_t cap)
{
        uint64_t at = 0;
        size_t n = 0;
        unsigned i;

        for (i = 0; i < p->n_bufs && n < cap; i++) {
                const struct raft_buffer *b = &p->bufs[i];
                uint64_t from;
                size_t take;
                if (offset + n >= at + b->len) {
                        at += b->len;
                        continue;
                }
                from = offset + n - at;
                take = b->len - (size_t)from;
                take = take < cap - n ? take : cap - n;
                memcpy(out + n, (const uint8_t *)b->base + from, take);
                n += take;
                at += b->len;
        }
        return n;
}

/* Answer request `id` on `c` with the chunk of `p` at `offset`; the last
 * chunk lets go of the pin. 0, or BATON_EINVAL (nothing written) for an
 * offset past the end. */
static int send_chunk(struct conn *c, uint64_t id, struct backup_pin *p,
                      uint64_t offset)
{
        static uint8_t data[PROTO_BACKUP_CHUNK_MAX];
        struct proto_backup_chunk k = p->about;
        size_t cap = PROTO_HEADER_SIZE + PROTO_MAX_BODY, n;
        uint8_t *out;

        if (offset > k.size) {
                return BATON_EINVAL;
        }
        k.offset = offset;
        k.len = copy_out(p, offset, data, sizeof data);
        k.data = data;
        out = conn_reserve(c, cap);
        if (out == NULL) {
                return 0; /* the connection is closing */
        }
        n = proto_write_backup_chunk(out, cap, id, &k);
        conn_commit(c, n);
        if (offset + k.len == k.size) {
                unpin(p);
        }
        return 0;
}

int backup_start(struct backups *b, struct conn *c, uint64_t id)
{
        struct backup_pin *pin;
        struct lockfsm_stats st;
        uint64_t total = 0;
        unsigned i;
        int rv;

        pin = free_pin(b, uv_now(b->loop));
        if (pin == NULL) {
                return BATON_ENOTREADY;
        }
        rv = node_backup(b->node, &pin->bufs, &pin->n_bufs, &pin->about.index);
        if (rv != 0) {
                return rv == BATON_EBUSY ? BATON_ENOTREADY : rv;
        }
        for (i = 0; i < pin->n_bufs; i++) {
                total += pin->bufs[i].len;
        }
        lockfsm_stats(node_lockfsm(b->node), &st);
        pin->id = ++b->next_id;
        pin->conn = c;
        pin->last_ms = uv_now(b->loop);
        pin->about.backup = pin->id;
        pin->about.term = node_term(b->node);
        pin->about.made_ms = wall_ms();
        pin->about.size = total;
        pin->about.sessions = st.sessions;
        pin->about.locks = st.locks;
        pin->about.grants = st.grants;
        pin->about.waiters = st.waiters;
        b->taken++;
        log_info("backup %llu for '%s': the state at index %llu, %llu bytes",
                 (unsigned long long)pin->id, c->identity,
                 (unsigned long long)pin->about.index,
                 (unsigned long long)total);
        return send_chunk(c, id, pin, 0);
}

int backup_chunk(struct backups *b, struct conn *c, uint64_t id,
                 const struct proto_backup *req)
{
        struct backup_pin *pin = find_pin(b, req->backup, c);

        if (pin == NULL) {
                return BATON_ENOBACKUP;
        }
        pin->last_ms = uv_now(b->loop);
        return send_chunk(c, id, pin, req->offset);
}
