/* A libuv TCP listener on a Baton address, a host name resolved first. */
#include "listen.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "../../../include/baton.h"
#include "../../lib/address.h"
#include "../base/log.h"

int listen_tcp(uv_loop_t *loop, uv_tcp_t *tcp, const char *address, int backlog,
               uv_connection_cb cb, const char *what)
{
        struct address a;
        struct addrinfo hints;
        uv_getaddrinfo_t req;
        int rv;

        if (address_parse(address, &a) != 0) {
                log_error("%s on %s: %s", what, address, a.errmsg);
                return BATON_EINVAL;
        }
        memset(&hints, 0, sizeof hints);
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        hints.ai_flags = AI_NUMERICSERV | AI_PASSIVE;
        if (a.kind != ADDRESS_NAME) {
                hints.ai_flags |= AI_NUMERICHOST;
        }
        /* Without a callback, uv_getaddrinfo() runs synchronously. */
        rv = uv_getaddrinfo(loop, &req, NULL, a.host, a.service, &hints);
        if (rv != 0) {
                log_error("%s on %s: cannot resolve %s: %s", what, address,
                          a.host, uv_strerror(rv));
                return BATON_EINVAL;
        }
        uv_tcp_init(loop, tcp);
        rv = uv_tcp_bind(tcp, req.addrinfo->ai_addr, 0);
        uv_freeaddrinfo(req.addrinfo);
        if (rv == 0) {
                rv = uv_listen((uv_stream_t *)tcp, backlog, cb);
        }
        if (rv != 0) {
                log_error("%s on %s: %s", what, address, uv_strerror(rv));
                uv_close((uv_handle_t *)tcp, NULL);
                return BATON_EIO;
        }
        return 0;
}

int listen_probe(const char *address, char *errmsg, size_t size)
{
        struct addrinfo hints, *res = NULL;
        struct address a;
        int fd, rv, on = 1;

        if (address_parse(address, &a) != 0) {
                snprintf(errmsg, size, "%s: %s", address, a.errmsg);
                return BATON_EINVAL;
        }
        memset(&hints, 0, sizeof hints);
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        hints.ai_flags = AI_NUMERICSERV | AI_PASSIVE |
                         (a.kind != ADDRESS_NAME ? AI_NUMERICHOST : 0);
        rv = getaddrinfo(a.host, a.service, &hints, &res);
        if (rv != 0) {
                snprintf(errmsg, size, "%s: cannot resolve %s: %s", address,
                         a.host, gai_strerror(rv));
                return BATON_EINVAL;
        }
        fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 ||
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) != 0 ||
            bind(fd, res->ai_addr, res->ai_addrlen) != 0 ||
            listen(fd, 1) != 0) {
                snprintf(errmsg, size, "%s: %s%s", address, strerror(errno),
                         errno == EADDRINUSE ? " (another process listens "
                                               "there)"
                         : errno == EACCES   ? " (a port below 1024 needs "
                                               "CAP_NET_BIND_SERVICE)"
                                             : "");
                rv = BATON_EIO;
        }
        if (fd >= 0) {
                close(fd);
        }
        freeaddrinfo(res);
        return rv;
}
