/* batond's host of its request core (src/server/gateway/): it hands the
 * core every input from the raft node and the client connections, and
 * does the I/O the core leaves to it (the apply log, the ATTACH hash,
 * backups, the log). */
#include "corehost.h"

#include <string.h>

#include <openssl/evp.h>

#include "../../../include/baton/errors.h"
#include "../../proto/attach.h"
#include "../base/log.h"
#include "../raft/fsmdigest.h"

static void on_ready(void *data)
{
        struct corehost *h = data;

        gateway_on_ready(&h->core);
}

static void on_lost(void *data)
{
        struct corehost *h = data;

        gateway_on_lost(&h->core);
}

static void on_restored(void *data)
{
        struct corehost *h = data;

        gateway_on_restored(&h->core);
}

void corehost_node_callbacks(struct corehost *h, struct node_callbacks *cb)
{
        cb->ready = on_ready;
        cb->lost = on_lost;
        cb->restored = on_restored;
        cb->data = h;
}

/* A state machine event: its line is written before the core acts on it,
 * so that the line's mono_ns comes before every answer the event gives
 * (the checkers place applies between client operations by it). */
static void on_event(void *data, const struct lockfsm_event *ev)
{
        struct corehost *h = data;

        applylog_write(&h->applylog, node_entry_term(h->node), ev);
        gateway_on_event(&h->core, ev);
}

/* The end of an entry's events: the apply log's alone. */
static void on_entry(void *data, uint64_t index, uint8_t kind)
{
        struct corehost *h = data;

        applylog_write_entry(&h->applylog, node_entry_term(h->node), index,
                             kind);
}

/* An ACL entry: its line comes after the lock state machine's answer to
 * it and before its ENTRY line, as for any entry; term 0, as ACL lines
 * have always had. */
static void on_acl(void *data, uint64_t index, const struct command *c,
                   int status)
{
        struct corehost *h = data;

        applylog_write_acl(&h->applylog, 0, index, c, status);
        gateway_on_acl(&h->core, index, c, status);
}

/* gateway_host.hash_secret: SHA-256, as the client hashed it for OPEN. */
static int hash_secret(struct gateway_host *ops, const uint8_t *secret,
                       uint8_t *hash)
{
        unsigned char md[EVP_MAX_MD_SIZE];
        unsigned len = 0;

        (void)ops;
        if (EVP_Digest(secret, ATTACH_SECRET_SIZE, md, &len, EVP_sha256(),
                       NULL) != 1 ||
            len != ATTACH_HASH_SIZE) {
                return BATON_ENOMEM;
        }
        memcpy(hash, md, ATTACH_HASH_SIZE);
        return 0;
}

/* gateway_host.backup_start and backup_chunk: backup.h. */
static int backup_start_op(struct gateway_host *ops, struct conn *c,
                           uint64_t id)
{
        struct corehost *h = ops->data;

        return backup_start(&h->backups, c, id);
}

static int backup_chunk_op(struct gateway_host *ops, struct conn *c,
                           uint64_t id, const struct proto_backup *req)
{
        struct corehost *h = ops->data;

        return backup_chunk(&h->backups, c, id, req);
}

/* gateway_host.alarms: the state machine's digest differed from the
 * leader's (fsmdigest.h), as GET /ready's "diverged". */
static void alarms_op(struct gateway_host *ops, struct proto_alarms *out)
{
        struct corehost *h = ops->data;
        const struct fsmdigest *d = node_digest(h->node);

        if (d->diverged) {
                out->alarms |= PROTO_ALARM_DIVERGED;
                out->diverged_index = d->diverged_index;
                out->digest = d->diverged_own;
                out->leader_digest = d->diverged_leader;
        }
}

/* gateway_host.log: the core's line, as it formatted it. */
static void log_op(struct gateway_host *ops, enum log_level level,
                   const struct log_fields *f, const char *message)
{
        (void)ops;
        log_write_fields(level, f, "%s", message);
}

int corehost_init(struct corehost *h, uv_loop_t *loop, struct node *node,
                  const struct config *cfg)
{
        int rv;

        h->node = node;
        h->ops.data = h;
        h->ops.hash_secret = hash_secret;
        h->ops.backup_start = backup_start_op;
        h->ops.backup_chunk = backup_chunk_op;
        h->ops.alarms = alarms_op;
        h->ops.log = log_op;
        backups_init(&h->backups, loop, node);
        rv = applylog_open(&h->applylog, cfg->apply_log);
        if (rv != 0) {
                goto err;
        }
        rv = gateway_init(&h->core, &h->ops, loop, node, cfg, cfg->log_level);
        if (rv != 0) {
                goto err_after_applylog;
        }
        node_set_event_cb(node, on_event, h);
        node_set_entry_cb(node, on_entry, h);
        node_set_acl_cb(node, on_acl, h);
        return 0;

err_after_applylog:
        applylog_close(&h->applylog);
err:
        return rv;
}

void corehost_close(struct corehost *h)
{
        node_set_event_cb(h->node, NULL, NULL);
        node_set_entry_cb(h->node, NULL, NULL);
        node_set_acl_cb(h->node, NULL, NULL);
        gateway_close(&h->core);
        backup_forget_conn(&h->backups, NULL);
        applylog_close(&h->applylog);
}

void corehost_on_frame(void *data, struct conn *c,
                       const struct proto_header *hdr, const uint8_t *body)
{
        struct corehost *h = data;

        gateway_on_frame(&h->core, c, hdr, body);
}

void corehost_on_gone(void *data, struct conn *c)
{
        struct corehost *h = data;

        backup_forget_conn(&h->backups, c);
        gateway_on_gone(&h->core, c);
}

void corehost_flush(struct corehost *h)
{
        gateway_flush(&h->core);
}
