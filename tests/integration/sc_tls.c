/* Integration scenarios on the client port's TLS: who is refused, how, and
 * that a holder's lock never notices; the limits on unauthenticated
 * connections; certificates rotated with SIGHUP. */
#include "sc_tls.h"

#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>

#include "../../include/baton.h"
#include "../../src/tls/tls.h"
#include "tlsfiles.h"
#include "../../src/proto/reply.h"
#include "../../src/proto/query.h"

#define REFUSAL_MS 2000 /* a refused handshake is known by then */

/* A blocking TCP connection to 127.0.0.1:port of `addr`; -1 on failure. */
static int tcp_to(const char *addr)
{
        const char *colon = strrchr(addr, ':');
        struct sockaddr_in sa;
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

        if (fd < 0 || colon == NULL) {
                return -1;
        }
        memset(&sa, 0, sizeof sa);
        sa.sin_family = AF_INET;
        sa.sin_port = htons((uint16_t)atoi(colon + 1));
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
                close(fd);
                return -1;
        }
        return fd;
}

/* Whether the node closes `fd` within `ms` (reading and dropping what it
 * sends meanwhile). */
static bool closed_within(int fd, int ms)
{
        int64_t deadline = tclient_now_ms() + ms;
        char buf[4096];

        while (tclient_now_ms() < deadline) {
                struct pollfd pfd = {fd, POLLIN, 0};
                if (poll(&pfd, 1, 50) > 0) {
                        ssize_t n = read(fd, buf, sizeof buf);
                        if (n == 0 || (n < 0 && errno != EINTR)) {
                                return true;
                        }
                }
        }
        return false;
}

/*
 * A TLS handshake with the node at `addr` as a client with the files
 * ca/cert/key of the tests' directory, expecting the node's certificate
 * to carry `expect` (NULL: any). 0 when it completed and a PING was
 * answered, else BATON_ETLS / BATON_EIO with the reason in `why`.
 */
/* A client of `endpoints` that trusts DIR/ca.crt and presents
 * DIR/who.crt, instead of the environment's files. 0 or BATON_ETLS with
 * the reason in c->errmsg. */
int client_as(struct tclient *c, const char *endpoints, const char *ca,
              const char *who)
{
        char p[3][300];
        struct tls_files f = {p[0], p[1], p[2], NULL};
        struct tls_ctx *ctx = NULL;
        int rv;

        snprintf(p[0], sizeof p[0], "%s/%s.crt", tlsfiles_dir(), ca);
        snprintf(p[1], sizeof p[1], "%s/%s.crt", tlsfiles_dir(), who);
        snprintf(p[2], sizeof p[2], "%s/%s.key", tlsfiles_dir(), who);
        tclient_init(c, endpoints);
        rv = tls_ctx_create(&ctx, TLS_CLIENT, &f, c->errmsg, sizeof c->errmsg);
        if (rv != 0) {
                return rv;
        }
        tls_ctx_destroy(c->tls);
        c->tls = ctx;
        return 0;
}

static int handshake_as(const char *addr, const char *ca, const char *who,
                        const char *expect, char *why, size_t size)
{
        struct tclient raw;
        int rv;

        rv = client_as(&raw, addr, ca, who);
        if (rv != 0) {
                snprintf(why, size, "%s", raw.errmsg);
                tclient_close(&raw);
                return rv;
        }
        raw.try_ms = 0;
        snprintf(raw.expect, sizeof raw.expect, "%s", expect ? expect : "");
        /* In TLS 1.3 the node judges the client's certificate after the
         * client's side of the handshake is done: a refusal arrives as an
         * alert on the first read. */
        rv = tclient_connect(&raw, addr, REFUSAL_MS);
        if (rv == 0) {
                rv = tclient_ping(&raw, REFUSAL_MS, NULL);
        }
        snprintf(why, size, "%s", raw.errmsg);
        tclient_close(&raw);
        return rv;
}

