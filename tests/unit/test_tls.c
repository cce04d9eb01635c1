/* The TLS module over memory: handshakes, identities, refusals, and records
 * cut anywhere. Certificates are made by tests/lib/certs.c in a temporary
 * directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/crypto.h>

#include "../../include/baton.h"
#include "../../src/tls/tls.h"
#include "../lib/certs.h"

static char dir[] = "/tmp/baton-test-tls-XXXXXX";
static uint64_t revoked_serial;

static const char *path(const char *name)
{
        static char buf[8][256];
        static unsigned next;
        char *p = buf[next++ % 8];

        snprintf(p, sizeof buf[0], "%s/%s", dir, name);
        return p;
}

/* The cluster CA signs node-1, node-2 and a client "app"; another CA signs
 * a second "app"; "old" has expired and "gone" is revoked. */
static int make_certs(void **state)
{
        struct certs_ca *ca = certs_ca_create("baton test CA");
        struct certs_ca *other = certs_ca_create("another CA");
        const char *san = "IP:127.0.0.1,DNS:localhost";
        int rv = 0;

        (void)state;
        if (mkdtemp(dir) == NULL || ca == NULL || other == NULL) {
                return -1;
        }
        rv |= certs_ca_write(ca, path("ca.crt"));
        rv |= certs_ca_write(other, path("other-ca.crt"));
        rv |= certs_issue(ca, "node-1", san, -1, 30, path("node1.crt"),
                          path("node1.key"), NULL);
        rv |= certs_issue(ca, "node-2", "DNS:node-2.example", -1, 30,
                          path("node2.crt"), path("node2.key"), NULL);
        rv |= certs_issue(ca, "app", NULL, -1, 30, path("app.crt"),
                          path("app.key"), NULL);
        rv |= certs_issue(other, "app", NULL, -1, 30, path("rogue.crt"),
                          path("rogue.key"), NULL);
        rv |= certs_issue(ca, "old", NULL, -30, -1, path("old.crt"),
                          path("old.key"), NULL);
        rv |= certs_issue(ca, "gone", NULL, -1, 30, path("gone.crt"),
                          path("gone.key"), &revoked_serial);
        rv |= certs_crl_write(ca, &revoked_serial, 1, path("ca.crl"));
        certs_ca_destroy(ca);
        certs_ca_destroy(other);
        return rv;
}

static int remove_certs(void **state)
{
        char cmd[300];

        (void)state;
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        return system(cmd) == 0 ? 0 : -1;
}

static struct tls_ctx *ctx(enum tls_side side, const char *ca, const char *who,
                           const char *crl)
{
        char cert[64];
        char key[64];
        char err[TLS_ERRMSG_MAX];
        struct tls_files f;
        struct tls_ctx *x;

        snprintf(cert, sizeof cert, "%s.crt", who);
        snprintf(key, sizeof key, "%s.key", who);
        f.ca = path(ca);
        f.cert = path(cert);
        f.key = path(key);
        f.crl = crl != NULL ? path(crl) : NULL;
        if (tls_ctx_create(&x, side, &f, err, sizeof err) != 0) {
                fail_msg("%s", err);
        }
        return x;
}

/* A server and a client connection, and what each read. */
struct pair {
        struct tls_ctx *sx;
        struct tls_ctx *cx;
        struct tls_conn *s;
        struct tls_conn *c;
        long s_rv; /* last tls_read() result */
        long c_rv;
        uint8_t s_got[65536];
        size_t s_len;
        uint8_t c_got[65536];
        size_t c_len;
};

static void pair_open(struct pair *p, const char *server, const char *client,
                      const char *expect, const char *host, const char *crl)
{
        memset(p, 0, sizeof *p);
        p->sx = ctx(TLS_SERVER, "ca.crt", server, crl);
        p->cx = ctx(TLS_CLIENT, "ca.crt", client, NULL);
        assert_int_equal(tls_conn_create(&p->s, p->sx, NULL, NULL), 0);
        assert_int_equal(tls_conn_create(&p->c, p->cx, expect, host), 0);
}

