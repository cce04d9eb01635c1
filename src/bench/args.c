/* baton-bench's command line (args.h). */
#include "args.h"

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"

void usage(FILE *f)
{
        fprintf(f,
                "usage: baton-bench [--workload uncontended|contended|shared|"
                "semaphore|multi|election|failover]\n"
                "         [--watchers N [--watch-conns C] (contended "
                "workloads: watches\n"
                "          of the lock over C connections, default 100;\n"
                "          --watch-callbacks: read by callbacks;\n"
                "          --watch-endpoints H:P,...: theirs, e.g. a "
                "follower)]\n"
                "         [--rate R (acquisitions a second, all clients "
                "together)]\n"
                "         [--http H:P,... (uncontended, contended: lock "
                "over the HTTP API\n"
                "          at these endpoints, one keep-alive connection "
                "a client)]\n"
                "         [--permits N (semaphore, default 4)]\n"
                "         [--names K (multi: names per multi-lock, default "
                "2)]\n"
                "         [--clients C] [--duration S] [--warmup S] "
                "[--endpoints H:P,...]"
                " [--nodes N]\n"
                "         [--system NAME] [--variant TEXT] [--prefix P]"
                " [--ttl-ms MS]\n"
                "         [--op-timeout-ms MS] [--hold-us US] [--retry-us US]\n"
                "         [--error-backoff-ms MS]\n"
                "       baton-bench --workload fill [--sessions S]"
                " [--locks-per-session L]\n"
                "         [--window W] [--ttl-ms MS] [--endpoints H:P,...]\n"
                "       baton-bench --workload connections|reconnects"
                " [--connections N] [--window W]\n"
                "         [--hold-s S] [--ttl-ms MS] [--endpoints H:P,...]\n"
                "       baton-bench --workload expiry-storm|keepalives"
                " [--sessions S] [--window W]\n"
                "         [--storm-at S (expiry-storm: the keepalive burst, "
                "seconds into the\n"
                "          window, default 2)] and the uncontended "
                "workload's flags\n"
                "The cluster: --endpoints, else $BATON_ENDPOINTS, else "
                "%s.\n",
                BATON_DEFAULT_ENDPOINTS);
}

static int parse_long(const char *s, long lo, long hi, long *out)
{
        char *end;
        long v;

        errno = 0;
        v = strtol(s, &end, 10);
        if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi) {
                return -1;
        }
        *out = v;
        return 0;
}

static int parse_double(const char *s, double lo, double hi, double *out)
{
        char *end;
        double v;

        errno = 0;
        v = strtod(s, &end);
        if (errno != 0 || end == s || *end != '\0' || !(v >= lo && v <= hi)) {
                return -1;
        }
        *out = v;
        return 0;
}

/* Whether libbaton takes `endpoints`: a handle connects lazily, so making
 * one asks nothing of the cluster. */
static bool endpoints_valid(const char *endpoints)
{
        baton_client *c = NULL;
        int rv = baton_client_create(&c, endpoints, NULL);

        baton_client_destroy(c);
        return rv != BATON_EINVAL;
}

/* set_flag() for the flags of one workload or another. */
static int set_workload_flag(struct config *cfg, int ch)
{
        int bad = 0;

        switch (ch) {
        case 'S':
                bad |= parse_long(optarg, 1, 100000000, &cfg->sessions);
                break;
        case 'L':
                bad |= parse_long(optarg, 0, 1024, &cfg->locks_per_session);
                break;
        case 'N':
                bad |= parse_long(optarg, 1, 65536, &cfg->window);
                break;
        case 'C':
                bad |= parse_long(optarg, 1, 1000000, &cfg->connections);
                break;
        case 'O':
                bad |= parse_double(optarg, 0, 3600, &cfg->hold_s);
                break;
        case 'P':
                bad |= parse_long(optarg, 1, 1048576, &cfg->permits);
                break;
        case 'M':
                bad |= parse_long(optarg, 1, BATON_MULTI_MAX, &cfg->names);
                break;
        case 'X':
                bad |= parse_long(optarg, 0, 1000000, &cfg->watchers);
                break;
        case 'Y':
                bad |= parse_long(optarg, 1, 10000, &cfg->watch_conns);
                break;
        case 'Z':
                cfg->watch_callbacks = 1;
                break;
        case 'E':
                cfg->watch_endpoints = optarg;
                bad |= endpoints_valid(optarg) ? 0 : -1;
                break;
        case 'J':
                cfg->http = optarg;
                bad |= endpoints_valid(optarg) ? 0 : -1;
                break;
        case 'R':
                bad |= parse_double(optarg, 0, 1e7, &cfg->rate);
                break;
        case 'A':
                bad |= parse_double(optarg, 0, 3600, &cfg->storm_at);
                break;
        default:
                return 1;
        }
        return bad;
}