/* The holder's lock, seen by the admin client: held under `token`. */
static bool still_held(struct ctx *x, struct tclient *admin, const char *name,
                       uint64_t token, int line)
{
        struct tclient_result r;
        int rv = tclient_query(admin, name, OP_MS, &r);

        if (rv != 0 || r.token != token) {
                fail_at(x, line,
                        "%s is no longer held under token %" PRIu64 ": %d %s",
                        name, token, rv, rs(x, &r));
                return false;
        }
        return true;
}

#define STILL_HELD(x, c, n, t)                                                 \
        do {                                                                   \
                if (!still_held(x, c, n, t, __LINE__)) {                       \
                        return;                                                \
                }                                                              \
        } while (0)

/* Plain text gets one plain ERROR (BATON_ETLS) and no data. */
static void plain_gets_nothing(struct ctx *x, const char *addr,
                               const char *name)
{
        uint8_t f[PROTO_HEADER_SIZE + 300];
        uint8_t reply[512];
        struct proto_header h;
        struct proto_string msg;
        size_t len = proto_write_query(f, sizeof f, 7, 0, name, strlen(name));
        ssize_t n = 0;
        int fd = tcp_to(addr);
        int status = 0;

        EXPECT(x, fd >= 0 && len > 0, "plain connection to %s", addr);
        EXPECT(x, write(fd, f, len) == (ssize_t)len, "plain write");
        for (size_t got = 0; got < sizeof reply;) {
                n = read(fd, reply + got, sizeof reply - got);
                if (n <= 0) {
                        n = (ssize_t)got;
                        break;
                }
                got += (size_t)n;
        }
        close(fd);
        EXPECT(x,
               n >= PROTO_HEADER_SIZE &&
                   proto_header_decode(&h, reply, PROTO_MAX_BODY) == 0 &&
                   h.type == PROTO_ERROR &&
                   (size_t)n == PROTO_HEADER_SIZE + h.length &&
                   proto_read_error(reply + PROTO_HEADER_SIZE, h.length,
                                    &status, &msg) == 0,
               "plain QUERY: expected one ERROR frame and the close, got "
               "%zd bytes",
               n);
        EXPECT(x, status == BATON_ETLS, "plain QUERY: ERROR %d, expected %d",
               status, BATON_ETLS);
}

/* While a client holds a lock: plain text, a certificate of another CA and
 * an expired one are refused; a client that does not trust the node's CA
 * refuses the node; the lock is untouched. */
void sc_tls_refused(struct ctx *x)
{
        struct tclient holder, admin;
        char name[64], why[512];
        unsigned leader;
        uint64_t token;
        const char *addr;
        int rv;

        EXPECT(x, tlsfiles_on(), "the cluster runs without TLS");
        EXPECT(x, harness_wait_healthy(&x->h, HEALTHY_MS, &leader) == 0, "%s",
               x->h.errmsg);
        addr = harness_client_address(&x->h, leader);
        lock_name(x, name, sizeof name, "tls-refused");
        EXPECT(x,
               tlsfiles_issue("foreign", "admin", -1, 30, 1) == 0 &&
                   tlsfiles_issue("expired", "admin", -30, -1, 0) == 0,
               "cannot make the refused certificates");
        OPEN(x, &holder, TTL_MS);
        GRANT(x, token, &holder, name);
        OPEN(x, &admin, TTL_MS);

        plain_gets_nothing(x, addr, name);
        EXPECT(x, x->ok, "plain");
        rv = handshake_as(addr, "ca", "foreign", NULL, why, sizeof why);
        printf("# another CA's certificate: %d (%s)\n", rv, why);
        EXPECT(x, rv != 0 && strstr(why, "unknown ca") != NULL,
               "a certificate of another CA: %d (%s)", rv, why);
        rv = handshake_as(addr, "ca", "expired", NULL, why, sizeof why);
        printf("# an expired certificate: %d (%s)\n", rv, why);
        EXPECT(x, rv != 0 && strstr(why, "expired") != NULL,
               "an expired certificate: %d (%s)", rv, why);
        rv = handshake_as(addr, "foreign", "admin", NULL, why, sizeof why);
        printf("# trusting another CA: %d (%s)\n", rv, why);
        EXPECT(x, rv == BATON_ETLS && strstr(why, "refused") != NULL,
               "a client that trusts another CA accepted the node: %d", rv);
        /* The control: the tests' own files get in. */
        rv = handshake_as(addr, "ca", "admin", NULL, why, sizeof why);
        EXPECT(x, rv == 0, "the admin certificate was refused: %d (%s)", rv,
               why);
        STILL_HELD(x, &admin, name, token);
        tclient_close(&holder);
        tclient_close(&admin);
}

