/* One-line renderings of a simulated cluster's commands, outcomes and
 * events, for traces and failure reasons. */
#include "simformat.h"

#include <assert.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"

static const char *kindname(int kind)
{
        static const char *const names[] = {
            "REJECTED",  "OPENED",    "CLOSED", "EXPIRED",
            "GRANTED",   "REENTERED", "QUEUED", "RELEASED",
            "CANCELLED", "HOLDER",    "FREE",   "CURRENT",
        };

        return kind >= 0 && (size_t)kind < sizeof names / sizeof names[0]
                   ? names[kind]
                   : "KIND?";
}

static const char *evname(int type)
{
        static const char *const names[] = {
            "EV?",   "RESULT",  "OPEN",  "END",     "GRANT",    "RELEASE",
            "QUEUE", "UNQUEUE", "BLOCK", "UNBLOCK", "PROCLAIM", "EXTEND",
        };

        return type >= 0 && (size_t)type < sizeof names / sizeof names[0]
                   ? names[type]
                   : "EV?";
}

/* A MULTI's names, as "x:name s:name" (each name cut to 24 bytes). */
static void format_list(char *buf, size_t cap, const struct command *c)
{
        const char *name;
        uint8_t mode, len;
        size_t at = 0;
        size_t used = 0;

        buf[0] = '\0';
        while (used < cap && command_list_next(c, &at, &mode, &name, &len)) {
                int n = snprintf(buf + used, cap - used, "%s%c:%.*s",
                                 used > 0 ? " " : "",
                                 mode == COMMAND_MODE_SHARED ? 's' : 'x',
                                 len > 24 ? 24 : (int)len, name);
                used += n > 0 ? (size_t)n : 0;
        }
}

void simformat_command(char *buf, size_t cap, const struct command *c)
{
        int len = c->name_len;
        const char *name = c->name != NULL ? c->name : "";
        char list[160];

        switch (c->type) {
        case COMMAND_OPEN:
                snprintf(buf, cap, "OPEN nonce=%" PRIx64 " ttl=%u client=%.*s",
                         c->nonce, c->ttl_ms, len, name);
                break;
        case COMMAND_CLOSE:
                snprintf(buf, cap,
                         "CLOSE s=%" PRIu64 " q=%" PRIu64 " ack=%" PRIu64,
                         c->session, c->seq, c->ack);
                break;
        case COMMAND_EXPIRE:
                snprintf(buf, cap, "EXPIRE s=%" PRIu64, c->session);
                break;
        case COMMAND_ACQUIRE:
                snprintf(buf, cap,
                         "ACQUIRE s=%" PRIu64 " q=%" PRIu64 " ack=%" PRIu64
                         " o=%" PRIu64 " wait=%u %.*s",
                         c->session, c->seq, c->ack, c->owner, c->wait_ms, len,
                         name);
                break;
        case COMMAND_RELEASE:
                snprintf(buf, cap,
                         "RELEASE s=%" PRIu64 " q=%" PRIu64 " ack=%" PRIu64
                         " o=%" PRIu64 " tok=%" PRIu64 " %.*s",
                         c->session, c->seq, c->ack, c->owner, c->token, len,
                         name);
                break;
        case COMMAND_CANCEL:
                snprintf(buf, cap,
                         "CANCEL s=%" PRIu64 " q=%" PRIu64 " ack=%" PRIu64
                         " target=%" PRIu64 " %.*s",
                         c->session, c->seq, c->ack, c->target, len, name);
                break;
        case COMMAND_TIMEOUT:
                snprintf(buf, cap,
                         "TIMEOUT s=%" PRIu64 " target=%" PRIu64 " %.*s",
                         c->session, c->target, len, name);
                break;
        case COMMAND_MULTI:
                format_list(list, sizeof list, c);
                snprintf(buf, cap,
                         "MULTI s=%" PRIu64 " q=%" PRIu64 " ack=%" PRIu64
                         " o=%" PRIu64 " wait=%u %s",
                         c->session, c->seq, c->ack, c->owner, c->wait_ms,
                         list);
                break;
        case COMMAND_QUERY:
                snprintf(buf, cap, "QUERY %.*s", len, name);
                break;
        case COMMAND_CHECK:
                snprintf(buf, cap, "CHECK tok=%" PRIu64 " %.*s", c->token, len,
                         name);
                break;
        default:
                snprintf(buf, cap, "type %d", c->type);
                break;
        }
}

void simformat_result(char *buf, size_t cap, const struct lockfsm_result *r)
{
        snprintf(buf, cap,
                 "%s %s%s s=%" PRIu64 " o=%" PRIu64 " tok=%" PRIu64
                 " count=%u waiters=%u",
                 kindname(r->kind), baton_errname(r->status),
                 r->duplicate ? " dup" : "", r->session, r->owner, r->token,
                 r->count, r->waiters);
}

void simformat_event(char *buf, size_t cap, const struct simevent *e)
{
        char res[160] = "";

        if (e->has_result) {
                simformat_result(res, sizeof res, &e->result);
        }
        snprintf(buf, cap,
                 "@%" PRIu64 " %s(%s) s=%" PRIu64 " q=%" PRIu64 " o=%" PRIu64
                 " tok=%" PRIu64 " m=%u/%" PRIu32 " %s '%.*s' %s",
                 e->index, evname(e->type), command_type_name(e->cause),
                 e->session, e->seq, e->owner, e->token, e->mode, e->permits,
                 baton_errname(e->status), (int)e->name_len, e->name, res);
}
