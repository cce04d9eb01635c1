/* batond's host of its request core (src/server/gateway/): it hands the
 * core every input from the raft node and the client connections, with
 * the time, and does the I/O the core leaves to it (the clocks and its
 * timer, the apply log, the ATTACH hash, backups, the log). */
#ifndef SERVER_COREHOST_H
#define SERVER_COREHOST_H

#include <limits.h>
#include <stdint.h>

#include <uv.h>

#include "../base/audit.h"
#include "../config/config.h"
#include "../gateway/gateway.h"
#include "../net/conn.h"
#include "../raft/node.h"
#include "applylog.h"
#include "backup.h"
#include "corequery.h"

/*
 * Every input reaches the core through here, unchanged and in the order
 * it happens: leadership (the node_callbacks of corehost_node_callbacks(),
 * given to node_start()), the state machine's events and ACL entries (the
 * node's callbacks, set by corehost_init()), frames and connections gone
 * (corehost_on_frame() and corehost_on_gone(), given to conn_listen()),
 * the answers to the core's raft requests (corereq.h), the core's
 * deadline timer, and the end of each loop turn (corehost_flush()).
 *
 * The host reads the clocks for the core, once for each input that needs
 * the time: the loop's uv_now() (cached once per loop turn, so every
 * input of a turn has the same milliseconds) and uv_hrtime(), which on
 * the event path is read once per entry, for all of its events; the wall
 * clock only at the end of a turn, for the leader's CLOCK command. The
 * core's one timer is a uv timer here, started for the time the core asks
 * for on uv_now()'s clock.
 *
 * The audit trail is the host's too (base/audit.h): the core's lines
 * come through its audit op, net's and the HTTP API's refusals through the
 * pointers main.c gives them; corehost_reopen_logs() reopens both logs on
 * SIGHUP.
 *
 * The apply log is the host's: an event's or an ACL entry's line is
 * written before the core hears of it, so a node killed inside the core
 * still leaves the line of what it applied; an entry's ENTRY line, after
 * its events, goes only to the log. main.c reopens it on SIGHUP
 * (applylog_reopen() of `applylog`).
 *
 * What the core asks of its host (struct gateway_host, `query.ops`) is
 * done here too: what the node knows (corequery.h); raft's requests,
 * whose answers come back into the core (corereq.h); the SHA-256 of an
 * ATTACH secret, with OpenSSL; backups' pins and chunks (backup.h), whose
 * pins of a connection go with it; and the core's log lines, at
 * cfg->log_level (main.c's log_set_level()), to batond's log.
 *
 * Client connections are net's (conn.h), each embedding the core's record
 * of it (struct gateway_conn); the core writes to them through the
 * connection ops (coreconn.h). A connection that goes while the core is
 * inside an input (conn_fail() in an op drops one it cannot queue the
 * ERROR frame on) is reported to the core only once the outermost input
 * has returned (corehost_enter() and corehost_leave() wrap every input),
 * as gateway.h asks: net frees the record in the loop's close phase,
 * after every input of the turn, so it is still there for the report.
 * One that goes between inputs (a read error, a timeout, the client
 * closing) is reported at once.
 *
 * Leadership reaches the core as the node reports it: ready, with the
 * node's term, the moment the node starts serving; lost, the moment it
 * stops (node.h's node_callbacks; gateway.h says what the core makes of
 * them).
 *
 * Caller-allocated; used only from the loop's thread.
 */
struct corehost {
        struct gateway core;    /* the metrics port reads its counters */
        struct corequery query; /* its ops are the core's host */
        uv_loop_t *loop;
        struct node *node;
        const struct config *cfg; /* borrowed: the logs' paths */
        uv_timer_t timer;  /* the core's deadlines (gateway_host.timer) */
        uint64_t ev_index; /* the entry whose events ev_ns times */
        uint64_t ev_ns;
        struct applylog applylog;
        /* The audit trail (audit-log): the core's lines (gateway_host's
         * audit), and the refusals of net and the HTTP API, which main.c
         * points at it. */
        struct audit audit;
        struct backups backups;
        /* Inputs of the core under way (nested: see gateway_host's
         * lockfsm), and the connections that went meanwhile, by their
         * gw.host_link, to report once they are over. */
        unsigned depth;
        struct queue gone;
#ifdef BATON_CHAOS_BUG_WALLCLOCK
        int64_t bug_wall_base; /* wall ms minus uv_now() at init */
#endif
        char errmsg[PATH_MAX + 96]; /* why corehost_init() failed */
};

/* The node's leadership callbacks, into `h`'s core, for node_start(),
 * which comes before corehost_init(): the node calls them only from its
 * loop, once corehost_init() has returned. */
void corehost_node_callbacks(struct corehost *h, struct node_callbacks *cb);

/* Open the apply log and the audit trail (cfg->apply_log, cfg->audit_log;
 * "" leaves one off), set up the core on the started `node` and its timer
 * on `loop`, and take the node's event, entry and ACL callbacks. `loop`,
 * `node` and `cfg` are borrowed for the host's life.
 * 0, or BATON_EIO (a log could not be opened) or BATON_ENOMEM, with
 * h->errmsg saying what failed; on failure nothing is left to clean up. */
int corehost_init(struct corehost *h, uv_loop_t *loop, struct node *node,
                  const struct config *cfg);
/* Give the node's callbacks back, close the core (gateway_close()) and
 * its timer (the loop finishes it), let go of every backup pin, then close
 * the apply log and the audit trail. The core's raft requests still out end
 * later, when the node closes: the host still hands their answers to the core,
 * which then only frees their records, so `h` must stay until the node has
 * closed (gateway_requests_out() is 0 then). */
void corehost_close(struct corehost *h);

/* SIGHUP: open the apply log and the audit trail again at their paths
 * (applylog_reopen(), audit_reopen()), for logrotate; one that cannot be
 * opened is logged and keeps its old file. */
void corehost_reopen_logs(struct corehost *h);

/* The clocks of an input to `h`'s core, read now: the loop's
 * milliseconds, which every deadline counts in, and the monotonic
 * nanoseconds of the latency histograms (corereq.c's answers). */
struct gateway_now corehost_clocks(const struct corehost *h);

/* conn_frame_cb and conn_gone_cb; `data` is the struct corehost. */
void corehost_on_frame(void *data, struct conn *c,
                       const struct proto_header *hdr, const uint8_t *body);
void corehost_on_gone(void *data, struct conn *c);

/* Around every input of `h`'s core (corereq.c's answers too): a
 * connection that goes in between is reported to the core at the
 * outermost leave. */
void corehost_enter(struct corehost *h);
void corehost_leave(struct corehost *h);

/* End of a loop turn: the core proposes what arrived (gateway_flush()). */
void corehost_flush(struct corehost *h);

#endif /* SERVER_COREHOST_H */
