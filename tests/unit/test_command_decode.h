/* Cases of test_command on what command_decode refuses (versions, types,
 * flags, truncations, trailing bytes, bad strings and names) and on
 * command_validate agreeing with it. */
#ifndef TESTS_UNIT_COMMAND_DECODE_H
#define TESTS_UNIT_COMMAND_DECODE_H

/* cmocka cases, run from the table of test_command.c. */
void decode_empty_buffer(void **state);
void decode_bad_version(void **state);
void decode_unknown_type(void **state);
void decode_nonzero_flags(void **state);
void decode_every_truncation(void **state);
void decode_trailing_byte(void **state);
void decode_string_length_overruns(void **state);
void decode_empty_lock_name(void **state);
void decode_lock_name_with_nul(void **state);
void decode_lock_name_limits(void **state);
void decode_client_name_limits(void **state);
void decode_client_name_with_nul(void **state);
void decode_member_address_limits(void **state);
void decode_member_address_with_nul(void **state);
void decode_member_target_and_mode(void **state);
void validate_agrees_with_decode(void **state);
void validate_verdicts(void **state);

#endif /* TESTS_UNIT_COMMAND_DECODE_H */
