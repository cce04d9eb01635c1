/* The certificates of the integration tests' clusters, made once per
 * process: a CA, node-1..node-N with the loopback addresses as SANs (good
 * for 400 days), another CA (foreign-ca.crt; both-ca.crt has it and the
 * tests' CA, for a node whose certificate is the other CA's), and an
 * "admin" client whose files the environment gives every client of
 * the process (BATON_CACERT, BATON_CERT, BATON_KEY), as users run Baton. */
#ifndef TESTS_INTEGRATION_TLSFILES_H
#define TESTS_INTEGRATION_TLSFILES_H

#include <stddef.h>

#define TLSFILES_MAX_NODES 9

/*
 * Make the files (once; later calls return at once) in a temporary
 * directory removed at exit, and export the client's three variables.
 * BATON_TEST_TLS=off skips it all and nodes run with tls = off (for
 * looking at plain traffic). 0, or -1 with a message in `errmsg`.
 */
int tlsfiles_prepare(char *errmsg, size_t size);

/* Whether the clusters run with TLS. */
int tlsfiles_on(void);

/* The directory of the files (after tlsfiles_prepare()). */
const char *tlsfiles_dir(void);

/* The path of the file `name` ("ca.crt", "admin.key", ...) in that
 * directory; it lasts until the 8th call after (of this or of the
 * functions that make files), so that a call can take a few. */
const char *tlsfiles_path(const char *name);

/* The batond flags that give node `id` its TLS settings and the roles of
 * the tests' identities ("admin" admin, "reader" read): up to 12 strings
 * appended to argv at *a (they live until exit). */
void tlsfiles_node_args(unsigned id, char **argv, unsigned *a);

/* The same without the role lines (a node whose config has none): up to
 * 8 strings. */
void tlsfiles_node_tls_args(unsigned id, char **argv, unsigned *a);

/* Make a certificate signed by the tests' CA, or by a CA of its own when
 * `foreign`, for `cn`, valid from `from_days` to `to_days` from now, into
 * DIR/NAME.crt and DIR/NAME.key. 0 or -1. */
int tlsfiles_issue(const char *name, const char *cn, int from_days, int to_days,
                   int foreign);

/* The same from the tests' CA, valid for 30 days, with the subject
 * alternative name `san` (OpenSSL's syntax) beside the loopback ones. */
int tlsfiles_issue_san(const char *name, const char *cn, const char *san);

/* The same with the subject alternative names `sans` only (OpenSSL's
 * syntax; NULL: none), for a node whose certificate names another host
 * than the one a client dials. */
int tlsfiles_issue_only(const char *name, const char *cn, const char *sans);

#endif /* TESTS_INTEGRATION_TLSFILES_H */
