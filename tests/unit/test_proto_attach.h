/* Cases of test_proto on session ownership: ATTACH, and the ERROR an old
 * client gets in its own version. */
#ifndef TESTS_UNIT_PROTO_ATTACH_H
#define TESTS_UNIT_PROTO_ATTACH_H

/* cmocka cases, run from the table of test_proto.c. */
void attach_exact_bytes(void **state);
void attach_bad_bodies(void **state);
void refusal_in_the_old_version(void **state);

#endif /* TESTS_UNIT_PROTO_ATTACH_H */
