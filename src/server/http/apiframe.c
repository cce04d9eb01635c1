/* The binary protocol's request frame of each HTTP call. */
#include "apiframe.h"

#include <string.h>

#include "../../proto/keepalive.h"
#include "../../proto/list.h"
#include "../../proto/sesslist.h"
#include "../../proto/proto.h"
#include "../../proto/query.h"
#include "../../proto/status.h"
#include "../../proto/watch.h"

/* The state machine command of a call that is one (COMMAND frame). */
static void command_of(const struct api_call *call, uint64_t seq,
                       uint64_t nonce, const uint8_t *hash, struct command *c)
{
        memset(c, 0, sizeof *c);
        c->session = call->session;
        c->seq = seq;
        c->ack = seq;
        c->owner = call->owner;
        c->name = call->name;
        c->name_len = call->name_len;
        switch (call->op) {
        case API_SESSION_OPEN:
                c->type = COMMAND_OPEN;
                c->nonce = nonce;
                c->ttl_ms = call->ttl_ms;
                c->delay_ms = call->lock_delay_ms;
                c->hash = hash;
                c->name = call->client_name;
                c->name_len = (uint8_t)strlen(call->client_name);
                break;
        case API_SESSION_CLOSE:
                c->type = COMMAND_CLOSE;
                break;
        case API_SESSION_REVOKE:
                c->type = COMMAND_REVOKE;
                c->session = call->target_session;
                break;
        case API_LOCK_ACQUIRE:
        case API_ELECTION_CAMPAIGN:
                c->type = call->n_names > 0 ? COMMAND_MULTI : COMMAND_ACQUIRE;
                c->wait_ms = call->wait_ms;
                c->mode = call->mode;
                c->permits = call->permits;
                c->limit = call->limit;
                c->list = call->list;
                c->list_len = call->list_len;
                c->n_names = call->n_names;
                c->value = call->value;
                c->value_len = call->value_len;
                /* A hold time makes it version 4, as a value does
                 * (command_encode() picks the version). */
                c->hold_ms = call->hold_ms;
                break;
        case API_LOCK_RELEASE:
        case API_ELECTION_RESIGN:
                c->type = COMMAND_RELEASE;
                c->token = call->token;
                break;
        case API_ELECTION_PROCLAIM:
        case API_LOCK_VALUE:
                c->type = call->op == API_LOCK_VALUE ? COMMAND_SET_VALUE
                                                     : COMMAND_PROCLAIM;
                c->token = call->token;
                c->value = call->value;
                c->value_len = call->value_len;
                break;
        case API_LOCK_EXTEND:
                c->type = COMMAND_EXTEND;
                c->token = call->token;
                c->hold_ms = call->hold_ms;
                break;
        case API_LOCK_REVOKE:
                c->type = COMMAND_REVOKE_LOCK;
                c->session = call->target_session;
                c->token = call->token;
                break;
        default:
                break;
        }
}

static size_t command_frame(const struct api_call *call, uint64_t id,
                            uint64_t seq, uint64_t nonce, const uint8_t *hash,
                            uint8_t *out, size_t cap)
{
        uint8_t buf[COMMAND_ANY_MAX_SIZE];
        struct command c;
        size_t n;

        command_of(call, seq, nonce, hash, &c);
        n = command_encode(&c, buf, sizeof buf);
        return n == 0 ? 0 : proto_write_command(out, cap, id, buf, n);
}

size_t apiframe_write(const struct api_call *call, uint64_t id, uint64_t seq,
                      uint64_t nonce, const uint8_t *hash, uint8_t *out,
                      size_t cap)
{
        struct proto_watch w;

        switch (call->op) {
        case API_SESSION_KEEPALIVE:
                return proto_write_keepalive(out, cap, id, PROTO_FLAG_REVOKED,
                                             call->session);
        case API_LOCK_HOLDERS:
                /* Each holder with its grant's value and its session's
                 * time left, from the leader's lease table as it
                 * answers. */
                return proto_write_query(
                    out, cap, id,
                    PROTO_FLAG_HOLDERS | PROTO_FLAG_VALUES | PROTO_FLAG_LEFT,
                    call->name, call->name_len);
        case API_ELECTION_LEADER:
                return proto_write_query(out, cap, id,
                                         PROTO_FLAG_HOLDERS | PROTO_FLAG_VALUES,
                                         call->name, call->name_len);
        case API_LOCK_CHECK:
                return proto_write_check(out, cap, id, call->name,
                                         call->name_len, call->token);
        case API_LOCK_LIST:
                /* Each lock with its client name and its first holder's
                 * value. */
                return proto_write_list(
                    out, cap, id, PROTO_FLAG_NAMES | PROTO_FLAG_VALUES,
                    call->name, call->name_len, call->limit);
        case API_WATCH:
                memset(&w, 0, sizeof w);
                w.flags = call->prefix ? PROTO_WATCH_PREFIX : 0;
                w.from_index = call->from_index;
                w.from_ord = call->from_ord;
                w.name.p = call->name;
                w.name.len = call->name_len;
                return proto_write_watch(out, cap, id, &w);
        case API_STATUS:
                return proto_write_status_request(out, cap, id,
                                                  PROTO_FLAG_VERSIONS);
        case API_SESSION_LIST:
                return proto_write_sessions(out, cap, id, call->target_session,
                                            PROTO_SESSIONS_AFTER, call->limit);
        case API_SESSION_INFO:
                return proto_write_sessions(out, cap, id, call->target_session,
                                            PROTO_SESSIONS_ONE, 1);
        default:
                return command_frame(call, id, seq, nonce, hash, out, cap);
        }
}
