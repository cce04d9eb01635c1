/* TLS 1.3 with mutual authentication over memory (see tls.h). */
#include "tls.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "../../include/baton/errors.h"

struct tls_ctx {
        SSL_CTX *ssl;
        enum tls_side side;
};

struct tls_conn {
        SSL *ssl;
        BIO *in;  /* ciphertext fed by the owner, read by OpenSSL */
        BIO *out; /* ciphertext written by OpenSSL, taken by the owner */
        bool ready;
        bool failed;
        bool eof;
        char expect[TLS_IDENTITY_MAX]; /* "" = any identity */
        char peer[TLS_IDENTITY_MAX];
        /* The peer's groups: its subject's OUs, each NUL-terminated, one
         * after the other (groups_len bytes). */
        char groups[TLS_IDENTITY_MAX];
        size_t groups_len;
        char errmsg[TLS_ERRMSG_MAX];
        char verify[TLS_IDENTITY_MAX + 16]; /* why the peer's cert failed */
        char alert[64];                     /* the fatal alert the peer sent */
        int alert_code;                     /* its description's number */
};

/* The reason of the last OpenSSL error on this thread, or `none`; clears
 * the thread's error queue, so that the next call starts clean. */
static const char *ssl_reason(const char *none)
{
        unsigned long e = ERR_peek_last_error();
        const char *r = e != 0 ? ERR_reason_error_string(e) : NULL;

        ERR_clear_error();
        return r != NULL ? r : none;
}

/* --- Contexts ------------------------------------------------------------- */

/* A file that could not be loaded: the system's reason when it cannot be
 * read at all (OpenSSL says only "system lib" then), else OpenSSL's. */
static int ctx_fail(char *errmsg, size_t size, const char *what,
                    const char *path)
{
        if (access(path, R_OK) != 0) {
                int e = errno;
                ERR_clear_error();
                snprintf(errmsg, size, "%s %s: %s", what, path, strerror(e));
                return BATON_ETLS;
        }
        snprintf(errmsg, size, "%s %s: %s", what, path,
                 ssl_reason("unreadable or not PEM"));
        return BATON_ETLS;
}

/* Every CRL of the PEM file `path` joins the store, and both ends of every
 * chain are checked against them. */
static int load_crl(SSL_CTX *ssl, const char *path, char *errmsg, size_t size)
{
        X509_STORE *store = SSL_CTX_get_cert_store(ssl);
        BIO *b = BIO_new_file(path, "r");
        X509_CRL *crl;
        int n = 0;

        if (b == NULL) {
                return ctx_fail(errmsg, size, "CRL", path);
        }
        while ((crl = PEM_read_bio_X509_CRL(b, NULL, NULL, NULL)) != NULL) {
                int ok = X509_STORE_add_crl(store, crl);
                X509_CRL_free(crl);
                if (!ok) {
                        BIO_free(b);
                        return ctx_fail(errmsg, size, "CRL", path);
                }
                n++;
        }
        BIO_free(b);
        ERR_clear_error(); /* the end of the file reads as an error */
        if (n == 0) {
                snprintf(errmsg, size, "CRL %s: no CRL in the file", path);
                return BATON_ETLS;
        }
        X509_STORE_set_flags(store,
                             X509_V_FLAG_CRL_CHECK | X509_V_FLAG_CRL_CHECK_ALL);
        return 0;
}

static int load_files(struct tls_ctx *x, const struct tls_files *f,
                      char *errmsg, size_t size)
{
        SSL_CTX *ssl = x->ssl;

        if (SSL_CTX_load_verify_locations(ssl, f->ca, NULL) != 1) {
                return ctx_fail(errmsg, size, "CA", f->ca);
        }
        if (x->side == TLS_SERVER) {
                STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(f->ca);
                if (names == NULL) {
                        return ctx_fail(errmsg, size, "CA", f->ca);
                }
                SSL_CTX_set_client_CA_list(ssl, names);
        }
        if (SSL_CTX_use_certificate_chain_file(ssl, f->cert) != 1) {
                return ctx_fail(errmsg, size, "certificate", f->cert);
        }
        if (SSL_CTX_use_PrivateKey_file(ssl, f->key, SSL_FILETYPE_PEM) != 1 &&
            ERR_GET_REASON(ERR_peek_last_error()) !=
                X509_R_KEY_VALUES_MISMATCH) {
                return ctx_fail(errmsg, size, "key", f->key);
        }
        if (SSL_CTX_check_private_key(ssl) != 1) {
                snprintf(errmsg, size, "key %s does not match certificate %s",
                         f->key, f->cert);
                ERR_clear_error();
                return BATON_ETLS;
        }
        if (f->crl != NULL && f->crl[0] != '\0') {
                return load_crl(ssl, f->crl, errmsg, size);
        }
        return 0;
}

