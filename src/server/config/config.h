/* batond's configuration: one table of keys, a config file, flags. */
#ifndef SERVER_CONFIG_H
#define SERVER_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../base/log.h"
#include "settings.h"

/* Fill `c` with every key's default (no members, id 0, data_dir ""). */
void config_defaults(struct config *c);

/*
 * Read a config file: one `key = value` per line, `#` or `;` comments,
 * `member = ID RAFT_ADDRESS CLIENT_ADDRESS` once per member. Unknown keys
 * and bad values stop with "PATH:LINE: message" in `errmsg`. Returns 0 or
 * BATON_EINVAL (BATON_EIO when the file cannot be read).
 */
int config_load_file(struct config *c, const char *path, char *errmsg,
                     size_t errmsg_size);

/*
 * Apply command line flags over `c`: `--KEY=VALUE` or `--KEY VALUE` for
 * every key of the table, `--member "ID RAFT CLIENT"` (repeatable; any
 * --member replaces the file's list). `--config PATH` loads that file
 * first, wherever it appears, so flags always win over the file. Returns
 * 0, or BATON_EINVAL with "flag --KEY: message" in `errmsg`. `--help` and
 * `--version` are left to the caller (see config_wants_help()).
 */
int config_parse_args(struct config *c, int argc, char **argv, char *errmsg,
                      size_t errmsg_size);

/* True when argv holds --help or -h. */
bool config_wants_help(int argc, char **argv);

/*
 * Check the settings as a whole: id is one of the members, ids unique,
 * addresses "host:port" or "[ipv6]:port" (raft addresses not IPv6, which
 * libraft 0.22.1 cannot use) and distinct, data_dir set, heartbeat < election,
 * min_ttl_ms = 0 resolved to 2 x election (or refused when set below that),
 * snapshot_trailing >= snapshot_threshold / 8, idle_timeout_ms = 0 resolved
 * to max_ttl_ms, and with tls the CA, certificate and key set and
 * tls_peer_identity holding "{id}"; client_listen and raft_listen, when
 * empty, set to this node's member line's addresses, and this node's
 * listeners (those two and metrics_address) on ports that cannot clash.
 * Returns 0 or BATON_EINVAL with a message naming the key.
 */
int config_validate(struct config *c, char *errmsg, size_t errmsg_size);

/* The lock state machine's limits from the keys that set them (the
 * "same value on every node" ones). */
struct lockfsm_limits;
void config_fsm_limits(const struct config *c, struct lockfsm_limits *limits);

/* Print every key with its type, default, range and description (the
 * source of deploy/README.md's table and of `batond --help`). */
void config_print_help(FILE *out);

#endif /* SERVER_CONFIG_H */
