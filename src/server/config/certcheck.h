/* The checks batond makes of its own certificate before it starts: that it
 * chains to the cluster's CA, names the host clients dial it by, and has
 * not expired; and when it expires, for the warning and the gauge. */
#ifndef SERVER_CERTCHECK_H
#define SERVER_CERTCHECK_H

#include <stddef.h>
#include <stdint.h>

#define CERTCHECK_ERRMSG_MAX 768

/*
 * Check the certificate file `cert` (PEM: the certificate, then any
 * intermediate certificates) at time `now` (seconds since the epoch), in
 * this order: it has not expired; it chains to a certificate of the CA
 * file `ca`; it names the host of `address` ("host:port", "[ipv6]:port",
 * the node's client address as the member lines give it to clients) as
 * clients check it: a DNS subject alternative name for a host name, an IP
 * one for an address (the subject's common name does not count, as for
 * clients). Its end of validity goes to `*not_after` (seconds since the
 * epoch) once the file is read. The paths and `address` are borrowed for
 * the call. 0, or BATON_ETLS with one sentence in `errmsg` naming the
 * file and what is wrong (BATON_ENOMEM when OpenSSL runs out of memory).
 */
int certcheck_start(const char *cert, const char *ca, const char *address,
                    int64_t now, int64_t *not_after, char *errmsg, size_t size);

/* The end of validity of the certificate in `cert` (its first one), in
 * seconds since the epoch, into `*not_after`. 0, or BATON_ETLS with the
 * reason in `errmsg`. */
int certcheck_not_after(const char *cert, int64_t *not_after, char *errmsg,
                        size_t size);

/* `t` (seconds since the epoch) as "YYYY-MM-DD HH:MM:SS UTC" into `out`. */
void certcheck_date(int64_t t, char *out, size_t size);

#endif /* SERVER_CERTCHECK_H */
