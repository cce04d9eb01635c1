/* Cases of test_command on the exact byte layout of commands and their
 * padding to 8 bytes: hand-written bytes encode and decode, and padding
 * that is missing, too long or not zero is refused. */
#ifndef TESTS_UNIT_COMMAND_LAYOUT_H
#define TESTS_UNIT_COMMAND_LAYOUT_H

/* cmocka cases, run from the table of test_command.c. */
void layout_acquire(void **state);
void layout_open(void **state);
void layout_open_v1(void **state);
void layout_release_and_check(void **state);
void layout_member(void **state);
void layout_padding(void **state);
void layout_every_type_matches_header(void **state);
void encode_pads_to_eight(void **state);
void decode_extra_zero_bytes(void **state);
void decode_nonzero_padding(void **state);
void decode_unpadded_layout(void **state);

#endif /* TESTS_UNIT_COMMAND_LAYOUT_H */