static int verify_cb(int ok, X509_STORE_CTX *store);
static void info_cb(const SSL *ssl, int where, int ret);

int tls_ctx_create(struct tls_ctx **out, enum tls_side side,
                   const struct tls_files *f, char *errmsg, size_t size)
{
        struct tls_ctx *x = calloc(1, sizeof *x);
        int rv;

        *out = NULL;
        if (x == NULL) {
                return BATON_ENOMEM;
        }
        x->side = side;
        x->ssl = SSL_CTX_new(side == TLS_SERVER ? TLS_server_method()
                                                : TLS_client_method());
        if (x->ssl == NULL) {
                free(x);
                ERR_clear_error();
                return BATON_ENOMEM;
        }
        /* TLS 1.3 only: no renegotiation exists there, and no session is
         * resumed (every connection authenticates in full). */
        SSL_CTX_set_min_proto_version(x->ssl, TLS1_3_VERSION);
        SSL_CTX_set_max_proto_version(x->ssl, TLS1_3_VERSION);
        SSL_CTX_set_options(x->ssl, SSL_OP_NO_TICKET | SSL_OP_NO_COMPRESSION);
        SSL_CTX_set_num_tickets(x->ssl, 0);
        SSL_CTX_set_session_cache_mode(x->ssl, SSL_SESS_CACHE_OFF);
        /* AES-128-GCM first: as strong as a lock service needs, and the
         * cheapest per record where AES-NI is (every x86-64 server). */
        SSL_CTX_set_ciphersuites(x->ssl, "TLS_AES_128_GCM_SHA256:"
                                         "TLS_AES_256_GCM_SHA384:"
                                         "TLS_CHACHA20_POLY1305_SHA256");
        SSL_CTX_set_verify(x->ssl,
                           SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
                           verify_cb);
        rv = load_files(x, f, errmsg, size);
        if (rv != 0) {
                tls_ctx_destroy(x);
                return rv;
        }
        *out = x;
        return 0;
}

void tls_ctx_client_cert_optional(struct tls_ctx *x)
{
        /* OpenSSL still verifies a certificate that is sent; only its
         * absence stops failing the handshake. */
        SSL_CTX_set_verify(x->ssl, SSL_VERIFY_PEER, verify_cb);
}

void tls_ctx_destroy(struct tls_ctx *x)
{
        if (x == NULL) {
                return;
        }
        /* Connections made from it hold their own reference. */
        SSL_CTX_free(x->ssl);
        free(x);
}

/* --- Identities ----------------------------------------------------------- */

/* Copy an ASN.1 string into `out` if it holds no NUL and fits. */
static bool copy_name(const ASN1_STRING *s, char *out, size_t size)
{
        const unsigned char *p = ASN1_STRING_get0_data(s);
        int n = ASN1_STRING_length(s);

        if (n <= 0 || (size_t)n >= size || memchr(p, '\0', (size_t)n)) {
                return false;
        }
        memcpy(out, p, (size_t)n);
        out[n] = '\0';
        return true;
}

/*
 * Call `fn` on each identity of `cert`: its subject's common name, then
 * its DNS and URI subject alternative names, until `fn` returns true.
 * True when one did.
 */