static void pair_close(struct pair *p)
{
        tls_conn_destroy(p->s);
        tls_conn_destroy(p->c);
        tls_ctx_destroy(p->sx);
        tls_ctx_destroy(p->cx);
}

/* Read what `t` has into `got`; the last result into `*rv`. */
static void drain(struct tls_conn *t, uint8_t *got, size_t *len, long *rv)
{
        for (;;) {
                *rv = tls_read(t, got + *len, 65536 - *len);
                if (*rv <= 0) {
                        return;
                }
                *len += (size_t)*rv;
        }
}

/* Move ciphertext from `from` to `to`, `step` bytes at a time (0: all at
 * once), reading after each step. Returns how many bytes moved. */
static size_t move(struct tls_conn *from, struct tls_conn *to, size_t step,
                   uint8_t *got, size_t *len, long *rv)
{
        uint8_t buf[65536];
        size_t n = tls_take(from, buf, sizeof buf);
        size_t off = 0;

        while (off < n) {
                size_t k = step == 0 || n - off < step ? n - off : step;
                assert_int_equal(tls_feed(to, buf + off, k), 0);
                off += k;
                drain(to, got, len, rv);
        }
        return n;
}

/* Exchange until neither side has anything to send. */
static void run(struct pair *p, size_t step)
{
        drain(p->c, p->c_got, &p->c_len, &p->c_rv); /* the ClientHello */
        for (;;) {
                size_t n =
                    move(p->c, p->s, step, p->s_got, &p->s_len, &p->s_rv);
                n += move(p->s, p->c, step, p->c_got, &p->c_len, &p->c_rv);
                if (n == 0) {
                        return;
                }
        }
}

static void handshake_and_both_ways(void **state)
{
        struct pair p;

        (void)state;
        pair_open(&p, "node1", "app", NULL, "127.0.0.1", NULL);
        run(&p, 0);
        assert_true(tls_ready(p.s));
        assert_true(tls_ready(p.c));
        assert_string_equal(tls_peer(p.s), "app");
        assert_string_equal(tls_peer(p.c), "node-1");
        assert_true(tls_peer_is(p.c, "node-1"));
        assert_true(tls_peer_is(p.c, "localhost")); /* a DNS SAN */
        assert_false(tls_peer_is(p.c, "node-2"));
        assert_false(tls_peer_is(p.c, "node-"));
        assert_int_equal(tls_write(p.c, (const uint8_t *)"ping", 4), 0);
        assert_int_equal(tls_write(p.s, (const uint8_t *)"pong!", 5), 0);
        run(&p, 0);
        assert_int_equal(p.s_len, 4);
        assert_memory_equal(p.s_got, "ping", 4);
        assert_int_equal(p.c_len, 5);
        assert_memory_equal(p.c_got, "pong!", 5);
        assert_string_equal(tls_errmsg(p.s), "");
        pair_close(&p);
}

/* The whole handshake, one byte at a time each way. */
static void handshake_byte_by_byte(void **state)
{
        struct pair p;

        (void)state;
        pair_open(&p, "node1", "app", "node-1", NULL, NULL);
        run(&p, 1);
        assert_true(tls_ready(p.s));
        assert_true(tls_ready(p.c));
        pair_close(&p);
}

/* One application record cut at every byte: nothing comes out before its
 * last byte, all of it with the last byte. */
