/*
 * The fill workload (fill.h). libbaton gives each handle one session and
 * one request at a time per thread, which cannot open 100,000 sessions
 * quickly; this speaks the wire protocol (docs/protocol.md) itself on one
 * connection, with up to `window` requests in flight: every OPEN first,
 * then per session an ATTACH and its ACQUIREs (try, no wait). The leader
 * admits a connection's frames in order, so an ATTACH sent just ahead of
 * its session's ACQUIREs covers them. TLS as libbaton sets it up from the
 * environment (BATON_CACERT, BATON_CERT, BATON_KEY).
 */
#include "fill.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../include/baton.h"
#include "../proto/attach.h"
#include "../proto/command.h"
#include "../proto/proto.h"
#include "../proto/reply.h"
#include "pipe.h"
#include "wire.h"

struct fill {
        const struct fill_config *cfg;
        struct fill_result *res;
        struct tls_ctx *tls;
        struct wire w;
        uint64_t *ids; /* the session each OPEN made, by OPEN number */
        uint8_t secret[ATTACH_SECRET_SIZE];
        uint8_t hash[ATTACH_HASH_SIZE];
        bool opening; /* the sessions' phase */
};

static int broken(struct fill *f, const char *what, const char *detail)
{
        f->res->broken = true;
        snprintf(f->res->why, sizeof f->res->why, "%s%s%s", what,
                 detail[0] != '\0' ? ": " : "", detail);
        return -1;
}

static int find_leader(struct fill *f, struct baton_status *st)
{
        int rv = wire_leader(f->cfg->endpoints, st);

        return rv == 0 ? 0 : broken(f, "no leader", baton_strerror(rv));
}

/* --- The requests ------------------------------------------------------ */

/* Frame ids: OPEN number + 1 in the first phase; in the second, session
 * number * (L + 1) + 1 for its ATTACH and + 1 + j for its j-th ACQUIRE. */
static size_t next_frame(void *data, uint64_t i, uint8_t *out, size_t cap)
{
        struct fill *f = data;
        const struct fill_config *cfg = f->cfg;
        char name[COMMAND_NAME_MAX + 1];
        uint8_t body[COMMAND_MAX_SIZE];
        uint64_t id = i + 1, per = (uint64_t)cfg->locks_per_session + 1;
        uint64_t s = i / per, j = i % per;
        struct command k;
        size_t n;

        memset(&k, 0, sizeof k);
        if (f->opening) {
                k.type = COMMAND_OPEN;
                k.ttl_ms = (uint32_t)cfg->ttl_ms;
                k.nonce = ((uint64_t)rand() << 32) ^ (uint64_t)rand() ^ id;
                k.hash = f->hash;
        } else if (j == 0) {
                return attach_write(out, cap, id, f->ids[s], f->secret);
        } else {
                snprintf(name, sizeof name, "%s/%llu/%llu", cfg->prefix,
                         (unsigned long long)s, (unsigned long long)j);
                k.type = COMMAND_ACQUIRE;
                k.session = f->ids[s];
                k.seq = j;
                /* The fill never retries a request, so it needs no
                 * outcome remembered but the last: each ACQUIRE
                 * acknowledges the ones before it, and a session keeps
                 * one outcome as a client that waits for each answer
                 * does. The figures per lock are then the lock's own. */
                k.ack = j;
                k.owner = 1;
                k.name = name;
                k.name_len = (uint8_t)strlen(name);
        }
        n = command_encode(&k, body, sizeof body);
        return n == 0 ? 0 : proto_write_command(out, cap, id, body, n);
}

static void count_error(struct fill *f, int status)
{
        f->res->errors++;
        if (f->res->first_error == 0) {
                f->res->first_error = status;
        }
}

