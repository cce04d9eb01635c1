/* The program a command-line test runs (batonctl, baton-bench) and the
 * live 3-node cluster it runs it against: found, started, and at the end
 * reaped and closed under the TAP plan. */
#include "ctlcluster.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../integration/tlsfiles.h"
#include "../lib/tclient.h"

const char *ctlcluster_program(const char *env, const char *dflt)
{
        const char *path = getenv(env);
        const char *name = strrchr(dflt, '/');

        setvbuf(stdout, NULL, _IOLBF, 0);
        if (path == NULL || *path == '\0') {
                path = dflt;
        }
        if (access(path, X_OK) != 0) {
                printf("1..0 # SKIP no %s at %s\n",
                       name != NULL ? name + 1 : dflt, path);
                return NULL;
        }
        return path;
}

int ctlcluster_ctl(struct proc *p, const char *prog, const struct harness *h,
                   int timeout_ms, ...)
{
        const char *const head[] = {"--endpoints",
                                    h != NULL ? h->endpoints : NULL, NULL};
        va_list ap;
        int rv;

        va_start(ap, timeout_ms);
        rv = proc_vrun(p, prog, 0, timeout_ms, h != NULL ? head : NULL, ap);
        va_end(ap);
        return rv;
}

int ctlcluster_start(struct proc *p, const char *prog, const struct harness *h,
                     const char *const *args)
{
        const char *const head[] = {"--endpoints", h->endpoints, NULL};

        return proc_start(p, prog, PROC_OWN_GROUP, head, args);
}

int64_t ctlcluster_wall_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

unsigned ctlcluster_count(const char *s, const char *what)
{
        unsigned n = 0;

        while ((s = strstr(s, what)) != NULL) {
                n++;
                s += strlen(what);
        }
        return n;
}

int ctlcluster_open(struct harness *h, const char *argv0, unsigned watchdog_s,
                    unsigned *leader)
{
        unsetenv("BATON_ENDPOINTS");
        if (harness_open_healthy(h, 3, argv0, watchdog_s, CTLCLUSTER_HEALTHY_MS,
                                 leader) != 0) {
                printf("Bail out! cluster: %s\n", h->errmsg);
                harness_close(h);
                return -1;
        }
        return 0;
}

bool ctlcluster_open_tls(struct harness *h, struct tap *t, const char *argv0,
                         unsigned watchdog_s, const char *identity,
                         const char *prog, unsigned *leader, int64_t started_ms,
                         int *status)
{
        if (ctlcluster_open(h, argv0, watchdog_s, leader) != 0) {
                *status = 1;
                return false;
        }
        if (!tlsfiles_on()) {
                tap_diag("roles need TLS: nothing to check without it");
                *status = ctlcluster_close(h, t, false, started_ms);
                return false;
        }
        if (tlsfiles_issue(identity, identity, -1, 30, 0) != 0) {
                printf("Bail out! cannot make %s's certificate\n", identity);
                *status = 1;
                return false;
        }
        tap_diag("cluster %s, leader %u, %s", h->endpoints, *leader, prog);
        return true;
}

int ctlcluster_close(struct harness *h, struct tap *t, bool scan_logs,
                     int64_t started_ms)
{
        int status;

        if (harness_reap(h) != 0) {
                tap_ok(t, false, "no node exited unexpectedly");
        }
        if (scan_logs) {
                char first[512] = "";

                /* Stopped first, so that what a sanitizer says at exit is
                 * in. */
                harness_stop(h);
                tap_ok(t, harness_scan_logs(h, first, sizeof first) == 0,
                       "no sanitizer or assertion report in the nodes' logs "
                       "%s",
                       first);
        }
        if (t->failed != 0) {
                h->failed = true;
        }
        harness_close(h);
        status = tap_plan(t);
        tap_diag("%u of %u failed; %" PRId64 " ms", t->failed, t->run,
                 tclient_now_ms() - started_ms);
        return status;
}

bool ctlcluster_one_line(struct tap *t, const struct proc *r, int status,
                         int64_t within_ms, const char *name, const char *what,
                         va_list ap)
{
        char prefix[64];
        const char *want, *nl = strchr(r->err, '\n');
        bool good = r->status == status && r->elapsed_ms < within_ms &&
                    nl != NULL && nl[1] == '\0';

        snprintf(prefix, sizeof prefix, "batonctl: %s: ", what);
        good = good && strncmp(r->err, prefix, strlen(prefix)) == 0;
        while ((want = va_arg(ap, const char *)) != NULL) {
                good = good && strstr(r->err, want) != NULL;
        }
        if (!tap_ok(t, good,
                    "%s: exit %d in %" PRId64 " ms (< %" PRId64 "), one line "
                    "naming the address and the reason",
                    name, status, r->elapsed_ms, within_ms)) {
                printf("# exit %d after %" PRId64 " ms; stderr: %s", r->status,
                       r->elapsed_ms, r->err);
        } else {
                printf("# %s", r->err);
        }
        return good;
}
