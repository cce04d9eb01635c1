/* Test harness for the lock state machine: builds, applies, records events. */
#include "fsmtest.h"

#include <assert.h>
#include <stdarg.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "../../src/fsm/entry.h"

static void record(void *data, const struct lockfsm_event *ev)
{
        struct fsmtest *t = data;
        struct fsmtest_event *e;

        assert(t->n_events < FSMTEST_MAX_EVENTS);
        e = &t->events[t->n_events++];
        memset(e, 0, sizeof *e);
        e->type = ev->type;
        e->cause = ev->cause;
        e->index = ev->index;
        e->wait_ms = ev->wait_ms;
        e->granted_s = ev->granted_s;
        e->clock_ms = ev->clock_ms;
        e->session = ev->session;
        e->seq = ev->seq;
        e->owner = ev->owner;
        e->token = ev->token;
        e->status = ev->status;
        if (ev->result != NULL) {
                e->result = *ev->result;
        }
        if (ev->name != NULL) {
                memcpy(e->name, ev->name, ev->name_len);
        }
        if (ev->by != NULL) {
                memcpy(e->by, ev->by, ev->by_len);
        }
}

void fsmtest_init(struct fsmtest *t, const struct lockfsm_limits *limits,
                  const struct mem *mem)
{
        memset(t, 0, sizeof *t);
        t->f = lockfsm_create(limits, mem);
        assert(t->f != NULL);
        lockfsm_set_event_cb(t->f, record, t);
}

void fsmtest_close(struct fsmtest *t)
{
        lockfsm_destroy(t->f);
        t->f = NULL;
}

struct fsmtest *fsmtest_new(const struct lockfsm_limits *limits)
{
        struct fsmtest *t = malloc(sizeof *t);

        assert(t != NULL);
        fsmtest_init(t, limits, NULL);
        return t;
}

int fsmtest_setup(void **state)
{
        *state = fsmtest_new(NULL);
        return 0;
}

int fsmtest_teardown(void **state)
{
        struct fsmtest *t = *state;

        assert_true(fsmtest_round_trips(t->f));
        fsmtest_close(t);
        free(t);
        return 0;
}

struct lockfsm_result fsmtest_apply_raw(struct fsmtest *t, const void *buf,
                                        size_t len)
{
        struct lockfsm_result res;

        memset(&res, 0, sizeof res);
        t->last_rv = lockfsm_apply(t->f, t->index + 1, buf, len, &res);
        if (t->last_rv == 0) {
                t->index++;
        }
        return res;
}

struct lockfsm_result fsmtest_apply(struct fsmtest *t, const struct command *c)
{
        uint8_t buf[COMMAND_ANY_MAX_SIZE];
        size_t n = command_encode(c, buf, sizeof buf);

        assert(n > 0);
        return fsmtest_apply_raw(t, buf, n);
}

struct lockfsm_result fsmtest_apply_batch(struct fsmtest *t,
                                          const struct command *c, unsigned n)
{
        static uint8_t buf[ENTRY_MAX_SIZE];
        struct entry_writer w;
        unsigned i;

        entry_writer_init(&w, buf, sizeof buf, 1);
        for (i = 0; i < n; i++) {
                uint8_t cmd[COMMAND_ANY_MAX_SIZE];
                size_t len = command_encode(&c[i], cmd, sizeof cmd);
                assert(len > 0 && entry_writer_add(&w, cmd, len));
        }
        return fsmtest_apply_raw(t, buf, entry_writer_finish(&w));
}

struct lockfsm_result fsmtest_result_of(const struct fsmtest *t,
                                        uint64_t session, uint64_t seq)
{
        unsigned i = t->n_events;

        while (i-- > 0) {
                const struct fsmtest_event *e = &t->events[i];
                if (e->type == LOCKFSM_EV_RESULT && e->session == session &&
                    e->seq == seq) {
                        return e->result;
                }
        }
        assert(!"no RESULT event for that command");
        return t->events[0].result;
}

uint64_t fsmtest_open(struct fsmtest *t, uint64_t nonce)
{
        struct command c = {
            .type = COMMAND_OPEN, .nonce = nonce, .ttl_ms = 10000};
        struct lockfsm_result r = fsmtest_apply(t, &c);

        assert(r.status == 0 && r.kind == PROTO_KIND_OPENED);
        return r.session;
}

static struct command named(uint8_t type, uint64_t session, uint64_t seq,
                            const char *name)
{
        struct command c = {.type = type,
                            .session = session,
                            .seq = seq,
                            .ack = seq,
                            .name = name,
                            .name_len = (uint8_t)strlen(name)};
        return c;
}

struct command fsmtest_acquire_cmd(uint64_t session, uint64_t seq,
                                   uint64_t owner, const char *name,
                                   uint32_t wait_ms)
{
        struct command c = named(COMMAND_ACQUIRE, session, seq, name);

        c.owner = owner;
        c.wait_ms = wait_ms;
        return c;
}

struct command fsmtest_release_cmd(uint64_t session, uint64_t seq,
                                   uint64_t owner, const char *name,
                                   uint64_t token)
{
        struct command c = named(COMMAND_RELEASE, session, seq, name);

        c.owner = owner;
        c.token = token;
        return c;
}

struct lockfsm_result fsmtest_acquire(struct fsmtest *t, uint64_t session,
                                      uint64_t seq, uint64_t owner,
                                      const char *name, uint32_t wait_ms)
{
        struct command c =
            fsmtest_acquire_cmd(session, seq, owner, name, wait_ms);

        return fsmtest_apply(t, &c);
}

