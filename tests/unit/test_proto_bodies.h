/* Cases of test_proto on the strict body readers (truncations, trailing
 * bytes, bad names and strings) and a deterministic fuzz of the reader and
 * every body reader. */
#ifndef TESTS_UNIT_PROTO_BODIES_H
#define TESTS_UNIT_PROTO_BODIES_H

/* cmocka cases, run from the table of test_proto.c. */
void bodies_truncated_or_trailing(void **state);
void fixed_bodies_exact(void **state);
void bodies_bad_lock_names(void **state);
void bodies_bad_strings(void **state);
void fuzz_reader_and_bodies(void **state);

#endif /* TESTS_UNIT_PROTO_BODIES_H */
