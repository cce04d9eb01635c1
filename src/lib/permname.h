/* The names of the permissions a rule on lock names gives (BATON_PERM_*
 * of include/baton/admin.h), as batonctl reads and prints them: "read",
 * "lock", "manage", or a comma-separated list such as "lock,manage". */
#ifndef LIB_PERMNAME_H
#define LIB_PERMNAME_H

#include <stdbool.h>
#include <stddef.h>

/* Longest text permname_format() writes, with its NUL (read is never
 * named beside the others). */
#define PERMNAME_MAX sizeof "lock,manage"

/* "read", "lock" or "manage" for one bit; NULL for any other value. */
const char *permname_bit(int bit);

/*
 * `perms` as a rule is written: its bits by name, comma-separated, with
 * read named only when it is alone, since lock and manage include it
 * ("read", "lock", "manage", "lock,manage"); "" for 0. Bits outside the
 * three are left out. Writes into `buf` (PERMNAME_MAX bytes fit every
 * value) and returns it.
 */
const char *permname_format(int perms, char *buf, size_t size);

/*
 * Parse "read", "lock", "manage" or a comma-separated list of them (each
 * once or more, in any order; no blanks, no empty item) into `*perms`,
 * with read added to lock and manage: 0, or -1 when `text` is anything
 * else (`*perms` then unchanged).
 */
int permname_parse(const char *text, int *perms);

/*
 * Write into `buf` what a client tells of a BATON_EPERM refusal by the
 * rules on lock names: no rule of its identity or groups gives `perm`
 * (one BATON_PERM_* bit: a RESULT's count) on the `len` bytes at `name`,
 * or on the names under them when `prefix`, or on one of a multi-lock's
 * names when `name` is NULL.
 */
void permname_refused(char *buf, size_t size, int perm, const char *name,
                      size_t len, bool prefix);

#endif /* LIB_PERMNAME_H */