static void record_split_at_every_byte(void **state)
{
        uint8_t rec[512];
        uint8_t out[256];
        uint8_t msg[200];
        struct pair p;
        size_t n;
        size_t cut;
        long rv;

        (void)state;
        for (n = 0; n < sizeof msg; n++) {
                msg[n] = (uint8_t)(n * 7);
        }
        pair_open(&p, "node1", "app", NULL, NULL, NULL);
        run(&p, 0);
        for (cut = 1; cut < 200 + 22; cut++) {
                assert_int_equal(tls_write(p.c, msg, sizeof msg), 0);
                n = tls_take(p.c, rec, sizeof rec);
                assert_true(n > sizeof msg && n < sizeof rec);
                if (cut >= n) {
                        break;
                }
                assert_int_equal(tls_feed(p.s, rec, cut), 0);
                assert_int_equal(tls_read(p.s, out, sizeof out), 0);
                assert_int_equal(tls_feed(p.s, rec + cut, n - cut), 0);
                rv = tls_read(p.s, out, sizeof out);
                assert_int_equal(rv, sizeof msg);
                assert_memory_equal(out, msg, sizeof msg);
        }
        assert_true(cut > 200);
        pair_close(&p);
}

/* The client expects node-2 and gets node-1: refused, with the reason, and
 * the server learns it from the alert. */
static void wrong_identity_refused(void **state)
{
        struct pair p;

        (void)state;
        pair_open(&p, "node1", "app", "node-2", NULL, NULL);
        run(&p, 0);
        assert_int_equal(p.c_rv, BATON_ETLS);
        assert_false(tls_ready(p.c));
        assert_non_null(strstr(tls_errmsg(p.c), "not 'node-2'"));
        assert_int_equal(p.s_rv, BATON_ETLS);
        assert_false(tls_ready(p.s));
        pair_close(&p);
}

/* A DNS SAN is an identity too. */
static void san_is_an_identity(void **state)
{
        struct pair p;

        (void)state;
        pair_open(&p, "node2", "app", "node-2.example", NULL, NULL);
        run(&p, 0);
        assert_true(tls_ready(p.c));
        pair_close(&p);
}

/* The client checks the server's address against its IP SANs. */
static void host_checked(void **state)
{
        struct pair p;

        (void)state;
        pair_open(&p, "node1", "app", NULL, "10.9.9.9", NULL);
        run(&p, 0);
        assert_int_equal(p.c_rv, BATON_ETLS);
        assert_non_null(strstr(tls_errmsg(p.c), "refused"));
        pair_close(&p);
        pair_open(&p, "node1", "app", NULL, "localhost", NULL);
        run(&p, 0);
        assert_true(tls_ready(p.c));
        pair_close(&p);
}

/* Client certificates the server must refuse: another CA's, an expired
 * one, a revoked one. */
static void refused_client(const char *who, const char *why)
{
        struct pair p;

        pair_open(&p, "node1", "app", NULL, NULL, "ca.crl");
        tls_conn_destroy(p.c);
        tls_ctx_destroy(p.cx);
        p.cx = ctx(TLS_CLIENT, "ca.crt", who, NULL);
        assert_int_equal(tls_conn_create(&p.c, p.cx, NULL, NULL), 0);
        run(&p, 0);
        assert_int_equal(p.s_rv, BATON_ETLS);
        assert_false(tls_ready(p.s));
        if (strstr(tls_errmsg(p.s), why) == NULL) {
                fail_msg("%s: '%s' lacks '%s'", who, tls_errmsg(p.s), why);
        }
        /* The client hears of it and holds nothing usable. */
        assert_int_equal(p.c_rv, BATON_ETLS);
        assert_int_equal(tls_write(p.c, (const uint8_t *)"x", 1), BATON_ETLS);
        pair_close(&p);
}

static void other_ca_refused(void **state)
{
        (void)state;
        refused_client("rogue", "unable to get local issuer certificate");
}

static void expired_refused(void **state)
{
        (void)state;
        refused_client("old", "certificate has expired");
}

static void revoked_refused(void **state)
{
        (void)state;
        refused_client("gone", "certificate revoked");
}

/* The same server settings accept a good client: the refusals above are
 * about the certificates, not the CRL setup. */
static void crl_accepts_good_client(void **state)
{
        struct pair p;

        (void)state;
        pair_open(&p, "node1", "app", NULL, NULL, "ca.crl");
        run(&p, 0);
        assert_true(tls_ready(p.s));
        pair_close(&p);
}

