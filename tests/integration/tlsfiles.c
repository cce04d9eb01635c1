/* The integration tests' certificates (see tlsfiles.h). */
#include "tlsfiles.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/certs.h"

static struct {
        int state; /* 0: not yet, 1: made, -1: TLS off */
        char dir[64];
        struct certs_ca *ca;
        struct certs_ca *foreign;
        char args[TLSFILES_MAX_NODES][3][300];
} files;

static void remove_dir(void)
{
        char cmd[128];

        certs_ca_destroy(files.ca);
        certs_ca_destroy(files.foreign);
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", files.dir);
        if (system(cmd) != 0) {
                fprintf(stderr, "# could not remove %s\n", files.dir);
        }
}

/* DIR/NAME then `ext`, in one of 8 buffers used in turn: a few can be
 * arguments of one call. */
static const char *path(const char *name, const char *ext)
{
        static char buf[8][300];
        static unsigned next;
        char *p = buf[next++ % 8];

        snprintf(p, sizeof buf[0], "%s/%s%s", files.dir, name, ext);
        return p;
}

#define LOOPBACK_SANS "IP:127.0.0.1,IP:127.0.0.2,IP:::1,DNS:localhost"

static int issue(const char *name, const char *cn, const char *sans,
                 int from_days, int to_days, int foreign)
{
        char crt[300];
        char key[300];

        snprintf(crt, sizeof crt, "%s", path(name, ".crt"));
        snprintf(key, sizeof key, "%s", path(name, ".key"));
        return certs_issue(foreign ? files.foreign : files.ca, cn, sans,
                           from_days, to_days, crt, key, NULL);
}

int tlsfiles_issue(const char *name, const char *cn, int from_days, int to_days,
                   int foreign)
{
        return issue(name, cn, LOOPBACK_SANS, from_days, to_days, foreign);
}

int tlsfiles_issue_san(const char *name, const char *cn, const char *san)
{
        char sans[256];

        snprintf(sans, sizeof sans, "%s,%s", LOOPBACK_SANS, san);
        return issue(name, cn, sans, -1, 30, 0);
}

int tlsfiles_issue_only(const char *name, const char *cn, const char *sans)
{
        return issue(name, cn, sans, -1, 30, 0);
}

/* The file `out`: the PEM of `a`, then that of `b`. 0 or -1. */
static int bundle(const char *a, const char *b, const char *out)
{
        const char *in[2] = {a, b};
        FILE *o = fopen(out, "w");
        char buf[4096];
        size_t n;
        int i, rv = o != NULL ? 0 : -1;

        for (i = 0; i < 2 && rv == 0; i++) {
                FILE *f = fopen(in[i], "r");

                if (f == NULL) {
                        rv = -1;
                        break;
                }
                while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
                        if (fwrite(buf, 1, n, o) != n) {
                                rv = -1;
                        }
                }
                fclose(f);
        }
        if (o != NULL && fclose(o) != 0) {
                rv = -1;
        }
        return rv;
}

static int make_all(char *errmsg, size_t size)
{
        char name[16];
        char cn[16];
        unsigned i;

        snprintf(files.dir, sizeof files.dir, "/tmp/baton-it-tls-XXXXXX");
        if (mkdtemp(files.dir) == NULL) {
                snprintf(errmsg, size, "mkdtemp %s failed", files.dir);
                return -1;
        }
        atexit(remove_dir);
        files.ca = certs_ca_create("Baton integration tests CA");
        files.foreign = certs_ca_create("Some other CA");
        if (files.ca == NULL || files.foreign == NULL ||
            certs_ca_write(files.ca, path("ca", ".crt")) != 0 ||
            certs_ca_write(files.foreign, path("foreign-ca", ".crt")) != 0 ||
            bundle(path("foreign-ca", ".crt"), path("ca", ".crt"),
                   path("both-ca", ".crt")) != 0 ||
            tlsfiles_issue("admin", "admin", -1, 30, 0) != 0) {
                snprintf(errmsg, size, "cannot make the CA in %s", files.dir);
                return -1;
        }
        for (i = 1; i <= TLSFILES_MAX_NODES; i++) {
                snprintf(name, sizeof name, "node%u", i);
                snprintf(cn, sizeof cn, "node-%u", i);
                /* Good for longer than tls-expiry-warn-days. */
                if (tlsfiles_issue(name, cn, -1, 400, 0) != 0) {
                        snprintf(errmsg, size, "cannot make %s", name);
                        return -1;
                }
                snprintf(files.args[i - 1][0], sizeof files.args[0][0], "%s",
                         path("ca", ".crt"));
                snprintf(files.args[i - 1][1], sizeof files.args[0][1], "%s",
                         path(name, ".crt"));
                snprintf(files.args[i - 1][2], sizeof files.args[0][2], "%s",
                         path(name, ".key"));
        }
        setenv("BATON_CACERT", path("ca", ".crt"), 1);
        setenv("BATON_CERT", path("admin", ".crt"), 1);
        setenv("BATON_KEY", path("admin", ".key"), 1);
        return 0;
}

int tlsfiles_prepare(char *errmsg, size_t size)
{
        const char *env = getenv("BATON_TEST_TLS");

        if (files.state != 0) {
                return 0;
        }
        if (env != NULL && strcmp(env, "off") == 0) {
                files.state = -1;
                unsetenv("BATON_CACERT");
                unsetenv("BATON_CERT");
                unsetenv("BATON_KEY");
                return 0;
        }
        if (make_all(errmsg, size) != 0) {
                return -1;
        }
        files.state = 1;
        return 0;
}

int tlsfiles_on(void)
{
        return files.state == 1;
}

const char *tlsfiles_dir(void)
{
        return files.dir;
}

const char *tlsfiles_path(const char *name)
{
        return path(name, "");
}

void tlsfiles_node_args(unsigned id, char **argv, unsigned *a)
{
        tlsfiles_node_tls_args(id, argv, a);
        if (files.state != 1 || id < 1 || id > TLSFILES_MAX_NODES) {
                return;
        }
        /* The tests' client administers the cluster (member add, transfer);
         * other identities get the default role. */
        argv[(*a)++] = "--role";
        argv[(*a)++] = "admin admin";
        argv[(*a)++] = "--role";
        argv[(*a)++] = "reader read";
}

void tlsfiles_node_tls_args(unsigned id, char **argv, unsigned *a)
{
        if (files.state != 1 || id < 1 || id > TLSFILES_MAX_NODES) {
                argv[(*a)++] = "--tls";
                argv[(*a)++] = "false";
                return;
        }
        argv[(*a)++] = "--tls";
        argv[(*a)++] = "true";
        argv[(*a)++] = "--tls-ca";
        argv[(*a)++] = files.args[id - 1][0];
        argv[(*a)++] = "--tls-cert";
        argv[(*a)++] = files.args[id - 1][1];
        argv[(*a)++] = "--tls-key";
        argv[(*a)++] = files.args[id - 1][2];
}