/* A follower restarted with tight limits: the third connection from one
 * address is refused with ETOOMANYCONNS, and a socket that never starts
 * its handshake is closed after the handshake timeout. */
void sc_tls_limits(struct ctx *x)
{
        static const char *const limits[] = {"--max-connections-per-address",
                                             "2", "--handshake-timeout-ms",
                                             "500"};
        struct tclient c[3];
        struct proto_header h;
        struct proto_string msg;
        const uint8_t *body;
        unsigned leader, node, i;
        const char *addr;
        int rv, status = 0, fd;
        int64_t t0;

        EXPECT(x, harness_wait_healthy(&x->h, HEALTHY_MS, &leader) == 0, "%s",
               x->h.errmsg);
        node = a_follower(x, leader);
        addr = harness_client_address(&x->h, node);
        EXPECT(x,
               harness_term(&x->h, node, NULL) == 0 &&
                   harness_wait_exit(&x->h, node, HEALTHY_MS, NULL) == 0,
               "%s", x->h.errmsg);
        EXPECT(x, harness_set_flags(&x->h, node, limits, 4) == 0, "%s",
               x->h.errmsg);
        RESTART(x, node);
        for (i = 0; i < 3; i++) {
                EXPECT(x, tclient_init(&c[i], addr) == 0, "tclient_init");
                c[i].try_ms = 0;
        }
        for (i = 0; i < 2; i++) {
                EXPECT(x,
                       tclient_connect(&c[i], addr, OP_MS) == 0 &&
                           tclient_ping(&c[i], OP_MS, NULL) == 0,
                       "connection %u: %s", i + 1, c[i].errmsg);
        }
        EXPECT(x, tclient_connect(&c[2], addr, OP_MS) == 0, "%s", c[2].errmsg);
        rv = tclient_raw_recv(&c[2], OP_MS, &h, &body);
        EXPECT(x,
               rv == 0 && h.type == PROTO_ERROR &&
                   proto_read_error(body, h.length, &status, &msg) == 0 &&
                   status == BATON_ETOOMANYCONNS,
               "third connection from one address: %d, status %d", rv, status);
        for (i = 0; i < 3; i++) {
                tclient_close(&c[i]);
        }
        fd = tcp_to(addr);
        EXPECT(x, fd >= 0, "silent connection");
        t0 = tclient_now_ms();
        EXPECT(x, closed_within(fd, 5000),
               "a silent connection is still open after 5 s");
        printf("# a silent connection was closed after %" PRId64 " ms\n",
               tclient_now_ms() - t0);
        close(fd);
        EXPECT(x,
               harness_term(&x->h, node, NULL) == 0 &&
                   harness_wait_exit(&x->h, node, HEALTHY_MS, NULL) == 0,
               "%s", x->h.errmsg);
        EXPECT(x, harness_set_flags(&x->h, node, NULL, 0) == 0, "%s",
               x->h.errmsg);
        RESTART(x, node);
}

/* New files and SIGHUP: new connections get the new certificate, the
 * connection opened before keeps working. */
