/* A harness node's HTTP endpoints (metrics, health) and its memory. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "../../include/baton.h"
#include "../lib/tclient.h"
#include "harness.h"

#define HTTP_MAX (1 << 20) /* a metrics reply, at most */

long harness_rss_kib(const struct harness *h, unsigned id)
{
        char path[64], line[256];
        long kib = -1;
        FILE *f;

        if (id < 1 || id > h->n || h->nodes[id - 1].pid <= 0) {
                return -1;
        }
        snprintf(path, sizeof path, "/proc/%d/status",
                 (int)h->nodes[id - 1].pid);
        f = fopen(path, "r");
        if (f == NULL) {
                return -1;
        }
        while (fgets(line, sizeof line, f) != NULL) {
                if (strncmp(line, "VmRSS:", 6) == 0) {
                        kib = strtol(line + 6, NULL, 10);
                        break;
                }
        }
        fclose(f);
        return kib;
}

/* Connect to "a.b.c.d:port" (blocking, on loopback). */
static int http_connect(struct harness *h, const char *address, int timeout_ms)
{
        struct sockaddr_in sa;
        struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
        const char *colon = strrchr(address, ':');
        char host[HARNESS_ADDR_MAX];
        int fd;

        if (colon == NULL || (size_t)(colon - address) >= sizeof host) {
                harness_set_err(h, "bad address %s", address);
                return -1;
        }
        memcpy(host, address, (size_t)(colon - address));
        host[colon - address] = '\0';
        memset(&sa, 0, sizeof sa);
        sa.sin_family = AF_INET;
        sa.sin_port = htons((uint16_t)atoi(colon + 1));
        if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
                harness_set_err(h, "bad address %s", address);
                return -1;
        }
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
                harness_set_err(h, "socket: %s", strerror(errno));
                return -1;
        }
        /* Every later send and recv gives up after the timeout. */
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
                harness_set_err(h, "connect %s: %s", address, strerror(errno));
                close(fd);
                return -1;
        }
        return fd;
}

long harness_http_get(struct harness *h, unsigned id, const char *path,
                      int *status, char *buf, size_t cap, int timeout_ms)
{
        const char *address = harness_metrics_address(h, id);
        int64_t deadline = tclient_now_ms() + timeout_ms;
        char *reply, *body, req[256];
        size_t len = 0;
        int fd, n_req;

        if (address[0] == '\0' || cap == 0) {
                harness_set_err(h, "node %u has no metrics address", id);
                return -1;
        }
        n_req = snprintf(req, sizeof req,
                         "GET %s HTTP/1.0\r\nHost: baton\r\n\r\n", path);
        fd = http_connect(h, address, timeout_ms);
        if (fd < 0) {
                return -1;
        }
        reply = malloc(HTTP_MAX + 1);
        if (reply == NULL ||
            send(fd, req, (size_t)n_req, MSG_NOSIGNAL) != (ssize_t)n_req) {
                harness_set_err(h, "GET %s of node %u: send failed", path, id);
                goto fail;
        }
        for (;;) {
                ssize_t n;
                if (tclient_now_ms() >= deadline) {
                        harness_set_err(
                            h, "GET %s of node %u: no end within %d ms", path,
                            id, timeout_ms);
                        goto fail;
                }
                n = recv(fd, reply + len, HTTP_MAX - len, 0);
                if (n == 0) {
                        break;
                }
                if (n < 0 && errno == EINTR && tclient_now_ms() < deadline) {
                        continue;
                }
                if (n < 0 || len + (size_t)n >= HTTP_MAX) {
                        harness_set_err(
                            h, "GET %s of node %u: %s after %zu bytes", path,
                            id, n < 0 ? strerror(errno) : "too long", len);
                        goto fail;
                }
                len += (size_t)n;
        }
        reply[len] = '\0';
        body = strstr(reply, "\r\n\r\n");
        if (strncmp(reply, "HTTP/1.", 7) != 0 || strlen(reply) != len ||
            body == NULL || len < 12 || reply[8] != ' ' || reply[12] != ' ') {
                harness_set_err(h, "GET %s of node %u: bad reply: %.80s", path,
                                id, reply);
                goto fail;
        }
        *status = atoi(reply + 9);
        body += 4;
        len -= (size_t)(body - reply);
        if (len >= cap) {
                harness_set_err(h, "GET %s of node %u: %zu bytes do not fit",
                                path, id, len);
                goto fail;
        }
        memcpy(buf, body, len + 1);
        free(reply);
        close(fd);
        return (long)len;

fail:
        free(reply);
        close(fd);
        return -1;
}

long harness_metrics(struct harness *h, unsigned id, char *buf, size_t cap,
                     int timeout_ms)
{
        int status = 0;
        long n =
            harness_http_get(h, id, "/metrics", &status, buf, cap, timeout_ms);

        if (n >= 0 && status != 200) {
                harness_set_err(h, "metrics of node %u: status %d: %.80s", id,
                                status, buf);
                return -1;
        }
        return n;
}
