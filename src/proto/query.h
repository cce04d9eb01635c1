/* Asking about one lock: QUERY (its holder, or every holder) and CHECK (is
 * a token the current grant) frames. */
#ifndef PROTO_QUERY_H
#define PROTO_QUERY_H

#include <stddef.h>
#include <stdint.h>

#include "proto.h"

/*
 * QUERY: string name, in every shape; the header's flags say what the
 * answer carries: 0 a RESULT of kind HOLDER or FREE, PROTO_FLAG_NAMES the
 * same with the holder's client name (reply.h), PROTO_FLAG_HOLDERS a
 * LIST_REPLY of every holder, PROTO_FLAG_HOLDERS | PROTO_FLAG_VALUES the
 * same with elections' values, and either with PROTO_FLAG_LEFT each
 * holder's time left too (list.h). 0 for a bad lock name.
 */
size_t proto_write_query(uint8_t *out, size_t cap, uint64_t id, uint16_t flags,
                         const char *name, size_t name_len);
/* The name borrowed from the body: 0, BATON_ENAME or BATON_EMALFORMED. */
int proto_read_query(const uint8_t *body, size_t len,
                     struct proto_string *name);

/* CHECK: u64 token, string name. */
size_t proto_write_check(uint8_t *out, size_t cap, uint64_t id,
                         const char *name, size_t name_len, uint64_t token);
/* The name borrowed from the body: 0, BATON_ENAME or BATON_EMALFORMED. */
int proto_read_check(const uint8_t *body, size_t len, struct proto_string *name,
                     uint64_t *token);

#endif /* PROTO_QUERY_H */