struct lockfsm_result fsmtest_multi(struct fsmtest *t, uint64_t session,
                                    uint64_t seq, uint64_t owner,
                                    const char *spec, uint32_t wait_ms)
{
        uint8_t list[COMMAND_MULTI_MAX_SIZE];
        struct command c = {.type = COMMAND_MULTI,
                            .session = session,
                            .seq = seq,
                            .ack = seq,
                            .owner = owner,
                            .wait_ms = wait_ms};
        size_t len = 0;

        while (*spec != '\0') {
                size_t n = strcspn(spec, " ");
                uint8_t mode = COMMAND_MODE_EXCLUSIVE;
                size_t name_len = n;
                if (n > 2 && memcmp(spec + n - 2, "/r", 2) == 0) {
                        mode = COMMAND_MODE_SHARED;
                        name_len -= 2;
                }
                int rv = command_list_add(list, sizeof list, &len, mode, spec,
                                          name_len);
                assert(rv == 0);
                (void)rv;
                c.n_names++;
                spec += n + (spec[n] == ' ');
        }
        c.list = list;
        c.list_len = (uint16_t)len;
        return fsmtest_apply(t, &c);
}

struct lockfsm_result fsmtest_release(struct fsmtest *t, uint64_t session,
                                      uint64_t seq, uint64_t owner,
                                      const char *name, uint64_t token)
{
        struct command c =
            fsmtest_release_cmd(session, seq, owner, name, token);

        return fsmtest_apply(t, &c);
}

struct lockfsm_result fsmtest_close_session(struct fsmtest *t, uint64_t session,
                                            uint64_t seq)
{
        struct command c = {
            .type = COMMAND_CLOSE, .session = session, .seq = seq, .ack = seq};
        return fsmtest_apply(t, &c);
}

struct lockfsm_result fsmtest_expire(struct fsmtest *t, uint64_t session)
{
        struct command c = {.type = COMMAND_EXPIRE, .session = session};
        return fsmtest_apply(t, &c);
}

struct lockfsm_result fsmtest_cancel(struct fsmtest *t, uint64_t session,
                                     uint64_t seq, const char *name,
                                     uint64_t target)
{
        struct command c = named(COMMAND_CANCEL, session, seq, name);

        c.target = target;
        return fsmtest_apply(t, &c);
}

struct lockfsm_result fsmtest_timeout(struct fsmtest *t, uint64_t session,
                                      const char *name, uint64_t target)
{
        struct command c = named(COMMAND_TIMEOUT, session, 0, name);

        c.ack = 0;
        c.target = target;
        return fsmtest_apply(t, &c);
}

struct lockfsm_result fsmtest_query(struct fsmtest *t, const char *name)
{
        struct command c = named(COMMAND_QUERY, 0, 0, name);

        c.ack = 0;
        return fsmtest_apply(t, &c);
}

struct lockfsm_result fsmtest_check(struct fsmtest *t, const char *name,
                                    uint64_t token)
{
        struct command c = named(COMMAND_CHECK, 0, 0, name);

        c.ack = 0;
        c.token = token;
        return fsmtest_apply(t, &c);
}

const struct fsmtest_event *fsmtest_find(const struct fsmtest *t, uint8_t type,
                                         unsigned nth)
{
        unsigned i;

        for (i = 0; i < t->n_events; i++) {
                if (t->events[i].type == type && nth-- == 0) {
                        return &t->events[i];
                }
        }
        return NULL;
}

unsigned fsmtest_count(const struct fsmtest *t, uint8_t type)
{
        unsigned i, n = 0;

        for (i = 0; i < t->n_events; i++) {
                n += t->events[i].type == type;
        }
        return n;
}

void *fsmtest_snapshot(const struct lockfsm *f, size_t *len)
{
        void *buf = NULL;
        void *copy;
        int rv = lockfsm_snapshot(f, &buf, len);

        assert(rv == 0);
        /* Copy into malloc'd memory: the machine's allocator may be a test
         * allocator the caller does not want to free through. */
        copy = malloc(*len);
        assert(copy != NULL);
        memcpy(copy, buf, *len);
        lockfsm_snapshot_free(f, buf);
        return copy;
}

bool fsmtest_same_state(const struct lockfsm *a, const struct lockfsm *b)
{
        size_t la, lb;
        void *sa = fsmtest_snapshot(a, &la);
        void *sb = fsmtest_snapshot(b, &lb);
        bool same = la == lb && memcmp(sa, sb, la) == 0;

        free(sa);
        free(sb);
        return same;
}

bool fsmtest_round_trips(const struct lockfsm *f)
{
        struct lockfsm *u = lockfsm_create(NULL, NULL);
        bool ok = u != NULL && lockfsm_check(f) == NULL;
        size_t len;
        void *buf;

        if (ok) {
                buf = fsmtest_snapshot(f, &len);
                ok = lockfsm_restore(u, buf, len) == 0 &&
                     lockfsm_check(u) == NULL && fsmtest_same_state(f, u);
                free(buf);
        }
        lockfsm_destroy(u);
        return ok;
}

uint64_t fsmtest_granted(const struct fsmtest *t, uint64_t s, uint64_t seq)
{
        const struct fsmtest_event *e;

        for (unsigned i = 0; (e = fsmtest_find(t, LOCKFSM_EV_GRANT, i)); i++) {
                if (e->session == s && e->seq == seq) {
                        return e->token;
                }
        }
        return 0;
}
