/* What each endpoint of a link answered when it was last tried. */
#include "reach.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"

int reach_init(struct reach *r, const char (*endpoints)[REACH_ADDR_MAX],
               unsigned n)
{
        memset(r, 0, sizeof *r);
        r->endpoints = endpoints;
        r->n = n;
        r->pass = 1;
        r->ends = calloc(n > 0 ? n : 1, sizeof *r->ends);
        return r->ends != NULL ? 0 : BATON_ENOMEM;
}

void reach_close(struct reach *r)
{
        free(r->ends);
        r->ends = NULL;
}

int reach_index(const struct reach *r, const char *address)
{
        unsigned i;

        for (i = 0; i < r->n; i++) {
                if (strcmp(r->endpoints[i], address) == 0) {
                        return (int)i;
                }
        }
        return -1;
}

static bool refused(const struct reach_endpoint *e)
{
        return e->outcome == REACH_REFUSED || e->outcome == REACH_NOT_LISTENING;
}

/* The pass ends when every endpoint has been tried in it; it failed when
 * every one of them was refused, and, if some were only NOT_LISTENING,
 * once such passes have gone on for REACH_MEND_MS since `mending_since`.
 * A failed pass keeps what each endpoint said, for the calls that give up
 * on it after the next pass began. */
static enum reach_verdict close_pass(struct reach *r, int64_t now)
{
        bool failed = true, tls = false, mendable = false;
        size_t off;
        unsigned i;

        for (i = 0; i < r->n; i++) {
                if (r->ends[i].pass != r->pass) {
                        return REACH_GOING;
                }
                failed = failed && refused(&r->ends[i]);
                mendable =
                    mendable || r->ends[i].outcome == REACH_NOT_LISTENING;
                tls = tls || r->ends[i].tls;
        }
        if (!failed) {
                r->mending_since = 0;
        } else if (mendable && r->mending_since == 0) {
                r->mending_since = now;
        }
        if (!failed || (mendable && now - r->mending_since < REACH_MEND_MS)) {
                r->pass++;
                return REACH_OVER;
        }
        r->failed_pass = r->pass++;
        r->failed_code = tls ? BATON_ETLS : BATON_ECONNECT;
        off = (size_t)snprintf(r->failed_why, sizeof r->failed_why,
                               "cannot connect to any node: ");
        reach_describe(r, r->failed_why + off, sizeof r->failed_why - off,
                       NULL);
        return REACH_FAILED;
}

enum reach_verdict reach_note(struct reach *r, int i,
                              enum reach_outcome outcome, bool tls,
                              const char *why, int64_t now)
{
        struct reach_endpoint *e;

        if (i < 0 || (unsigned)i >= r->n) {
                return REACH_GOING;
        }
        e = &r->ends[i];
        e->pass = r->pass;
        e->outcome = (uint8_t)outcome;
        e->tls = tls && outcome == REACH_REFUSED;
        snprintf(e->why, sizeof e->why, "%s", why);
        return close_pass(r, now);
}

void reach_note_named(struct reach *r, const char *address,
                      enum reach_outcome outcome, bool tls, const char *why)
{
        struct reach_endpoint *e = &r->named_end;

        if (outcome != REACH_REFUSED && outcome != REACH_NOT_LISTENING) {
                e->pass = 0;
                return;
        }
        snprintf(r->named, sizeof r->named, "%s", address);
        e->pass = r->pass;
        e->outcome = (uint8_t)outcome;
        e->tls = tls && outcome == REACH_REFUSED;
        snprintf(e->why, sizeof e->why, "%s", why);
}

enum reach_verdict reach_skip(struct reach *r, int i, int64_t now)
{
        if (i < 0 || (unsigned)i >= r->n || r->ends[i].pass == 0) {
                return REACH_GOING;
        }
        r->ends[i].pass = r->pass;
        return close_pass(r, now);
}

enum reach_verdict reach_greeted(struct reach *r, int i, int64_t now)
{
        uint8_t last;

