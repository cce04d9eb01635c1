/* Cases of test_proto on SESSIONS: its request, its reply and their
 * limits. */
#ifndef TESTS_UNIT_PROTO_SESSIONS_H
#define TESTS_UNIT_PROTO_SESSIONS_H

/* cmocka cases, run from the table of test_proto.c. */
void sessions_request_round_trip(void **state);
void sessions_request_bad_bodies(void **state);
void sessions_reply_round_trip(void **state);
void sessions_reply_largest_fits(void **state);
void sessions_reply_bad_bodies(void **state);

#endif /* TESTS_UNIT_PROTO_SESSIONS_H */
