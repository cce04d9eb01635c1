/* Fuzz target of the TLS module: arbitrary bytes as the first flight a
 * server or a client connection receives (the first byte picks the side).
 * Built with libFuzzer (scripts/fuzz) it explores; built plainly it runs a
 * fixed set of generated inputs and then replays tests/fuzz/corpus/tls
 * (replay.h), so that make check keeps the target compiling and the module
 * crash-free on both.
 *
 * Any input may be refused; none may crash, hang, leak or be accepted as a
 * handshake (a handshake needs the peer's signature). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../include/baton.h"
#include "../../src/tls/tls.h"
#include "../lib/certs.h"
#include "replay.h"

static struct tls_ctx *server;
static struct tls_ctx *client;

static int setup(void)
{
        static char dir[] = "/tmp/baton-fuzz-tls-XXXXXX";
        char ca[300], crt[300], key[300], err[TLS_ERRMSG_MAX];
        struct certs_ca *c = certs_ca_create("fuzz CA");
        struct tls_files f = {ca, crt, key, NULL};
        char cmd[400];
        int rv;

        if (c == NULL || mkdtemp(dir) == NULL) {
                return -1;
        }
        snprintf(ca, sizeof ca, "%s/ca.crt", dir);
        snprintf(crt, sizeof crt, "%s/n.crt", dir);
        snprintf(key, sizeof key, "%s/n.key", dir);
        rv = certs_ca_write(c, ca) |
             certs_issue(c, "node-1", NULL, -1, 30, crt, key, NULL);
        certs_ca_destroy(c);
        if (rv == 0) {
                rv = tls_ctx_create(&server, TLS_SERVER, &f, err, sizeof err) |
                     tls_ctx_create(&client, TLS_CLIENT, &f, err, sizeof err);
        }
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        return system(cmd) == 0 && rv == 0 ? 0 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        uint8_t out[4096];
        struct tls_conn *t;
        bool as_client;
        long rv;

        if (server == NULL && setup() != 0) {
                abort();
        }
        if (size == 0) {
                return 0;
        }
        /* The first byte picks the side; a client first sends its hello. */
        as_client = data[0] & 1;
        if (tls_conn_create(&t, as_client ? client : server, "node-1", NULL) !=
            0) {
                return 0;
        }
        if (as_client) {
                tls_read(t, out, sizeof out);
                while (tls_take(t, out, sizeof out) > 0) {
                }
        }
        if (tls_feed(t, data + 1, size - 1) == 0) {
                do {
                        rv = tls_read(t, out, sizeof out);
                        while (tls_take(t, out, sizeof out) > 0) {
                        }
                } while (rv > 0);
                if (tls_ready(t)) {
                        abort(); /* no handshake without the peer's key */
                }
        }
        tls_conn_destroy(t);
        return 0;
}

#ifndef BATON_LIBFUZZER
/* Inputs: random bytes, and random bytes behind a handshake record
 * header, each for both sides, from a fixed seed; then the corpus. Files
 * named on the command line are run instead of both. */
int main(int argc, char **argv)
{
        uint8_t buf[2048];
        uint64_t x = 0x9e3779b97f4a7c15u;
        unsigned i;
        size_t j;
        size_t n;

        for (i = 0; argc == 1 && i < 2000; i++) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                n = 1 + (size_t)(x % sizeof buf);
                for (j = 0; j < n; j++) {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        buf[j] = (uint8_t)x;
                }
                buf[0] = (uint8_t)i;
                if (i % 2 == 0 && n > 6) {
                        buf[1] = 22; /* handshake record, TLS 1.x */
                        buf[2] = 3;
                        buf[3] = (uint8_t)(i % 4);
                        buf[4] = (uint8_t)((n - 6) >> 8);
                        buf[5] = (uint8_t)(n - 6);
                        buf[6] = (uint8_t)(i % 3 == 0 ? 1 : 2); /* hello */
                }
                LLVMFuzzerTestOneInput(buf, n);
        }
        return fuzz_replay_main(argc, argv, "tls");
}
#endif