static void answer(void *data, const struct proto_header *h,
                   const uint8_t *body)
{
        struct fill *f = data;
        struct proto_result r;
        bool opening = f->opening;
        int status = BATON_EMALFORMED;

        if (h->type == PROTO_NOT_LEADER) {
                f->res->not_leader++;
                count_error(f, BATON_ENOTLEADER);
                return;
        }
        if (h->type == PROTO_ERROR) {
                struct proto_string message;
                proto_read_error(body, h->length, &status, &message);
                count_error(f, status);
                return;
        }
        if (h->type != PROTO_RESULT ||
            proto_read_result(body, h->length, 0, &r) != 0) {
                count_error(f, BATON_EMALFORMED);
                return;
        }
        if (r.status != 0) {
                count_error(f, r.status);
        } else if (opening && r.kind == PROTO_KIND_OPENED && h->id >= 1 &&
                   h->id <= (uint64_t)f->cfg->sessions) {
                f->ids[h->id - 1] = r.session;
                f->res->sessions++;
        } else if (!opening && r.kind == PROTO_KIND_GRANTED) {
                f->res->locks++;
        } else if (opening || r.kind != PROTO_KIND_OPENED) {
                count_error(f, BATON_EMALFORMED);
        }
}

/* Send `total` frames of the current phase, `window` at a time, and wait
 * for every answer; a broken run says why. */
static int phase(struct fill *f, uint64_t total)
{
        struct pipe_job job = {
            .total = total,
            .window = f->cfg->window,
            .frame = next_frame,
            .answer = answer,
            .data = f,
        };

        if (pipe_run(&f->w, &job, f->res->why, sizeof f->res->why) != 0) {
                f->res->broken = true;
                return -1;
        }
        return 0;
}

int fill_run(const struct fill_config *cfg, struct fill_result *out)
{
        struct fill f = {.cfg = cfg, .res = out};
        struct baton_status st;
        uint64_t per = (uint64_t)cfg->locks_per_session + 1;
        double t0;
        int rv = -1;

        memset(out, 0, sizeof *out);
        srand((unsigned)time(NULL) ^ (unsigned)getpid());
        wire_secret(f.secret, f.hash);
        wire_init(&f.w);
        f.ids = calloc((size_t)cfg->sessions, sizeof *f.ids);
        if (f.ids == NULL) {
                broken(&f, "out of memory", "");
                goto done;
        }
        if (wire_tls_load(&f.tls, out->why, sizeof out->why) != 0) {
                out->broken = true;
                goto done;
        }
        if (find_leader(&f, &st) != 0) {
                goto done;
        }
        if (wire_dial(&f.w, f.tls, st.endpoint) != 0) {
                broken(&f, f.w.why, "");
                goto done;
        }
        out->lead.term_before = st.term;
        out->lead.leader_before = st.id;
        snprintf(out->leader_endpoint, sizeof out->leader_endpoint, "%s",
                 st.endpoint);
        t0 = wire_now();
        f.opening = true;
        if (phase(&f, (uint64_t)cfg->sessions) == 0) {
                out->open_s = wire_now() - t0;
                t0 = wire_now();
                f.opening = false;
                if (out->sessions == (uint64_t)cfg->sessions &&
                    cfg->locks_per_session > 0 &&
                    phase(&f, (uint64_t)cfg->sessions * per) == 0) {
                        out->lock_s = wire_now() - t0;
                }
        }
        rv = 0;
        /* Who leads now; not knowing is no reason to call the run broken. */
        if (wire_leader(cfg->endpoints, &st) == 0) {
                out->lead.term_after = st.term;
                out->lead.leader_after = st.id;
        }
done:
        wire_close(&f.w);
        tls_ctx_destroy(f.tls);
        free(f.ids);
        return rv;
}

void fill_print(FILE *f, const struct bench_label *l,
                const struct fill_config *cfg, const struct fill_result *r)
{
        fprintf(f,
                "{\"system\":\"%s\",\"nodes\":%d,\"workload\":\"fill\","
                "\"sessions\":%ld,\"locks_per_session\":%ld,"
                "\"sessions_opened\":%llu,\"locks_granted\":%llu,"
                "\"open_s\":%.3f,\"sessions_per_s\":%.0f,\"lock_s\":%.3f,"
                "\"locks_per_s\":%.0f,\"errors\":%llu,\"not_leader\":%llu",
                l->system, l->nodes, cfg->sessions, cfg->locks_per_session,
                (unsigned long long)r->sessions, (unsigned long long)r->locks,
                r->open_s, r->open_s > 0 ? (double)r->sessions / r->open_s : 0,
                r->lock_s, r->lock_s > 0 ? (double)r->locks / r->lock_s : 0,
                (unsigned long long)r->errors,
                (unsigned long long)r->not_leader);
        bench_label_end(f, l, r->first_error, &r->lead, r->broken);
}
