/* The one parser of Baton's addresses: "host:port" and "[ipv6]:port". */
#include "address.h"

#include <arpa/inet.h>
#include <stdbool.h>
#include <string.h>

#include "../../include/baton/errors.h"

static int refuse(struct address *out, const char *why)
{
        out->errmsg = why;
        return BATON_EINVAL;
}

static bool is_digit(char ch)
{
        return ch >= '0' && ch <= '9';
}

static bool is_alnum(char ch)
{
        return is_digit(ch) || (ch >= 'a' && ch <= 'z') ||
               (ch >= 'A' && ch <= 'Z');
}

/* Decimal 1..65535, digits only, no leading zero. */
static int parse_port(const char *p, struct address *out)
{
        unsigned long v = 0;
        size_t n = strlen(p);
        size_t i;

        if (n == 0) {
                return refuse(out, "the port is missing");
        }
        for (i = 0; i < n; i++) {
                if (!is_digit(p[i])) {
                        return refuse(out, "the port is not a decimal number");
                }
        }
        if (p[0] == '0' || n > 5) {
                return refuse(out, "the port must be 1..65535, without "
                                   "leading zeros");
        }
        for (i = 0; i < n; i++) {
                v = v * 10 + (unsigned long)(p[i] - '0');
        }
        if (v > 65535) {
                return refuse(out, "the port must be 1..65535, without "
                                   "leading zeros");
        }
        out->port = (uint16_t)v;
        memcpy(out->service, p, n + 1);
        return 0;
}

/* Only digits and dots: meant as IPv4, so it must be one. inet_pton takes
 * exactly four decimal octets 0..255 without leading zeros. */
static bool numeric(const char *host)
{
        return host[strspn(host, "0123456789.")] == '\0';
}

/* RFC 1123 labels separated by dots; no trailing dot. A label is at most
 * 63 bytes there, which ADDRESS_MAX already ensures (62 bytes of host). */
static int check_name(const char *host, struct address *out)
{
        const char *label = host;

        for (;;) {
                size_t n = strcspn(label, ".");
                size_t i;
                if (n == 0) {
                        return refuse(out, "the host name has an empty "
                                           "label");
                }
                for (i = 0; i < n; i++) {
                        if (!is_alnum(label[i]) && label[i] != '-') {
                                return refuse(out, "the host name may hold "
                                                   "only letters, digits, "
                                                   "'-' and '.'");
                        }
                }
                if (label[0] == '-' || label[n - 1] == '-') {
                        return refuse(out, "a label of the host name starts "
                                           "or ends with '-'");
                }
                if (label[n] == '\0') {
                        return 0;
                }
                label += n + 1;
        }
}

int address_parse(const char *s, struct address *out)
{
        unsigned char buf[sizeof(struct in6_addr)];
        const char *colon;
        size_t len = strlen(s);
        size_t host_len;

        memset(out, 0, sizeof *out);
        if (len == 0) {
                return refuse(out, "the address is empty");
        }
        if (len > ADDRESS_MAX) {
                return refuse(out, "the address is over 64 bytes");
        }
        if (s[0] == '[') {
                const char *close = strchr(s, ']');
                if (close == NULL) {
                        return refuse(out, "'[' without its ']'");
                }
                if (close[1] != ':') {
                        return refuse(out, "no ':port' after the ']'");
                }
                host_len = (size_t)(close - s - 1);
                memcpy(out->host, s + 1, host_len);
                out->host[host_len] = '\0';
                if (inet_pton(AF_INET6, out->host, buf) != 1) {
                        return refuse(out, "not a numeric IPv6 address in "
                                           "the brackets");
                }
                out->kind = ADDRESS_IPV6;
                return parse_port(close + 2, out);
        }
        colon = strchr(s, ':');
        if (colon == NULL) {
                return refuse(out, "no ':port'");
        }
        if (strchr(colon + 1, ':') != NULL) {
                return refuse(out, "an IPv6 address must be written in "
                                   "brackets, [ipv6]:port");
        }
        host_len = (size_t)(colon - s);
        if (host_len == 0) {
                return refuse(out, "the host is missing");
        }
        memcpy(out->host, s, host_len);
        out->host[host_len] = '\0';
        if (numeric(out->host)) {
                if (inet_pton(AF_INET, out->host, buf) != 1) {
                        return refuse(out, "not a numeric IPv4 address: "
                                           "four octets 0..255 without "
                                           "leading zeros");
                }
                out->kind = ADDRESS_IPV4;
        } else if (check_name(out->host, out) != 0) {
                return BATON_EINVAL;
        } else {
                out->kind = ADDRESS_NAME;
        }
        return parse_port(colon + 1, out);
}
