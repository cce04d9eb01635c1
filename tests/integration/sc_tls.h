/* Integration scenarios on the client port's TLS (see sc_tls.c). */
#ifndef TESTS_INTEGRATION_SC_TLS_H
#define TESTS_INTEGRATION_SC_TLS_H

#include "scenario.h"

void sc_tls_refused(struct ctx *x);
void sc_tls_limits(struct ctx *x);
void sc_tls_rotation(struct ctx *x);
void sc_metrics_guarded(struct ctx *x);
void sc_tls_roles(struct ctx *x);
void sc_tls_impostor(struct ctx *x);

#endif /* TESTS_INTEGRATION_SC_TLS_H */