/* Set the config field of flag `ch` from `optarg`. 0, -1 for a bad value,
 * 1 for a flag that is not one of parse_args()'s. */
static int set_flag(struct config *cfg, int ch)
{
        long v;
        int bad = 0;

        switch (ch) {
        case 'w':
                cfg->workload = optarg;
                break;
        case 'c':
                bad |= parse_long(optarg, 1, 4096, &v);
                cfg->clients = (int)v;
                break;
        case 'd':
                bad |= parse_double(optarg, 1e-3, 3600, &cfg->duration_s);
                break;
        case 'W':
                bad |= parse_double(optarg, 0, 600, &cfg->warmup_s);
                break;
        case 'e':
                cfg->endpoints = optarg;
                break;
        case 'n':
                bad |= parse_long(optarg, 1, 1000, &v);
                cfg->nodes = (int)v;
                break;
        case 's':
                cfg->system = optarg;
                break;
        case 'v':
                cfg->variant = optarg;
                break;
        case 'p':
                cfg->prefix = optarg;
                break;
        case 't':
                bad |= parse_long(optarg, 1, UINT32_MAX / 2, &cfg->ttl_ms);
                break;
        case 'o':
                bad |=
                    parse_long(optarg, 1, INT32_MAX / 2, &cfg->op_timeout_ms);
                break;
        case 'H':
                bad |= parse_long(optarg, 0, 60000000, &cfg->hold_us);
                break;
        case 'r':
                bad |= parse_long(optarg, 0, 60000000, &cfg->retry_us);
                break;
        case 'b':
                bad |= parse_long(optarg, 0, 600000, &cfg->error_backoff_ms);
                break;
        default:
                return set_workload_flag(cfg, ch);
        }
        return bad;
}

/* As batonctl: the flag, else the environment, else the local cluster.
 * 0, or -1 after saying why the endpoints are bad. */
static int pick_endpoints(struct config *cfg)
{
        if (cfg->endpoints != NULL) {
                cfg->endpoints_from = "--endpoints";
        } else if (getenv("BATON_ENDPOINTS") != NULL &&
                   getenv("BATON_ENDPOINTS")[0] != '\0') {
                cfg->endpoints = getenv("BATON_ENDPOINTS");
                cfg->endpoints_from = "BATON_ENDPOINTS";
        } else {
                cfg->endpoints = BATON_DEFAULT_ENDPOINTS;
                cfg->endpoints_from = "the default";
        }
        if (!endpoints_valid(cfg->endpoints)) {
                fprintf(stderr,
                        "baton-bench: bad endpoints \"%s\" (from %s): want "
                        "host:port or [ipv6]:port, comma separated, at most "
                        "16\n",
                        cfg->endpoints, cfg->endpoints_from);
                return -1;
        }
        return 0;
}

/* What the --workload's name means for the clients. 0, or -1 after
 * saying what is wrong. */