void sc_tls_rotation(struct ctx *x)
{
        struct tclient before;
        static unsigned rotations;
        char why[512], cn[16], file[16], cmd[1024], san[64], name[48];
        unsigned leader, node;
        const char *addr;
        int rv;

        EXPECT(x, harness_wait_healthy(&x->h, HEALTHY_MS, &leader) == 0, "%s",
               x->h.errmsg);
        node = a_follower(x, leader);
        addr = harness_client_address(&x->h, node);
        snprintf(cn, sizeof cn, "node-%u", node);
        snprintf(file, sizeof file, "node%u", node);
        /* A name of its own, as every cluster of the run shares the files. */
        snprintf(name, sizeof name, "rotated-%u.example", ++rotations);
        snprintf(san, sizeof san, "DNS:%s", name);
        EXPECT(x, tclient_init(&before, addr) == 0, "tclient_init");
        before.follow = true;
        EXPECT(x, tclient_connect(&before, addr, OP_MS) == 0, "%s",
               before.errmsg);
        rv = handshake_as(addr, "ca", "admin", name, why, sizeof why);
        EXPECT(x, rv == BATON_ETLS,
               "before the rotation the node already has the new "
               "certificate: %d",
               rv);
        /* The new certificate carries an extra name to tell it apart. */
        EXPECT(x, tlsfiles_issue_san("rotated", cn, san) == 0,
               "cannot make the rotated certificate");
        snprintf(cmd, sizeof cmd,
                 "cp %s/rotated.crt %s/%s.crt && "
                 "cp %s/rotated.key %s/%s.key",
                 tlsfiles_dir(), tlsfiles_dir(), file, tlsfiles_dir(),
                 tlsfiles_dir(), file);
        EXPECT(x, system(cmd) == 0, "%s", cmd);
        EXPECT(x, kill(x->h.nodes[node - 1].pid, SIGHUP) == 0, "SIGHUP");
        for (int64_t until = tclient_now_ms() + OP_MS;;) {
                rv = handshake_as(addr, "ca", "admin", name, why, sizeof why);
                if (rv == 0 || tclient_now_ms() > until) {
                        break;
                }
                usleep(50 * 1000);
        }
        EXPECT(x, rv == 0, "after SIGHUP: %d (%s)", rv, why);
        rv = tclient_ping(&before, OP_MS, NULL);
        EXPECT(x, rv == 0 && before.reconnects == 1,
               "the connection opened before the rotation: %d, %lu "
               "connections (%s)",
               rv, before.reconnects, before.errmsg);
        tclient_close(&before);
}

/* Move ciphertext both ways on blocking `fd` until `t` is ready or has
 * plaintext, or `ms` pass: bytes of plaintext read into `out`, 0 at EOF,
 * -1 on failure. */
static long tls_blocking_read(int fd, struct tls_conn *t, uint8_t *out,
                              size_t cap, int ms)
{
        int64_t deadline = tclient_now_ms() + ms;
        uint8_t buf[16384];

        for (;;) {
                long rv = tls_read(t, out, cap);
                size_t n;
                while ((n = tls_take(t, buf, sizeof buf)) > 0) {
                        if (write(fd, buf, n) != (ssize_t)n) {
                                return -1;
                        }
                }
                if (rv != 0 || (cap == 0 && tls_ready(t))) {
                        return rv == TLS_EOF ? 0 : rv;
                }
                struct pollfd pfd = {fd, POLLIN, 0};
                if (poll(&pfd, 1, (int)(deadline - tclient_now_ms())) <= 0) {
                        return -1;
                }
                ssize_t got = read(fd, buf, sizeof buf);
                if (got <= 0) {
                        return got == 0 ? 0 : -1;
                }
                tls_feed(t, buf, (size_t)got);
        }
}

/* GET /metrics over TLS with the tests' admin certificate: whether a 200
 * came back. */
static bool tls_scrape(const char *addr)
{
        static const char get[] = "GET /metrics HTTP/1.0\r\n\r\n";
        char p[3][300], err[512], reply[256];
        struct tls_files f = {p[0], p[1], p[2], NULL};
        struct tls_ctx *ctx = NULL;
        struct tls_conn *t = NULL;
        bool ok = false;
        int fd = tcp_to(addr);
        long n;

        snprintf(p[0], sizeof p[0], "%s/ca.crt", tlsfiles_dir());
        snprintf(p[1], sizeof p[1], "%s/admin.crt", tlsfiles_dir());
        snprintf(p[2], sizeof p[2], "%s/admin.key", tlsfiles_dir());
        if (fd >= 0 &&
            tls_ctx_create(&ctx, TLS_CLIENT, &f, err, sizeof err) == 0 &&
            tls_conn_create(&t, ctx, NULL, "127.0.0.1") == 0 &&
            tls_blocking_read(fd, t, NULL, 0, OP_MS) == 0 &&
            tls_write(t, (const uint8_t *)get, sizeof get - 1) == 0) {
                n = tls_blocking_read(fd, t, (uint8_t *)reply, sizeof reply - 1,
                                      OP_MS);
                reply[n > 0 ? n : 0] = '\0';
                ok = strncmp(reply, "HTTP/1.0 200", 12) == 0;
        }
        tls_conn_destroy(t);
        tls_ctx_destroy(ctx);
        if (fd >= 0) {
                close(fd);
        }
        return ok;
}

