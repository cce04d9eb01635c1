/* Answers to clients: where a request's answer goes, and the frames that
 * carry it into its connection's output. */
#include "reply.h"

#include <string.h>

#include "../../../include/baton/errors.h"
#include "gateway.h"
#include "gwlog.h"

void reply_to_init(struct reply_to *to, struct gateway_conn *c, uint64_t id)
{
        to->conn = c;
        to->id = id;
        queue_init(&to->link);
        if (c != NULL) {
                queue_push_tail(&c->waiting, &to->link);
        }
}

void reply_to_close(struct reply_to *to)
{
        queue_remove(&to->link);
}

void reply_forget_conn(struct gateway_conn *c)
{
        while (!queue_empty(&c->waiting)) {
                struct queue *q = queue_head(&c->waiting);
                struct reply_to *to = QUEUE_DATA(q, struct reply_to, link);
                queue_remove(q);
                to->conn = NULL;
        }
}

uint8_t *reply_reserve(struct gateway *g, struct gateway_conn *c, size_t n)
{
        return g->host->reserve(g->host, c, n);
}

void reply_fail(struct gateway *g, struct gateway_conn *c, uint64_t id,
                int status, const char *message)
{
        g->host->fail(g->host, c, id, status, message);
}

void reply_frame(struct gateway *g, struct gateway_conn *c, uint64_t id,
                 size_t n)
{
        if (n == 0) {
                gwlog(g, LOG_ERROR,
                      &(struct log_fields){.connection = c->id, .request = id},
                      "connection %llu: reply %llu did not encode",
                      (unsigned long long)c->id, (unsigned long long)id);
                reply_fail(g, c, id, BATON_EINVAL, "reply did not encode");
                return;
        }
        g->host->commit(g->host, c, n, false);
}

void reply_result(struct gateway *g, struct gateway_conn *c, uint64_t id,
                  const struct proto_result *r)
{
        uint8_t *out = c != NULL ? reply_reserve(g, c, REPLY_MAX) : NULL;

        if (out != NULL) {
                reply_frame(g, c, id,
                            proto_write_result(out, REPLY_MAX, id, 0, r));
        }
}

void reply_status(struct gateway *g, struct gateway_conn *c, uint64_t id,
                  int status)
{
        struct proto_result r;

        memset(&r, 0, sizeof r);
        r.status = status;
        reply_result(g, c, id, &r);
}

static void export_result(struct proto_result *r, uint64_t index,
                          const struct lockfsm_result *res)
{
        memset(r, 0, sizeof *r);
        r->status = res->status;
        r->kind = res->kind;
        r->index = index;
        r->session = res->session;
        r->owner = res->owner;
        r->token = res->token;
        r->count = res->count;
        r->waiters = res->waiters;
}

void reply_outcome_names(struct gateway *g, struct gateway_conn *c, uint64_t id,
                         uint64_t index, const struct lockfsm_result *res,
                         const char *name, uint8_t name_len)
{
        uint8_t *out = c != NULL ? reply_reserve(g, c, REPLY_MAX) : NULL;
        struct proto_result r;

        if (out == NULL) {
                return;
        }
        export_result(&r, index, res);
        r.client_name.p = name;
        r.client_name.len = name_len;
        reply_frame(
            g, c, id,
            proto_write_result(out, REPLY_MAX, id, PROTO_FLAG_NAMES, &r));
}

void reply_outcome(struct gateway *g, struct gateway_conn *c, uint64_t id,
                   uint64_t index, const struct lockfsm_result *res)
{
        struct proto_result r;

        export_result(&r, index, res);
        reply_result(g, c, id, &r);
}