static bool each_identity(X509 *cert, bool (*fn)(const char *id, void *arg),
                          void *arg)
{
        char id[TLS_IDENTITY_MAX];
        X509_NAME *subject = X509_get_subject_name(cert);
        int i = X509_NAME_get_index_by_NID(subject, NID_commonName, -1);
        GENERAL_NAMES *sans;
        bool found = false;

        if (i >= 0 &&
            copy_name(X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, i)),
                      id, sizeof id) &&
            fn(id, arg)) {
                return true;
        }
        sans = X509_get_ext_d2i(cert, NID_subject_alt_name, NULL, NULL);
        for (i = 0; sans != NULL && i < sk_GENERAL_NAME_num(sans) && !found;
             i++) {
                const GENERAL_NAME *g = sk_GENERAL_NAME_value(sans, i);
                if ((g->type == GEN_DNS || g->type == GEN_URI) &&
                    copy_name(g->d.ia5, id, sizeof id)) {
                        found = fn(id, arg);
                }
        }
        GENERAL_NAMES_free(sans);
        return found;
}

static bool equals(const char *id, void *arg)
{
        return strcmp(id, arg) == 0;
}

static bool first(const char *id, void *arg)
{
        snprintf(arg, TLS_IDENTITY_MAX, "%s", id);
        return true;
}

/* The OUs of `cert`'s subject into t->groups, as many as fit whole. */
static void take_groups(struct tls_conn *t, X509 *cert)
{
        X509_NAME *subject = X509_get_subject_name(cert);
        char ou[TLS_IDENTITY_MAX];
        int i = -1;

        t->groups_len = 0;
        while ((i = X509_NAME_get_index_by_NID(
                    subject, NID_organizationalUnitName, i)) >= 0) {
                size_t n;
                if (!copy_name(X509_NAME_ENTRY_get_data(
                                   X509_NAME_get_entry(subject, i)),
                               ou, sizeof ou) ||
                    (n = strlen(ou)) == 0 ||
                    t->groups_len + n + 1 > sizeof t->groups) {
                        continue;
                }
                memcpy(t->groups + t->groups_len, ou, n + 1);
                t->groups_len += n + 1;
        }
}

/* OpenSSL's verdict on each certificate of the peer's chain, leaf last:
 * keep the reason of a refusal, and refuse a leaf without the expected
 * identity, so that the handshake fails with an alert the peer sees. */
static int verify_cb(int ok, X509_STORE_CTX *store)
{
        SSL *ssl = X509_STORE_CTX_get_ex_data(
            store, SSL_get_ex_data_X509_STORE_CTX_idx());
        struct tls_conn *t = SSL_get_app_data(ssl);
        X509 *cert = X509_STORE_CTX_get_current_cert(store);
        char subject[128] = "?";

        if (cert != NULL) {
                X509_NAME_oneline(X509_get_subject_name(cert), subject,
                                  sizeof subject);
        }
        if (!ok) {
                snprintf(t->verify, sizeof t->verify, "%s",
                         X509_verify_cert_error_string(
                             X509_STORE_CTX_get_error(store)));
                snprintf(t->errmsg, sizeof t->errmsg,
                         "certificate %s refused: %s", subject, t->verify);
                return 0;
        }
        if (X509_STORE_CTX_get_error_depth(store) != 0 ||
            t->expect[0] == '\0') {
                return 1;
        }
        if (!each_identity(cert, equals, t->expect)) {
                snprintf(t->verify, sizeof t->verify, "it is not '%s'",
                         t->expect);
                snprintf(t->errmsg, sizeof t->errmsg,
                         "certificate %s refused: %s", subject, t->verify);
                X509_STORE_CTX_set_error(store,
                                         X509_V_ERR_APPLICATION_VERIFICATION);
                return 0;
        }
        return 1;
}

/* --- Connections ---------------------------------------------------------- */