/* Baton's plain protocol sent to a TLS port: refused at once, and told
 * apart from a ClientHello by its first bytes. */
static void plain_text_refused(void **state)
{
        static const uint8_t frame[] = {1, 9, 0, 0, 8, 0, 0, 0,
                                        1, 0, 0, 0, 0, 0, 0, 0};
        uint8_t out[64];
        uint8_t hello[4096];
        struct pair p;
        size_t n;

        (void)state;
        pair_open(&p, "node1", "app", NULL, NULL, NULL);
        assert_false(tls_looks_like_hello(frame, sizeof frame));
        assert_int_equal(tls_feed(p.s, frame, sizeof frame), 0);
        assert_int_equal(tls_read(p.s, out, sizeof out), BATON_ETLS);
        assert_string_not_equal(tls_errmsg(p.s), "");
        /* Done for good. */
        assert_int_equal(tls_read(p.s, out, sizeof out), BATON_ETLS);
        assert_int_equal(tls_read(p.c, out, sizeof out), 0);
        n = tls_take(p.c, hello, sizeof hello);
        assert_true(n > 5);
        assert_true(tls_looks_like_hello(hello, n));
        assert_true(tls_looks_like_hello(hello, 1));
        pair_close(&p);
}

/* Garbage in a record that looks like a handshake record. */
static void garbage_hello_refused(void **state)
{
        uint8_t junk[300];
        uint8_t out[64];
        struct pair p;
        size_t i;

        (void)state;
        junk[0] = 22;
        junk[1] = 3;
        junk[2] = 1;
        junk[3] = 1;
        junk[4] = 0x27;
        for (i = 5; i < sizeof junk; i++) {
                junk[i] = (uint8_t)(i * 31 + 7);
        }
        pair_open(&p, "node1", "app", NULL, NULL, NULL);
        assert_int_equal(tls_feed(p.s, junk, sizeof junk), 0);
        assert_int_equal(tls_read(p.s, out, sizeof out), BATON_ETLS);
        pair_close(&p);
}

/* A peer that stops mid-handshake leaves the connection waiting (the
 * owner's handshake timeout ends it), and destroying it then is clean. */
static void peer_gone_mid_handshake(void **state)
{
        uint8_t hello[4096];
        uint8_t out[64];
        struct pair p;
        size_t n;

        (void)state;
        pair_open(&p, "node1", "app", NULL, NULL, NULL);
        assert_int_equal(tls_read(p.c, out, sizeof out), 0);
        n = tls_take(p.c, hello, sizeof hello);
        assert_int_equal(tls_feed(p.s, hello, n / 2), 0);
        assert_int_equal(tls_read(p.s, out, sizeof out), 0);
        assert_false(tls_ready(p.s));
        assert_int_equal(tls_pending(p.s), 0);
        pair_close(&p);
}

/* A record longer than TLS allows is refused, not buffered. */
static void oversized_record_refused(void **state)
{
        uint8_t rec[5 + 20000];
        uint8_t out[64];
        struct pair p;

        (void)state;
        pair_open(&p, "node1", "app", NULL, NULL, NULL);
        run(&p, 0);
        memset(rec, 0xab, sizeof rec);
        rec[0] = 23;
        rec[1] = 3;
        rec[2] = 3;
        rec[3] = (uint8_t)((sizeof rec - 5) >> 8);
        rec[4] = (uint8_t)(sizeof rec - 5);
        assert_int_equal(tls_feed(p.s, rec, 5), 0);
        assert_int_equal(tls_read(p.s, out, sizeof out), BATON_ETLS);
        assert_string_not_equal(tls_errmsg(p.s), "");
        pair_close(&p);
}

/* Writing before the handshake is a caller's error, refused. */
static void write_before_ready(void **state)
{
        struct pair p;

        (void)state;
        pair_open(&p, "node1", "app", NULL, NULL, NULL);
        assert_int_equal(tls_write(p.c, (const uint8_t *)"x", 1), BATON_ETLS);
        assert_string_equal(tls_peer(p.c), "");
        assert_false(tls_peer_is(p.c, "node-1"));
        pair_close(&p);
}

