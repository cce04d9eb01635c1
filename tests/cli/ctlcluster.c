/* The program a command-line test runs (batonctl, baton-bench) and the
 * live 3-node cluster it runs it against: found, started, and at the end
 * reaped and closed under the TAP plan. */
#include "ctlcluster.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
