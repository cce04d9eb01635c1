/* Cases of test_proto on client names: the PROTO_FLAG_NAMES shapes. */
#ifndef TESTS_UNIT_PROTO_NAMES_H
#define TESTS_UNIT_PROTO_NAMES_H

/* cmocka cases, run from the table of test_proto.c. */
void names_flag_only_where_allowed(void **state);
void names_requests_exact_bytes(void **state);
void names_result_exact_bytes(void **state);
void names_result_limits(void **state);
void names_list_reply_round_trip(void **state);
void names_values_list_reply_round_trip(void **state);
void holders_flag_only_where_allowed(void **state);
void holders_list_reply_round_trip(void **state);

#endif /* TESTS_UNIT_PROTO_NAMES_H */