/* Restart node `id` with `flags` (n of them; 0: none), then wait for the
 * cluster to be healthy again. */
static bool restart_healthy(struct ctx *x, unsigned id,
                            const char *const *flags, unsigned n, int line)
{
        if (!scenario_restart(x, id, flags, n, true, line)) {
                return false;
        }
        if (harness_wait_healthy(&x->h, HEALTHY_MS, NULL) != 0) {
                fail_at(x, line, "after restarting node %u: %s", id,
                        x->h.errmsg);
                return false;
        }
        return true;
}

#define RESTART_HEALTHY(x, id, flags, n)                                       \
        do {                                                                   \
                if (!restart_healthy(x, id, flags, n, __LINE__)) {             \
                        return;                                                \
                }                                                              \
        } while (0)

/* The metrics port: a cap on connections, a deadline for silent ones, and
 * TLS when asked for (then plain HTTP gets no metrics: test_metricsport
 * checks what it gets instead). */
void sc_metrics_guarded(struct ctx *x)
{
        static const char *const limits[] = {"--handshake-timeout-ms", "500",
                                             "--metrics-max-connections", "2"};
        static const char *const tls[] = {"--metrics-tls", "true"};
        char text[65536];
        unsigned leader, node;
        const char *addr;
        int fd[3];
        int64_t t0;

        EXPECT(x, harness_wait_healthy(&x->h, HEALTHY_MS, &leader) == 0, "%s",
               x->h.errmsg);
        node = a_follower(x, leader);
        addr = x->h.nodes[node - 1].metrics_address;
        RESTART_HEALTHY(x, node, limits, 4);
        fd[0] = tcp_to(addr);
        fd[1] = tcp_to(addr);
        fd[2] = tcp_to(addr);
        EXPECT(x, fd[0] >= 0 && fd[1] >= 0 && fd[2] >= 0, "connect %s", addr);
        t0 = tclient_now_ms();
        EXPECT(x, closed_within(fd[2], 1000),
               "a third metrics connection was not closed at once");
        EXPECT(x, closed_within(fd[0], 5000) && closed_within(fd[1], 5000),
               "silent metrics connections are still open after 5 s");
        printf("# silent metrics connections closed after %" PRId64 " ms\n",
               tclient_now_ms() - t0);
        for (int i = 0; i < 3; i++) {
                close(fd[i]);
        }
        EXPECT(x, harness_metrics(&x->h, node, text, sizeof text, OP_MS) > 0,
               "a scrape after the silent ones: %s", x->h.errmsg);
        if (!tlsfiles_on()) {
                RESTART_HEALTHY(x, node, NULL, 0);
                return;
        }
        RESTART_HEALTHY(x, node, tls, 2);
        EXPECT(x, harness_metrics(&x->h, node, text, sizeof text, 2000) < 0,
               "plain HTTP got metrics from a TLS metrics port");
        EXPECT(x, tls_scrape(addr), "no metrics over TLS from %s", addr);
        RESTART_HEALTHY(x, node, NULL, 0);
}

/* REVOKE of `session` sent by `c`: its status, `r` filled. */
static int revoke_session(struct tclient *c, uint64_t session,
                          struct tclient_result *r)
{
        struct command k = {.type = COMMAND_REVOKE, .session = session};

        return tclient_command(c, &k, OP_MS, r);
}

