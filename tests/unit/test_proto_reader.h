/* Cases of test_proto on the incremental frame reader: frames split
 * anywhere, several in one buffer, limits checked before allocating,
 * sticky errors, out of memory, and its body buffer. */
#ifndef TESTS_UNIT_PROTO_READER_H
#define TESTS_UNIT_PROTO_READER_H

/* cmocka cases, run from the table of test_proto.c. */
void reader_byte_by_byte(void **state);
void reader_random_splits(void **state);
void reader_several_frames_per_buffer(void **state);
void reader_too_big_before_allocating(void **state);
void reader_errors_are_sticky(void **state);
void reader_out_of_memory(void **state);
void reader_reuses_body_buffer(void **state);

#endif /* TESTS_UNIT_PROTO_READER_H */