static int expect_host(SSL *ssl, const char *host)
{
        X509_VERIFY_PARAM *param = SSL_get0_param(ssl);

        /* An IP address is matched against IP SANs, a name against DNS
         * SANs, as HTTPS clients do. */
        if (X509_VERIFY_PARAM_set1_ip_asc(param, host) == 1) {
                return 0;
        }
        ERR_clear_error();
        X509_VERIFY_PARAM_set_hostflags(param,
                                        X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
        if (SSL_set1_host(ssl, host) != 1 ||
            SSL_set_tlsext_host_name(ssl, host) != 1) {
                ERR_clear_error();
                return BATON_ENOMEM;
        }
        return 0;
}

int tls_conn_create(struct tls_conn **out, struct tls_ctx *x,
                    const char *expect, const char *host)
{
        struct tls_conn *t = calloc(1, sizeof *t);

        *out = NULL;
        if (t == NULL) {
                return BATON_ENOMEM;
        }
        if (expect != NULL) {
                snprintf(t->expect, sizeof t->expect, "%s", expect);
        }
        t->ssl = SSL_new(x->ssl);
        t->in = BIO_new(BIO_s_mem());
        t->out = BIO_new(BIO_s_mem());
        if (t->ssl == NULL || t->in == NULL || t->out == NULL) {
                goto err;
        }
        /* An empty input means "wait for more", not end of file. */
        BIO_set_mem_eof_return(t->in, -1);
        SSL_set_bio(t->ssl, t->in, t->out); /* the SSL owns both now */
        SSL_set_app_data(t->ssl, t);
        SSL_set_info_callback(t->ssl, info_cb);
        if (x->side == TLS_SERVER) {
                SSL_set_accept_state(t->ssl);
        } else {
                SSL_set_connect_state(t->ssl);
                if (host != NULL && host[0] != '\0' &&
                    expect_host(t->ssl, host) != 0) {
                        SSL_free(t->ssl);
                        free(t);
                        return BATON_ENOMEM;
                }
        }
        *out = t;
        return 0;
err:
        if (t->ssl != NULL) {
                SSL_free(t->ssl);
        }
        BIO_free(t->in);
        BIO_free(t->out);
        free(t);
        ERR_clear_error();
        return BATON_ENOMEM;
}

void tls_conn_destroy(struct tls_conn *t)
{
        if (t == NULL) {
                return;
        }
        SSL_free(t->ssl);
        free(t);
}

int tls_feed(struct tls_conn *t, const uint8_t *p, size_t n)
{
        while (n > 0) {
                int chunk = n > (1u << 30) ? 1 << 30 : (int)n;
                int w = BIO_write(t->in, p, chunk);
                if (w <= 0) {
                        ERR_clear_error();
                        return BATON_ENOMEM;
                }
                p += w;
                n -= (size_t)w;
        }
        return 0;
}

/* The connection is done: say why, once. */
static long fail(struct tls_conn *t, const char *what)
{
        if (!t->failed && t->errmsg[0] == '\0') {
                snprintf(t->errmsg, sizeof t->errmsg, "%s: %s", what,
                         ssl_reason("connection refused by the peer"));
        }
        ERR_clear_error();
        t->failed = true;
        return BATON_ETLS;
}

static long handshake(struct tls_conn *t)
{
        int rv = SSL_do_handshake(t->ssl);

        if (rv == 1) {
                X509 *cert = SSL_get0_peer_certificate(t->ssl);
                t->ready = true;
                if (cert != NULL) {
                        each_identity(cert, first, t->peer);
                        take_groups(t, cert);
                }
                return 0;
        }
        if (SSL_get_error(t->ssl, rv) == SSL_ERROR_WANT_READ) {
                return 0;
        }
        return fail(t, "TLS handshake");
}

long tls_read(struct tls_conn *t, uint8_t *out, size_t cap)
{
        int n;
        long rv;

        if (t->failed) {
                return BATON_ETLS;
        }
        if (t->eof) {
                return TLS_EOF;
        }
        ERR_clear_error();
        if (!t->ready) {
                rv = handshake(t);
                if (rv != 0 || !t->ready) {
                        return rv;
                }
        }
        if (cap == 0) {
                return 0;
        }
        n = SSL_read(t->ssl, out, cap > INT32_MAX ? INT32_MAX : (int)cap);
        if (n > 0) {
                return n;
        }
        switch (SSL_get_error(t->ssl, n)) {
        case SSL_ERROR_WANT_READ:
                return 0;
        case SSL_ERROR_ZERO_RETURN:
                t->eof = true;
                return TLS_EOF;
        default:
                return fail(t, "TLS");
        }
}

bool tls_ready(const struct tls_conn *t)
{
        return t->ready && !t->failed;
}

int tls_write(struct tls_conn *t, const uint8_t *p, size_t n)
{
        if (!tls_ready(t)) {
                return BATON_ETLS;
        }
        ERR_clear_error();
        while (n > 0) {
                int chunk = n > (1u << 30) ? 1 << 30 : (int)n;
                int w = SSL_write(t->ssl, p, chunk);
                if (w <= 0) {
                        return (int)fail(t, "TLS write");
                }
                p += w;
                n -= (size_t)w;
        }
        return 0;
}

/* A fresh, empty memory BIO (NULL when out of memory). */
static BIO *fresh(void)
{
        BIO *b = BIO_new(BIO_s_mem());

        if (b != NULL) {
                BIO_set_mem_eof_return(b, -1);
        }
        return b;
}

/* Whether `b` holds nothing but keeps a buffer it grew for what it held. */
static bool spare(BIO *b)
{
        BUF_MEM *m = NULL;

        BIO_get_mem_ptr(b, &m);
        return BIO_ctrl_pending(b) == 0 && m != NULL && m->max > 0;
}

void tls_rest(struct tls_conn *t)
{
        BIO *b;

        if (!tls_ready(t)) {
                return;
        }
        /* Frees the record buffers unless a record is partly read or
         * written; then they stay until the next rest. */
        SSL_free_buffers(t->ssl);
        /* A memory BIO never shrinks its buffer: replace an empty one. */
        if (spare(t->in) && (b = fresh()) != NULL) {
                SSL_set0_rbio(t->ssl, b);
                t->in = b;
        }
        if (spare(t->out) && (b = fresh()) != NULL) {
                SSL_set0_wbio(t->ssl, b);
                t->out = b;
        }
}

size_t tls_pending(const struct tls_conn *t)
{
        return BIO_ctrl_pending(t->out);
}

size_t tls_take(struct tls_conn *t, uint8_t *out, size_t cap)
{
        int n;

        if (cap == 0 || tls_pending(t) == 0) {
                return 0;
        }
        n = BIO_read(t->out, out, cap > INT32_MAX ? INT32_MAX : (int)cap);
        return n > 0 ? (size_t)n : 0;
}

const char *tls_peer_groups(const struct tls_conn *t, size_t *len)
{
        *len = t->ready ? t->groups_len : 0;
        return t->groups;
}

const char *tls_peer(const struct tls_conn *t)
{
        return t->ready ? t->peer : "";
}

bool tls_peer_is(const struct tls_conn *t, const char *identity)
{
        X509 *cert;

        if (!tls_ready(t)) {
                return false;
        }
        cert = SSL_get0_peer_certificate(t->ssl);
        return cert != NULL && each_identity(cert, equals, (void *)identity);
}

const char *tls_errmsg(const struct tls_conn *t)
{
        return t->errmsg;
}

const char *tls_verify_error(const struct tls_conn *t)
{
        return t->verify;
}

/* The alerts by which a peer refuses the certificate this side sent (or
 * that it sent none): RFC 8446 section 6.2. */
static bool about_certificate(int code)
{
        return (code >= 42 && code <= 46) || code == 48 || code == 49 ||
               code == 116;
}

const char *tls_peer_alert(const struct tls_conn *t, bool *about_cert)
{
        if (about_cert != NULL) {
                *about_cert =
                    t->alert[0] != '\0' && about_certificate(t->alert_code);
        }
        return t->alert;
}

/* The first fatal alert the peer sends says why it ended the handshake
 * or the connection: OpenSSL's error queue has only "alert NNN" for it. */
static void info_cb(const SSL *ssl, int where, int ret)
{
        struct tls_conn *t = SSL_get_app_data(ssl);

        if (t == NULL || !(where & SSL_CB_READ_ALERT) ||
            (ret >> 8) != SSL3_AL_FATAL || t->alert[0] != '\0') {
                return;
        }
        t->alert_code = ret & 0xff;
        snprintf(t->alert, sizeof t->alert, "%s",
                 SSL_alert_desc_string_long(ret));
}

bool tls_looks_like_record(const uint8_t *p, size_t n)
{
        /* change_cipher_spec (20), alert (21), handshake (22) or
         * application data (23), of record-layer version 3.x. */
        return n >= 1 && p[0] >= 20 && p[0] <= 23 && (n < 2 || p[1] == 3);
}

bool tls_looks_like_hello(const uint8_t *p, size_t n)
{
        /* A handshake record (22) of record-layer version 3.x. */
        return n >= 1 && p[0] == 22 && (n < 2 || p[1] == 3) &&
               (n < 3 || p[2] <= 4);
}

const char *tls_library_version(void)
{
        return OpenSSL_version(OPENSSL_VERSION);
}
