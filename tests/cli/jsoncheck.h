/* The checks batonctl's tests make of its --json output: one valid JSON
 * document with the fields it documents, and UTF-8 throughout. */
#ifndef TESTS_CLI_JSONCHECK_H
#define TESTS_CLI_JSONCHECK_H

#include <stdbool.h>

/* Whether `s` is one JSON document (RFC 8259, nesting up to a small depth)
 * and nothing but whitespace after it. */
bool jsoncheck_valid(const char *s);

/* Whether `json` has every "field": of the NULL-terminated list; says on
 * the TAP stream (tap_diag) which one it lacks. */
bool jsoncheck_has_fields(const char *json, const char *const *fields);

/* Whether `s` is valid UTF-8 (RFC 3629), decoded by value. */
bool jsoncheck_utf8(const char *s);

#endif /* TESTS_CLI_JSONCHECK_H */
