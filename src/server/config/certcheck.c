/* The checks of batond's own certificate (see certcheck.h). */
#include "certcheck.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "../../../include/baton.h"
#include "../../lib/address.h"

static int fail(char *errmsg, size_t size, int rv, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(char *errmsg, size_t size, int rv, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(errmsg, size, fmt, ap);
        va_end(ap);
        ERR_clear_error();
        return rv;
}

void certcheck_date(int64_t t, char *out, size_t size)
{
        time_t tt = (time_t)t;
        struct tm tm;

        if (gmtime_r(&tt, &tm) == NULL ||
            strftime(out, size, "%Y-%m-%d %H:%M:%S UTC", &tm) == 0) {
                snprintf(out, size, "%lld (seconds since 1970)", (long long)t);
        }
}

static int seconds_of(const ASN1_TIME *a, int64_t *out)
{
        struct tm tm;

        memset(&tm, 0, sizeof tm);
        if (a == NULL || ASN1_TIME_to_tm(a, &tm) != 1) {
                return -1;
        }
        *out = (int64_t)timegm(&tm);
        return 0;
}

/* The certificates of the PEM file `path`: the first into `*leaf`, the
 * rest (its intermediates) into `*chain`. 0, or BATON_ETLS. */
static int read_chain(const char *path, X509 **leaf, STACK_OF(X509) * *chain,
                      char *errmsg, size_t size)
{
        BIO *in = BIO_new_file(path, "r");
        X509 *x;

        *leaf = NULL;
        *chain = NULL;
        if (in == NULL) {
                return fail(errmsg, size, BATON_ETLS, "tls-cert %s: %s", path,
                            strerror(errno));
        }
        *leaf = PEM_read_bio_X509(in, NULL, NULL, NULL);
        *chain = sk_X509_new_null();
        while (*leaf != NULL && *chain != NULL &&
               (x = PEM_read_bio_X509(in, NULL, NULL, NULL)) != NULL) {
                if (sk_X509_push(*chain, x) == 0) {
                        X509_free(x);
                        break;
                }
        }
        BIO_free(in);
        ERR_clear_error(); /* the end of the file reads as an error */
        if (*leaf == NULL || *chain == NULL) {
                X509_free(*leaf);
                sk_X509_pop_free(*chain, X509_free);
                *leaf = NULL;
                *chain = NULL;
                return fail(errmsg, size, BATON_ETLS,
                            "tls-cert %s: no PEM certificate in it", path);
        }
        return 0;
}

int certcheck_not_after(const char *cert, int64_t *not_after, char *errmsg,
                        size_t size)
{
        STACK_OF(X509) * chain;
        X509 *leaf;
        int rv = read_chain(cert, &leaf, &chain, errmsg, size);

        if (rv != 0) {
                return rv;
        }
        if (seconds_of(X509_get0_notAfter(leaf), not_after) != 0) {
                rv = fail(errmsg, size, BATON_ETLS,
                          "tls-cert %s: its end of validity cannot be read",
                          cert);
        }
        X509_free(leaf);
        sk_X509_pop_free(chain, X509_free);
        return rv;
}

/* Valid at `now`: not expired, and not before its start (a wrong clock). */
static int check_dates(const char *cert, X509 *leaf, int64_t now,
                       int64_t *not_after, char *errmsg, size_t size)
{
        int64_t not_before;
        char when[64];

        if (seconds_of(X509_get0_notAfter(leaf), not_after) != 0 ||
            seconds_of(X509_get0_notBefore(leaf), &not_before) != 0) {
                return fail(errmsg, size, BATON_ETLS,
                            "tls-cert %s: its dates cannot be read", cert);
        }
        if (now >= *not_after) {
                certcheck_date(*not_after, when, sizeof when);
                return fail(errmsg, size, BATON_ETLS,
                            "tls-cert %s: expired on %s; clients and peers "
                            "refuse it: make it again (scripts/certs) and "
                            "start again",
                            cert, when);
        }
        if (now < not_before) {
                certcheck_date(not_before, when, sizeof when);
                return fail(errmsg, size, BATON_ETLS,
                            "tls-cert %s: not valid before %s; is this "
                            "host's clock right?",
                            cert, when);
        }
        return 0;
}

/* `leaf` (with `chain`) verifies against the CA file `ca` at `now`. */
static int check_chain(const char *cert, const char *ca, X509 *leaf,
                       STACK_OF(X509) * chain, int64_t now, char *errmsg,
                       size_t size)
{
        X509_STORE *store = X509_STORE_new();
        X509_STORE_CTX *ctx = X509_STORE_CTX_new();
        int rv = 0, loaded;

        if (store == NULL || ctx == NULL) {
                rv = fail(errmsg, size, BATON_ENOMEM, "out of memory");
                goto out;
        }
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
        loaded = X509_STORE_load_file(store, ca);
#else
        loaded = X509_STORE_load_locations(store, ca, NULL);
#endif
        if (loaded != 1) {
                rv = fail(errmsg, size, BATON_ETLS,
                          "tls-ca %s: no CA certificate can be read from it",
                          ca);
                goto out;
        }
        if (X509_STORE_CTX_init(ctx, store, leaf, chain) != 1) {
                rv = fail(errmsg, size, BATON_ENOMEM, "out of memory");
                goto out;
        }
        X509_VERIFY_PARAM_set_time(X509_STORE_CTX_get0_param(ctx), (time_t)now);
        if (X509_verify_cert(ctx) != 1) {
                rv = fail(errmsg, size, BATON_ETLS,
                          "tls-cert %s: does not chain to tls-ca %s (%s): "
                          "clients and peers that trust that CA refuse it",
                          cert, ca,
                          X509_verify_cert_error_string(
                              X509_STORE_CTX_get_error(ctx)));
        }
out:
        X509_STORE_CTX_free(ctx);
        X509_STORE_free(store);
        return rv;
}

/* The DNS and IP subject alternative names of `x`, "DNS:a, IP:b", into
 * `out` ("none" without any). */
static void list_names(X509 *x, char *out, size_t size)
{
        GENERAL_NAMES *names =
            X509_get_ext_d2i(x, NID_subject_alt_name, NULL, NULL);
        size_t len = 0;
        int i;

        out[0] = '\0';
        for (i = 0; names != NULL && i < sk_GENERAL_NAME_num(names); i++) {
                const GENERAL_NAME *g = sk_GENERAL_NAME_value(names, i);
                char ip[INET6_ADDRSTRLEN] = "?";
                int n = 0;

                if (g->type == GEN_DNS) {
                        n = snprintf(
                            out + len, size - len, "%sDNS:%.*s",
                            len ? ", " : "", ASN1_STRING_length(g->d.dNSName),
                            (const char *)ASN1_STRING_get0_data(g->d.dNSName));
                } else if (g->type == GEN_IPADD) {
                        int l = ASN1_STRING_length(g->d.iPAddress);
                        inet_ntop(l == 16 ? AF_INET6 : AF_INET,
                                  ASN1_STRING_get0_data(g->d.iPAddress), ip,
                                  sizeof ip);
                        n = snprintf(out + len, size - len, "%sIP:%s",
                                     len ? ", " : "", ip);
                }
                if (n < 0 || (size_t)n >= size - len) {
                        break;
                }
                len += (size_t)n;
        }
        GENERAL_NAMES_free(names);
        if (out[0] == '\0') {
                snprintf(out, size, "none");
        }
}

/* `leaf` names the host of `address` as a client checks it. */
static int check_host(const char *cert, X509 *leaf, const char *address,
                      char *errmsg, size_t size)
{
        struct address a;
        char names[256];
        bool named;

        if (address_parse(address, &a) != 0) {
                return fail(errmsg, size, BATON_ETLS, "client address %s: %s",
                            address, a.errmsg);
        }
        named = a.kind == ADDRESS_NAME
                    ? X509_check_host(leaf, a.host, 0,
                                      X509_CHECK_FLAG_NEVER_CHECK_SUBJECT,
                                      NULL) == 1
                    : X509_check_ip_asc(leaf, a.host, 0) == 1;
        if (named) {
                return 0;
        }
        list_names(leaf, names, sizeof names);
        return fail(errmsg, size, BATON_ETLS,
                    "tls-cert %s: does not name %s, the host of this node's "
                    "client address %s (it names %s); clients dialing it "
                    "would refuse it: make it with %s:%s as a subject "
                    "alternative name (scripts/certs --node-san)",
                    cert, a.host, address, names,
                    a.kind == ADDRESS_NAME ? "DNS" : "IP", a.host);
}

int certcheck_start(const char *cert, const char *ca, const char *address,
                    int64_t now, int64_t *not_after, char *errmsg, size_t size)
{
        STACK_OF(X509) * chain;
        X509 *leaf;
        int rv = read_chain(cert, &leaf, &chain, errmsg, size);

        if (rv != 0) {
                return rv;
        }
        rv = check_dates(cert, leaf, now, not_after, errmsg, size);
        if (rv == 0) {
                rv = check_chain(cert, ca, leaf, chain, now, errmsg, size);
        }
        if (rv == 0) {
                rv = check_host(cert, leaf, address, errmsg, size);
        }
        X509_free(leaf);
        sk_X509_pop_free(chain, X509_free);
        return rv;
}