static int set_workload(struct config *cfg)
{
        if (strcmp(cfg->workload, "contended") == 0) {
                cfg->contended = 1;
        } else if (strcmp(cfg->workload, "shared") == 0) {
                cfg->contended = 1;
                cfg->shared = 1;
        } else if (strcmp(cfg->workload, "semaphore") == 0) {
                cfg->contended = 1;
                cfg->permits = cfg->permits > 0 ? cfg->permits : 4;
        } else if (strcmp(cfg->workload, "election") == 0) {
                /* Every client a candidate; the leader resigns at once. */
                cfg->contended = 1;
                cfg->election = 1;
        } else if (strcmp(cfg->workload, "multi") == 0) {
                cfg->contended = 1;
                cfg->names = cfg->names > 0 ? cfg->names : 2;
                if (cfg->names > cfg->clients) {
                        fprintf(stderr,
                                "baton-bench: --names %ld: at most "
                                "--clients\n",
                                cfg->names);
                        return -1;
                }
        } else if (strcmp(cfg->workload, "expiry-storm") == 0) {
                cfg->storm = 1;
        } else if (strcmp(cfg->workload, "keepalives") == 0) {
                cfg->storm = 1;
                cfg->keepalives = 1;
        } else if (strcmp(cfg->workload, "reconnects") == 0) {
                cfg->reconnect = 1;
        }
        if (cfg->http != NULL && ((strcmp(cfg->workload, "uncontended") != 0 &&
                                   strcmp(cfg->workload, "contended") != 0) ||
                                  cfg->watchers > 0 || cfg->rate > 0)) {
                fprintf(stderr, "baton-bench: --http runs the uncontended "
                                "and contended workloads only, without "
                                "--watchers or --rate\n");
                return -1;
        }
        if (cfg->storm || cfg->reconnect || cfg->contended) {
                return 0;
        } else if (strcmp(cfg->workload, "uncontended") != 0 &&
                   strcmp(cfg->workload, "failover") != 0 &&
                   strcmp(cfg->workload, "fill") != 0 &&
                   strcmp(cfg->workload, "connections") != 0) {
                fprintf(stderr, "baton-bench: unknown workload %s\n",
                        cfg->workload);
                return -1;
        }
        return 0;
}

int parse_args(int argc, char **argv, struct config *cfg)
{
        static const struct option opts[] = {
            {"workload", required_argument, NULL, 'w'},
            {"clients", required_argument, NULL, 'c'},
            {"duration", required_argument, NULL, 'd'},
            {"warmup", required_argument, NULL, 'W'},
            {"endpoints", required_argument, NULL, 'e'},
            {"nodes", required_argument, NULL, 'n'},
            {"system", required_argument, NULL, 's'},
            {"variant", required_argument, NULL, 'v'},
            {"prefix", required_argument, NULL, 'p'},
            {"ttl-ms", required_argument, NULL, 't'},
            {"op-timeout-ms", required_argument, NULL, 'o'},
            {"hold-us", required_argument, NULL, 'H'},
            {"retry-us", required_argument, NULL, 'r'},
            {"error-backoff-ms", required_argument, NULL, 'b'},
            {"sessions", required_argument, NULL, 'S'},
            {"locks-per-session", required_argument, NULL, 'L'},
            {"window", required_argument, NULL, 'N'},
            {"connections", required_argument, NULL, 'C'},
            {"hold-s", required_argument, NULL, 'O'},
            {"permits", required_argument, NULL, 'P'},
            {"names", required_argument, NULL, 'M'},
            {"watchers", required_argument, NULL, 'X'},
            {"watch-conns", required_argument, NULL, 'Y'},
            {"watch-callbacks", no_argument, NULL, 'Z'},
            {"watch-endpoints", required_argument, NULL, 'E'},
            {"http", required_argument, NULL, 'J'},
            {"rate", required_argument, NULL, 'R'},
            {"storm-at", required_argument, NULL, 'A'},
            {"help", no_argument, NULL, 'h'},
            {NULL, 0, NULL, 0},
        };
        int ch, li = 0, rv;

        while ((ch = getopt_long(argc, argv, "", opts, &li)) != -1) {
                if (ch == 'h') {
                        usage(stdout);
                        exit(0);
                }
                rv = set_flag(cfg, ch);
                if (rv > 0) {
                        return -1;
                }
                if (rv != 0) {
                        fprintf(stderr, "baton-bench: bad value for --%s: %s\n",
                                opts[li].name, optarg);
                        return -1;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "baton-bench: unexpected argument %s\n",
                        argv[optind]);
                return -1;
        }
        if (set_workload(cfg) != 0 || pick_endpoints(cfg) != 0) {
                return -1;
        }
        if (strlen(cfg->prefix) == 0 || strlen(cfg->prefix) > 240) {
                fprintf(stderr, "baton-bench: --prefix: 1..240 bytes\n");
                return -1;
        }
        return 0;
}
