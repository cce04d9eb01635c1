/* Test certificates made in memory with OpenSSL and written as PEM files:
 * a CA, and certificates it signs with a chosen identity, SANs and
 * validity, so that TLS tests need no openssl command line. */
#ifndef TESTS_LIB_CERTS_H
#define TESTS_LIB_CERTS_H

#include <stdint.h>

struct certs_ca;

/* A self-signed CA named `cn` (EC P-256, valid from a day ago for ten
 * years). NULL when OpenSSL fails. */
struct certs_ca *certs_ca_create(const char *cn);
void certs_ca_destroy(struct certs_ca *ca);

/* Write the CA's certificate to `path`. 0 or -1. */
int certs_ca_write(const struct certs_ca *ca, const char *path);

/*
 * Issue a certificate for `cn` signed by `ca`, with the subject alternative
 * names `san` (OpenSSL's syntax, e.g. "IP:127.0.0.1,DNS:localhost"; NULL for
 * none), valid from `from_days` to `to_days` days from now (negative: in the
 * past), and write it and its new key to `cert_path` and `key_path`. Its
 * serial number goes to `*serial` (may be NULL). 0 or -1.
 */
int certs_issue(struct certs_ca *ca, const char *cn, const char *san,
                int from_days, int to_days, const char *cert_path,
                const char *key_path, uint64_t *serial);

/* Write a CRL of `ca` revoking the `n` serial numbers in `serials`. 0 or
 * -1. */
int certs_crl_write(const struct certs_ca *ca, const uint64_t *serials,
                    unsigned n, const char *path);

#endif /* TESTS_LIB_CERTS_H */