/* Bad files name themselves. */
static void bad_files(void **state)
{
        char err[TLS_ERRMSG_MAX];
        struct tls_files f = {path("ca.crt"), path("node1.crt"),
                              path("node2.key"), NULL};
        struct tls_ctx *x;

        (void)state;
        assert_int_equal(tls_ctx_create(&x, TLS_SERVER, &f, err, sizeof err),
                         BATON_ETLS);
        assert_null(x);
        assert_non_null(strstr(err, "does not match"));
        f.key = path("node1.key");
        f.ca = path("missing.crt");
        assert_int_equal(tls_ctx_create(&x, TLS_CLIENT, &f, err, sizeof err),
                         BATON_ETLS);
        assert_non_null(strstr(err, "missing.crt"));
        /* The system's reason, not OpenSSL's "system lib". */
        assert_non_null(strstr(err, strerror(ENOENT)));
        f.ca = path("ca.crt");
        f.crl = path("node1.key");
        assert_int_equal(tls_ctx_create(&x, TLS_SERVER, &f, err, sizeof err),
                         BATON_ETLS);
        assert_non_null(strstr(err, "CRL"));
        tls_ctx_destroy(NULL);
        tls_conn_destroy(NULL);
}

/* A context may go while its connections live on (rotation). */
static void ctx_outlived(void **state)
{
        struct pair p;

        (void)state;
        pair_open(&p, "node1", "app", NULL, NULL, NULL);
        tls_ctx_destroy(p.sx);
        tls_ctx_destroy(p.cx);
        p.sx = NULL;
        p.cx = NULL;
        run(&p, 0);
        assert_true(tls_ready(p.s));
        assert_true(tls_ready(p.c));
        pair_close(&p);
}

/* --- What a connection keeps ------------------------------------------ */

/* OpenSSL's allocations, counted: each block carries its size in front. */
#define HDR 16
static size_t ossl_held;

static void *count_malloc(size_t n, const char *file, int line)
{
        size_t *p = malloc(n + HDR);

        (void)file;
        (void)line;
        if (p == NULL) {
                return NULL;
        }
        *p = n;
        ossl_held += n;
        return (char *)p + HDR;
}

static void *count_realloc(void *q, size_t n, const char *file, int line)
{
        size_t *p, old;

        if (q == NULL) {
                return count_malloc(n, file, line);
        }
        p = (size_t *)((char *)q - HDR);
        old = *p;
        p = realloc(p, n + HDR);
        if (p == NULL) {
                return NULL;
        }
        *p = n;
        ossl_held = ossl_held - old + n;
        return (char *)p + HDR;
}

static void count_free(void *q, const char *file, int line)
{
        size_t *p;

        (void)file;
        (void)line;
        if (q == NULL) {
                return;
        }
        p = (size_t *)((char *)q - HDR);
        ossl_held -= *p;
        free(p);
}

/* A request up and an answer down on a connected pair, each read whole. */
static void exchange(struct pair *p, const char *up, const char *down)
{
        p->s_len = p->c_len = 0;
        assert_int_equal(tls_write(p->c, (const uint8_t *)up, strlen(up)), 0);
        run(p, 0);
        assert_int_equal(tls_write(p->s, (const uint8_t *)down, strlen(down)),
                         0);
        run(p, 0);
        assert_int_equal(p->s_len, strlen(up));
        assert_memory_equal(p->s_got, up, strlen(up));
        assert_int_equal(p->c_len, strlen(down));
        assert_memory_equal(p->c_got, down, strlen(down));
}

/*
 * A node holds thousands of client connections at rest: handshake done, a
 * request and its answer exchanged, nothing buffered, and tls_rest()
 * called. What one keeps of OpenSSL's memory is bounded (docs/
 * history/performance.md, "Many connections"): the record buffers (17 KB each
 * way) go back, and the memory BIOs do not keep what the handshake put
 * through them. A rested connection then works as before.
 */