        if (i < 0 || (unsigned)i >= r->n) {
                return REACH_GOING;
        }
        last = r->ends[i].outcome;
        if (last == REACH_REDIRECTED || last == REACH_NO_LEADER) {
                return reach_skip(r, i, now); /* its last word counts */
        }
        return reach_note(r, i, REACH_ANSWERED, false, "answered", now);
}

void reach_answered(struct reach *r, int i)
{
        /* An answer ends the pass's failure and any mending: the time it
         * is recorded at never matters. */
        if (i >= 0 && (unsigned)i < r->n &&
            r->ends[i].outcome != REACH_ANSWERED) {
                reach_note(r, i, REACH_ANSWERED, false, "answered", 0);
        }
}

bool reach_failed_since(const struct reach *r, uint64_t mark)
{
        return r->failed_pass != 0 && r->failed_pass >= mark;
}

void reach_describe(const struct reach *r, char *buf, size_t size,
                    bool *leaderless)
{
        bool asked_leader = false, answered = false;
        size_t off = 0;
        unsigned i;

        if (size > 0) {
                buf[0] = '\0';
        }
        for (i = 0; i < r->n; i++) {
                const struct reach_endpoint *e = &r->ends[i];
                int n;
                if (e->pass == 0) {
                        continue;
                }
                asked_leader = asked_leader || e->outcome == REACH_NO_LEADER ||
                               e->outcome == REACH_REDIRECTED;
                answered = answered || e->outcome == REACH_ANSWERED;
                if (off >= size) {
                        continue;
                }
                n = snprintf(buf + off, size - off, "%s%s: %s",
                             off > 0 ? "; " : "", r->endpoints[i], e->why);
                off += n > 0 ? (size_t)n : 0;
        }
        if (r->named_end.pass != 0 && off < size) {
                snprintf(buf + off, size - off,
                         "%sthe leader they name, %s: %s", off > 0 ? "; " : "",
                         r->named, r->named_end.why);
        }
        if (leaderless != NULL) {
                *leaderless = asked_leader && !answered;
        }
}

/* Whether no endpoint's last attempt reached a node that answered (every
 * one tried was REFUSED or LOST), and whether one of them failed in TLS. */
static bool none_answered(const struct reach *r, bool *tls)
{
        bool tried = false;
        unsigned i;

        *tls = false;
        for (i = 0; i < r->n; i++) {
                const struct reach_endpoint *e = &r->ends[i];
                if (e->pass == 0) {
                        continue;
                }
                if (!refused(e) && e->outcome != REACH_LOST) {
                        return false;
                }
                tried = true;
                *tls = *tls || e->tls;
        }
        return tried;
}

int reach_answer(const struct reach *r, uint64_t mark, bool sent, bool expired,
                 char *buf, size_t size)
{
        char what[REACH_TEXT_MAX];
        bool leaderless, tls;

        if (!sent && reach_failed_since(r, mark)) {
                snprintf(buf, size, "%s", r->failed_why);
                return r->failed_code;
        }
        if (!expired) {
                return 0;
        }
        reach_describe(r, what, sizeof what, &leaderless);
        if (!sent && none_answered(r, &tls)) {
                snprintf(buf, size, "cannot connect to any node: %s", what);
                return tls ? BATON_ETLS : BATON_ECONNECT;
        }
        if (!sent && leaderless && r->named_end.pass != 0) {
                snprintf(buf, size, "cannot connect to the leader: %s", what);
                return r->named_end.tls ? BATON_ETLS : BATON_ECONNECT;
        }
        /* The text stands alone: it starts with what baton_strerror()
         * says of the code. */
        snprintf(buf, size, "%s%s%s%s%s", baton_strerror(BATON_ENOANSWER),
                 leaderless && r->named_end.pass != 0
                     ? ": cannot connect to the leader"
                 : leaderless ? ": no leader"
                              : "",
                 sent && !leaderless
                     ? " (the request went out: its outcome is unknown)"
                     : "",
                 what[0] != '\0' ? ": " : "", what);
        return BATON_ENOANSWER;
}