/* An operator's REVOKE: a client of role lock may not; the admin may, and
 * the session ends as an expiry would, recorded in the apply log with the
 * admin's identity. */
static void revoke_by_role(struct ctx *x, struct tclient *locker,
                           struct tclient *admin, unsigned leader)
{
        struct tclient_result r;
        uint32_t ttl;
        int rv;

        struct command k = {.type = COMMAND_REVOKE_LOCK,
                            .session = admin->session,
                            .token = 1,
                            .name = "roles-revoke",
                            .name_len = 12};

        rv = tclient_command(locker, &k, OP_MS, &r);
        EXPECT(x, rv == BATON_EPERM, "lock: REVOKE_LOCK answered %d", rv);
        rv = tclient_command(admin, &k, OP_MS, &r);
        EXPECT(x, rv == BATON_ENOTHOLDER,
               "admin: REVOKE_LOCK of no grant answered %d", rv);
        rv = revoke_session(locker, admin->session, &r);
        EXPECT(x, rv == BATON_EPERM, "lock: REVOKE answered %d", rv);
        rv = tclient_keepalive(admin, OP_MS, &ttl);
        EXPECT(x, rv == 0, "the admin's session after a refused REVOKE: %d",
               rv);
        rv = revoke_session(admin, locker->session, &r);
        EXPECT(x, rv == 0 && r.kind == PROTO_KIND_EXPIRED,
               "admin: REVOKE of the locker's session: %d %s", rv, rs(x, &r));
        rv = tclient_keepalive(locker, OP_MS, &ttl);
        EXPECT(x, rv == BATON_EEXPIRED, "the revoked session's KEEPALIVE: %d",
               rv);
        rv = revoke_session(admin, locker->session, &r);
        EXPECT(x, rv == BATON_EEXPIRED, "REVOKE of an ended session: %d", rv);
        EXPECT(x,
               file_has(x->h.nodes[leader - 1].apply_log,
                        "\"cause\":\"REVOKE\"") &&
                   file_has(x->h.nodes[leader - 1].apply_log, "\"by\":\""),
               "no REVOKE with who asked in the leader's apply log");
}

/* Roles from certificate identities: "reader" (role read) may look but
 * not open a session; "locker" (the default role, lock) may lock but not
 * administer (nor REVOKE); the admin of the tests may. */
void sc_tls_roles(struct ctx *x)
{
        struct tclient reader, locker, admin;
        struct tclient_result r;
        struct baton_status st;
        char name[64];
        unsigned leader, other;
        uint64_t token;
        int rv;

        EXPECT(x, tlsfiles_on(), "the cluster runs without TLS");
        EXPECT(x, harness_wait_healthy(&x->h, HEALTHY_MS, &leader) == 0, "%s",
               x->h.errmsg);
        other = a_follower(x, leader);
        lock_name(x, name, sizeof name, "roles");
        EXPECT(x,
               tlsfiles_issue("reader", "reader", -1, 30, 0) == 0 &&
                   tlsfiles_issue("locker", "locker", -1, 30, 0) == 0,
               "cannot make the role certificates");
        OPEN(x, &admin, TTL_MS);
        GRANT(x, token, &admin, name);
        EXPECT(x,
               client_as(&reader, x->h.endpoints, "ca", "reader") == 0 &&
                   client_as(&locker, x->h.endpoints, "ca", "locker") == 0,
               "clients: %s %s", reader.errmsg, locker.errmsg);

        rv = tclient_query(&reader, name, OP_MS, &r);
        EXPECT(x, rv == 0 && r.token == token, "read: QUERY %d %s", rv,
               rs(x, &r));
        rv = tclient_status(&reader, OP_MS, &st);
        EXPECT(x, rv == 0, "read: STATUS %d (%s)", rv, reader.errmsg);
        rv = tclient_session_open(&reader, TTL_MS, "reader", OP_MS, &r);
        EXPECT(x, rv == BATON_EPERM, "read: OPEN answered %d, not EPERM", rv);

        rv = tclient_session_open(&locker, TTL_MS, "locker", OP_MS, &r);
        EXPECT(x, rv == 0 && r.kind == PROTO_KIND_OPENED,
               "lock: OPEN %d %s (%s)", rv, rs(x, &r), locker.errmsg);
        rv = tclient_try(&locker, name, 1, OP_MS, &r);
        EXPECT(x, rv == BATON_EBUSY, "lock: try on a held lock: %d %s", rv,
               rs(x, &r));
        rv = tclient_member_remove(&locker, other, OP_MS);
        EXPECT(x, rv == BATON_EPERM, "lock: MEMBER_REMOVE answered %d", rv);
        rv = tclient_transfer(&locker, other, OP_MS);
        EXPECT(x, rv == BATON_EPERM, "lock: TRANSFER answered %d", rv);
        rv =
            tclient_member_add(&locker, 9, "127.0.0.1:1", "127.0.0.1:2", OP_MS);
        EXPECT(x, rv == BATON_EPERM, "lock: MEMBER_ADD answered %d", rv);

        EXPECT(x, harness_wait_healthy(&x->h, HEALTHY_MS, &leader) == 0, "%s",
               x->h.errmsg);
        rv = tclient_query(&admin, name, OP_MS, &r);
        EXPECT(x, rv == 0 && r.token == token,
               "the holder's lock after the refusals: %d %s", rv, rs(x, &r));
        RELEASE(x, &admin, name, token);
        revoke_by_role(x, &locker, &admin, leader);
        tclient_close(&reader);
        tclient_close(&locker);
        tclient_close(&admin);
}

