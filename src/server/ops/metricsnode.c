/* The metric families beyond metrics.c's (metricsnode.h). */
#include "metricsnode.h"

#include <inttypes.h>
#include <stdio.h>

#include <openssl/crypto.h>
#include <raft.h>
#include <uv.h>

#include "procstats.h"

/* baton_build_info: the versions this batond was built with and runs
 * (libraft exports no version call: its header's, as built). */
static void build_info(struct promtext *o)
{
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
        const char *ssl = OpenSSL_version(OPENSSL_VERSION_STRING);
#else
        const char *ssl = OpenSSL_version(OPENSSL_VERSION);
#endif

        promtext_put(o,
                     "# HELP baton_build_info The versions of batond and of "
                     "the libraft, libuv and OpenSSL it runs with; always "
                     "1.\n# TYPE baton_build_info gauge\n"
                     "baton_build_info{version=\"%s\",raft=\"%d.%d.%d\","
                     "libuv=\"%s\",openssl=\"%s\"} 1\n",
                     PACKAGE_VERSION, RAFT_VERSION_MAJOR, RAFT_VERSION_MINOR,
                     RAFT_VERSION_RELEASE, uv_version_string(), ssl);
}

/* The process_* set of the Prometheus client libraries. */
static void process(struct promtext *o)
{
        struct procstats p;

        procstats_read(&p);
        if (p.known) {
                promtext_put(
                    o,
                    "# HELP process_cpu_seconds_total Total user and system "
                    "CPU time spent in seconds.\n"
                    "# TYPE process_cpu_seconds_total counter\n"
                    "process_cpu_seconds_total %.2f\n"
                    "# HELP process_start_time_seconds Start time of the "
                    "process since unix epoch in seconds.\n"
                    "# TYPE process_start_time_seconds gauge\n"
                    "process_start_time_seconds %.2f\n",
                    p.cpu_seconds, p.start_time);
                promtext_gauge(o, "process_resident_memory_bytes",
                               "Resident memory size in bytes.",
                               p.resident_bytes);
                promtext_gauge(o, "process_virtual_memory_bytes",
                               "Virtual memory size in bytes.",
                               p.virtual_bytes);
        }
        if (p.fds_known) {
                promtext_gauge(o, "process_open_fds",
                               "Number of open file descriptors.", p.open_fds);
        }
        if (p.max_fds != 0) {
                promtext_gauge(o, "process_max_fds",
                               "Maximum number of open file descriptors.",
                               p.max_fds);
        }
}

/* A histogram family of one series, with its HELP and TYPE lines. */
static void histogram(struct promtext *o, const char *name, const char *help,
                      const struct histogram *h, const uint64_t *bounds)
{
        promtext_put(o, "# HELP %s %s\n# TYPE %s histogram\n", name, help,
                     name);
        promtext_histogram(o, name, NULL, NULL, h, bounds);
}

/* Who leads, as this node sees it, and the voters it has and reaches. */
static void leadership(struct promtext *o, const struct metrics *m)
{
        struct node_raft_stats rs;
        struct health_facts f;

        node_raft_stats(m->node, &rs);
        metrics_health_facts(m, &f);
        promtext_gauge(o, "baton_has_leader",
                       "1 when this node knows a leader.", rs.has_leader);
        promtext_gauge(o, "baton_ready", "1 when GET /ready would answer 200.",
                       ready_check(&f) == HEALTH_OK);
        promtext_counter(o, "baton_leader_changes_total",
                         "Leader changes this node saw: the leader it knows "
                         "changed to another node (the first one it knew "
                         "counts).",
                         rs.leader_changes);
        promtext_counter(o, "baton_leader_elections_won_total",
                         "Times this node became the serving leader.",
                         m->gateway->stats.elections_won);
        promtext_gauge(o, "baton_raft_voters",
                       "Voters in the raft configuration this node has.",
                       rs.voters);
        if (rs.leader) {
                promtext_gauge(o, "baton_raft_voters_reachable",
                               "On the leader: voters, itself included, it "
                               "heard from within an election timeout "
                               "(election-timeout-ms).",
                               rs.reachable);
        }
        histogram(o, "baton_disk_write_seconds",
                  "How long raft's appends of entries into the data "
                  "directory took, from the append to its callback on the "
                  "event loop: the write with its sync, and the callback's "
                  "wait for the loop.",
                  rs.disk_writes, histogram_bounds_us);
}

/* Grants and sessions: waits, holds, keepalives, expiries, revokes. */
static void grants(struct promtext *o, const struct gateway_stats *st)
{
        histogram(o, "baton_acquire_wait_seconds",
                  "On the leader that answered the client: how long an "
                  "acquire that queued waited, from its arrival until it "
                  "was granted.",
                  &st->acquire_wait, histogram_bounds_us);
        histogram(o, "baton_hold_seconds",
                  "How long grants were held, observed as each ends "
                  "(release, expiry, revoke), on every node as it applies "
                  "the log; timed by the leader's wall clock as the log "
                  "records it, to about a second.",
                  &st->hold, histogram_long_bounds_us);
        histogram(o, "baton_keepalive_gap_seconds",
                  "On the serving leader: time between successive "
                  "keepalives of a session (the first after its open, or "
                  "after this node became leader, from then).",
                  &st->keepalive_gap, histogram_long_bounds_us);
        promtext_counter(o, "baton_sessions_expired_total",
                         "Sessions ended by expiry, as this node applied "
                         "them (the same on every node).",
                         st->sessions_expired);
        promtext_counter(o, "baton_grants_revoked_total",
                         "Grants ended by an operator's revoke (of a "
                         "session or of a lock), as this node applied them.",
                         st->grants_revoked);
}

void metricsnode_render(struct promtext *o, const struct metrics *m)
{
        build_info(o);
        process(o);
        leadership(o, m);
        grants(o, &m->gateway->stats);
        if (m->certwatch != NULL && m->certwatch->not_after != 0) {
                promtext_put(o,
                             "# HELP baton_tls_cert_expiry_timestamp_seconds "
                             "When this node's certificate (tls-cert) "
                             "expires: its notAfter, in seconds since the "
                             "Unix epoch.\n"
                             "# TYPE baton_tls_cert_expiry_timestamp_seconds "
                             "gauge\nbaton_tls_cert_expiry_timestamp_seconds "
                             "%" PRId64 "\n",
                             m->certwatch->not_after);
        }
}
