/* Cases of test_proto on LIST: its request, its reply and their limits. */
#ifndef TESTS_UNIT_PROTO_LIST_H
#define TESTS_UNIT_PROTO_LIST_H

/* cmocka cases, run from the table of test_proto.c. */
void round_trip_list(void **state);
void list_request_bodies(void **state);
void round_trip_list_reply(void **state);
void list_reply_limits(void **state);

#endif /* TESTS_UNIT_PROTO_LIST_H */