/* Wait up to `ms` for `needle` in any node's log but node `skip`'s. */
static bool some_log_has(struct ctx *x, unsigned skip, const char *needle,
                         int ms)
{
        int64_t until = tclient_now_ms() + ms;
        unsigned i;

        do {
                for (i = 1; i <= x->h.n; i++) {
                        if (i != skip && log_has(x, i, needle)) {
                                return true;
                        }
                }
                usleep(100 * 1000);
        } while (tclient_now_ms() < until);
        return false;
}

/* Node `id`'s last applied index, from its metrics (a node with a
 * certificate of another CA cannot be asked on its client port); -1 when
 * unknown. */
static long long applied_of(struct ctx *x, unsigned id)
{
        static char text[65536];
        const char *p;

        if (harness_metrics(&x->h, id, text, sizeof text, OP_MS) < 0 ||
            (p = strstr(text, "\nbaton_raft_applied_index ")) == NULL) {
                return -1;
        }
        return atoll(p + strlen("\nbaton_raft_applied_index "));
}

/* Node `node` restarted with `cert`/`key` of the tests' directory: the
 * others refuse its raft traffic (`why` in their logs), so it never sees
 * the entries the cluster commits meanwhile, nor disturbs its leader. */
static void impostor(struct ctx *x, unsigned node, const char *cert,
                     const char *ca, const char *why)
{
        char crt[300], key[300], cafile[300], name[64];
        const char *flags[] = {"--tls-cert", crt,        "--tls-key",
                               key,          "--tls-ca", cafile};
        struct tclient c;
        struct tclient_result r;
        struct baton_status st;
        unsigned leader, after;
        uint64_t term, token;
        long long applied;
        int rv;

        snprintf(crt, sizeof crt, "%s/%s.crt", tlsfiles_dir(), cert);
        snprintf(key, sizeof key, "%s/%s.key", tlsfiles_dir(), cert);
        snprintf(cafile, sizeof cafile, "%s/%s.crt", tlsfiles_dir(),
                 ca != NULL ? ca : "ca");
        EXPECT(x, harness_wait_healthy(&x->h, HEALTHY_MS, &leader) == 0, "%s",
               x->h.errmsg);
        EXPECT(x,
               tclient_status_of(harness_client_address(&x->h, leader), OP_MS,
                                 &st) == 0,
               "leader's status");
        term = st.term;
        EXPECT(x,
               harness_term(&x->h, node, NULL) == 0 &&
                   harness_wait_exit(&x->h, node, HEALTHY_MS, NULL) == 0 &&
                   harness_set_flags(&x->h, node, flags, ca != NULL ? 6 : 4) ==
                       0 &&
                   harness_restart(&x->h, node) == 0,
               "%s", x->h.errmsg);
        EXPECT(x, some_log_has(x, node, why, OP_MS),
               "no node logged \"%s\" for node %u", why, node);
        /* The others carry on without it. */
        lock_name(x, name, sizeof name, "impostor");
        OPEN(x, &c, TTL_MS);
        GRANT(x, token, &c, name);
        sleep(1);
        applied = applied_of(x, node);
        EXPECT(x, applied >= 0 && (uint64_t)applied < token,
               "node %u with %s applied %lld, the grant is at %" PRIu64
               ": its raft traffic got in",
               node, cert, applied, token);
        EXPECT(x,
               harness_wait_leader(&x->h, OP_MS, &after) == 0 &&
                   after == leader &&
                   tclient_status_of(harness_client_address(&x->h, after),
                                     OP_MS, &st) == 0 &&
                   st.term == term,
               "the leader changed while node %u ran with %s", node, cert);
        rv = tclient_release(&c, name, 1, token, OP_MS, &r);
        EXPECT(x, rv == 0, "release: %d %s", rv, rs(x, &r));
        tclient_close(&c);
        EXPECT(x,
               harness_term(&x->h, node, NULL) == 0 &&
                   harness_wait_exit(&x->h, node, HEALTHY_MS, NULL) == 0 &&
                   harness_set_flags(&x->h, node, NULL, 0) == 0,
               "%s", x->h.errmsg);
        RESTART(x, node);
}