#define AT_REST_CONNS 32
#define AT_REST_MAX   (22 * 1024)

static void server_side_at_rest(void **state)
{
        struct tls_ctx *sx = ctx(TLS_SERVER, "ca.crt", "node1", NULL);
        struct tls_ctx *cx = ctx(TLS_CLIENT, "ca.crt", "app", NULL);
        struct pair *p = calloc(AT_REST_CONNS + 1, sizeof *p);
        size_t before, per;

        (void)state;
        assert_non_null(p);
        /* OpenSSL keeps what its first handshake fetches (algorithms,
         * per-thread state): one connection first, not counted. */
        assert_int_equal(tls_conn_create(&p[AT_REST_CONNS].s, sx, NULL, NULL),
                         0);
        assert_int_equal(tls_conn_create(&p[AT_REST_CONNS].c, cx, NULL, NULL),
                         0);
        run(&p[AT_REST_CONNS], 0);
        assert_true(tls_ready(p[AT_REST_CONNS].c));
        tls_conn_destroy(p[AT_REST_CONNS].s);
        tls_conn_destroy(p[AT_REST_CONNS].c);
        before = ossl_held;
        for (int i = 0; i < AT_REST_CONNS; i++) {
                assert_int_equal(tls_conn_create(&p[i].s, sx, NULL, NULL), 0);
                assert_int_equal(tls_conn_create(&p[i].c, cx, NULL, NULL), 0);
                run(&p[i], 0);
                assert_true(tls_ready(p[i].s));
                exchange(&p[i], "ping", "pong");
        }
        for (int i = 0; i < AT_REST_CONNS; i++) {
                tls_rest(p[i].s);
                tls_rest(p[i].c);
        }
        per = (ossl_held - before) / AT_REST_CONNS;
        print_message("both ends at rest: %zu bytes of OpenSSL's\n", per);
        /* Rested, both ways still work; then only the servers stay. */
        for (int i = 0; i < AT_REST_CONNS; i++) {
                exchange(&p[i], "again", "back");
                tls_rest(p[i].s);
                tls_conn_destroy(p[i].c);
        }
        per = (ossl_held - before) / AT_REST_CONNS;
        print_message("server connection at rest: %zu bytes of OpenSSL's\n",
                      per);
        assert_true(per <= AT_REST_MAX);
        for (int i = 0; i < AT_REST_CONNS; i++) {
                tls_conn_destroy(p[i].s);
        }
        assert_true(ossl_held == before); /* and nothing leaked */
        free(p);
        tls_ctx_destroy(sx);
        tls_ctx_destroy(cx);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(handshake_and_both_ways),
            cmocka_unit_test(handshake_byte_by_byte),
            cmocka_unit_test(record_split_at_every_byte),
            cmocka_unit_test(wrong_identity_refused),
            cmocka_unit_test(san_is_an_identity),
            cmocka_unit_test(host_checked),
            cmocka_unit_test(other_ca_refused),
            cmocka_unit_test(expired_refused),
            cmocka_unit_test(revoked_refused),
            cmocka_unit_test(crl_accepts_good_client),
            cmocka_unit_test(plain_text_refused),
            cmocka_unit_test(garbage_hello_refused),
            cmocka_unit_test(peer_gone_mid_handshake),
            cmocka_unit_test(oversized_record_refused),
            cmocka_unit_test(write_before_ready),
            cmocka_unit_test(bad_files),
            cmocka_unit_test(ctx_outlived),
            cmocka_unit_test(server_side_at_rest),
        };

        /* Before OpenSSL allocates anything (refused after). */
        if (!CRYPTO_set_mem_functions(count_malloc, count_realloc,
                                      count_free)) {
                fprintf(stderr, "cannot count OpenSSL's allocations\n");
                return 1;
        }
        return cmocka_run_group_tests_name("tls", tests, make_certs,
                                           remove_certs);
}
