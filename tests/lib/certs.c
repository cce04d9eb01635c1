/* Test certificates made in memory with OpenSSL (see certs.h). */
#include "certs.h"

#include <stdio.h>
#include <stdlib.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

struct certs_ca {
        EVP_PKEY *key;
        X509 *cert;
        uint64_t next_serial;
};

static X509 *new_cert(const char *cn, uint64_t serial, int from_days,
                      int to_days, EVP_PKEY *key)
{
        X509 *x = X509_new();
        X509_NAME *name;

        if (x == NULL) {
                return NULL;
        }
        X509_set_version(x, 2);
        ASN1_INTEGER_set_uint64(X509_get_serialNumber(x), serial);
        X509_gmtime_adj(X509_getm_notBefore(x), (long)from_days * 86400);
        X509_gmtime_adj(X509_getm_notAfter(x), (long)to_days * 86400);
        X509_set_pubkey(x, key);
        name = X509_get_subject_name(x);
        X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                                   (const unsigned char *)cn, -1, -1, 0);
        return x;
}

static int add_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
        X509V3_CTX v3;
        X509_EXTENSION *e;

        X509V3_set_ctx(&v3, issuer, x, NULL, NULL, 0);
        e = X509V3_EXT_conf_nid(NULL, &v3, nid, value);
        if (e == NULL) {
                return -1;
        }
        X509_add_ext(x, e, -1);
        X509_EXTENSION_free(e);
        return 0;
}

struct certs_ca *certs_ca_create(const char *cn)
{
        struct certs_ca *ca = calloc(1, sizeof *ca);

        if (ca == NULL) {
                return NULL;
        }
        ca->next_serial = 2;
        ca->key = EVP_EC_gen("P-256");
        if (ca->key == NULL) {
                goto err;
        }
        ca->cert = new_cert(cn, 1, -1, 3650, ca->key);
        if (ca->cert == NULL) {
                goto err;
        }
        X509_set_issuer_name(ca->cert, X509_get_subject_name(ca->cert));
        if (add_ext(ca->cert, ca->cert, NID_basic_constraints,
                    "critical,CA:TRUE") != 0 ||
            add_ext(ca->cert, ca->cert, NID_key_usage,
                    "critical,keyCertSign,cRLSign") != 0 ||
            add_ext(ca->cert, ca->cert, NID_subject_key_identifier, "hash") !=
                0 ||
            X509_sign(ca->cert, ca->key, EVP_sha256()) == 0) {
                goto err;
        }
        return ca;
err:
        certs_ca_destroy(ca);
        return NULL;
}

void certs_ca_destroy(struct certs_ca *ca)
{
        if (ca == NULL) {
                return;
        }
        X509_free(ca->cert);
        EVP_PKEY_free(ca->key);
        free(ca);
}

static int write_pem(const char *path, X509 *cert, EVP_PKEY *key)
{
        FILE *f = fopen(path, "w");
        int ok;

        if (f == NULL) {
                return -1;
        }
        ok = cert != NULL
                 ? PEM_write_X509(f, cert)
                 : PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL);
        return fclose(f) == 0 && ok ? 0 : -1;
}

int certs_ca_write(const struct certs_ca *ca, const char *path)
{
        return write_pem(path, ca->cert, NULL);
}

int certs_issue(struct certs_ca *ca, const char *cn, const char *san,
                int from_days, int to_days, const char *cert_path,
                const char *key_path, uint64_t *serial)
{
        EVP_PKEY *key = EVP_EC_gen("P-256");
        X509 *x = NULL;
        int rv = -1;

        if (key == NULL) {
                return -1;
        }
        x = new_cert(cn, ca->next_serial, from_days, to_days, key);
        if (x == NULL) {
                goto out;
        }
        X509_set_issuer_name(x, X509_get_subject_name(ca->cert));
        if (add_ext(x, ca->cert, NID_basic_constraints, "CA:FALSE") != 0 ||
            (san != NULL &&
             add_ext(x, ca->cert, NID_subject_alt_name, san) != 0) ||
            X509_sign(x, ca->key, EVP_sha256()) == 0 ||
            write_pem(cert_path, x, NULL) != 0 ||
            write_pem(key_path, NULL, key) != 0) {
                goto out;
        }
        if (serial != NULL) {
                *serial = ca->next_serial;
        }
        ca->next_serial++;
        rv = 0;
out:
        X509_free(x);
        EVP_PKEY_free(key);
        return rv;
}

int certs_crl_write(const struct certs_ca *ca, const uint64_t *serials,
                    unsigned n, const char *path)
{
        X509_CRL *crl = X509_CRL_new();
        ASN1_TIME *now = ASN1_TIME_new();
        FILE *f = NULL;
        unsigned i;
        int rv = -1;

        if (crl == NULL || now == NULL) {
                goto out;
        }
        X509_gmtime_adj(now, -60);
        X509_CRL_set_version(crl, 1);
        X509_CRL_set_issuer_name(crl, X509_get_subject_name(ca->cert));
        X509_CRL_set1_lastUpdate(crl, now);
        X509_gmtime_adj(now, 86400);
        X509_CRL_set1_nextUpdate(crl, now);
        for (i = 0; i < n; i++) {
                X509_REVOKED *r = X509_REVOKED_new();
                ASN1_INTEGER *s = ASN1_INTEGER_new();
                ASN1_TIME *when = ASN1_TIME_new();
                X509_gmtime_adj(when, -60);
                ASN1_INTEGER_set_uint64(s, serials[i]);
                X509_REVOKED_set_serialNumber(r, s);
                X509_REVOKED_set_revocationDate(r, when);
                X509_CRL_add0_revoked(crl, r);
                ASN1_INTEGER_free(s);
                ASN1_TIME_free(when);
        }
        X509_CRL_sort(crl);
        if (X509_CRL_sign(crl, ca->key, EVP_sha256()) == 0) {
                goto out;
        }
        f = fopen(path, "w");
        if (f != NULL && PEM_write_X509_CRL(f, crl) && fclose(f) == 0) {
                f = NULL;
                rv = 0;
        }
out:
        if (f != NULL) {
                fclose(f);
        }
        ASN1_TIME_free(now);
        X509_CRL_free(crl);
        return rv;
}
