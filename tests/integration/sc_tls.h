/* Integration scenarios on the client port's TLS (see sc_tls.c). */
#ifndef TESTS_INTEGRATION_SC_TLS_H
#define TESTS_INTEGRATION_SC_TLS_H

#include "scenario.h"

/* A client of `endpoints` that trusts DIR/ca.crt and presents
 * DIR/who.crt (DIR: the tests' TLS files), instead of the environment's
 * files. 0 or BATON_ETLS with the reason in c->errmsg. */
int client_as(struct tclient *c, const char *endpoints, const char *ca,
              const char *who);

void sc_tls_refused(struct ctx *x);
void sc_tls_limits(struct ctx *x);
void sc_tls_rotation(struct ctx *x);
void sc_metrics_guarded(struct ctx *x);
void sc_tls_roles(struct ctx *x);
void sc_tls_impostor(struct ctx *x);

#endif /* TESTS_INTEGRATION_SC_TLS_H */
