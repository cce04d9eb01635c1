/* The I/O side of a handle's link: for now, the words in which an endpoint's
 * failure is told, from the system's errno, a connect that failed and a TLS
 * refusal, which name what the system and the TLS library said and so stay
 * out of the link's deciding code. */
#ifndef CLIENT_LINKIO_H
#define CLIENT_LINKIO_H

#include <stddef.h>

struct tls_conn;

/* An endpoint's reason from the system's: strerror(err), lower-cased
 * ("connection refused"), then `more`. */
void linkio_why_errno(char *why, size_t size, int err, const char *more);

/* An endpoint's reason for a connect that failed with `err` (or took
 * over `connect_ms`: ETIMEDOUT), named by its kind: "connection refused",
 * "unreachable: no route to host" (a firewall's or a prohibit route's
 * "permission denied" too), "timed out: no connection within N ms", else
 * the system's words. */
void linkio_why_connect(char *why, size_t size, int err, int connect_ms);

/* An endpoint's reason for a TLS failure of `t`, in the words of the side
 * that refused: this client's verification of the node's certificate
 * ("certificate has expired", "hostname mismatch"), or the alert the node
 * sent ("the node refused this client's certificate: TLS alert unknown
 * CA"). */
void linkio_why_tls(char *why, size_t size, const struct tls_conn *t);

#endif /* CLIENT_LINKIO_H */