/* A node with an expired certificate does not start: it says so and
 * exits 1; with its own it rejoins. */
static void expired_refused(struct ctx *x, unsigned node, const char *cert)
{
        char crt[300], key[300];
        const char *flags[] = {"--tls-cert", crt, "--tls-key", key};
        int status = -1;

        snprintf(crt, sizeof crt, "%s/%s.crt", tlsfiles_dir(), cert);
        snprintf(key, sizeof key, "%s/%s.key", tlsfiles_dir(), cert);
        EXPECT(x,
               harness_term(&x->h, node, NULL) == 0 &&
                   harness_wait_exit(&x->h, node, HEALTHY_MS, NULL) == 0 &&
                   harness_run_once(&x->h, node, flags, 4, OP_MS, &status) == 0,
               "%s", x->h.errmsg);
        EXPECT(x, status == 1 && log_has(x, node, "expired on"),
               "node %u with %s: exit %d, and its log should say 'expired on'",
               node, cert, status);
        RESTART(x, node);
}

/* A node presenting another node's certificate, or one of another CA (with
 * that CA beside the cluster's as its tls-ca), is kept out of the raft traffic;
 * one with an expired certificate does not start; with its own it rejoins. */
void sc_tls_impostor(struct ctx *x)
{
        unsigned leader, node, other;
        char cn[16], why[96];

        EXPECT(x, tlsfiles_on(), "the cluster runs without TLS");
        EXPECT(x, harness_wait_healthy(&x->h, HEALTHY_MS, &leader) == 0, "%s",
               x->h.errmsg);
        node = a_follower(x, leader);
        other = leader; /* a node whose certificate it borrows */
        snprintf(cn, sizeof cn, "node%u", other);
        snprintf(why, sizeof why, "claims node %u (identity 'node-%u') but",
                 node, node);
        impostor(x, node, cn, NULL, why);
        EXPECT(x, x->ok, "another node's certificate");
        snprintf(cn, sizeof cn, "node-%u", node);
        EXPECT(x,
               tlsfiles_issue("foreign-node", cn, -1, 30, 1) == 0 &&
                   tlsfiles_issue("expired-node", cn, -30, -1, 0) == 0,
               "cannot make the refused node certificates");
        /* It sends the other CA with its certificate, and the peers
         * refuse that CA. */
        impostor(x, node, "foreign-node", "both-ca", "Some other CA refused");
        EXPECT(x, x->ok, "another CA's certificate");
        expired_refused(x, node, "expired-node");
}
