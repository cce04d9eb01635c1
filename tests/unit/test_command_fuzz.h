/* Cases of test_command that fuzz command_decode deterministically: random
 * bytes, and single-byte mutations of valid commands. */
#ifndef TESTS_UNIT_COMMAND_FUZZ_H
#define TESTS_UNIT_COMMAND_FUZZ_H

/* cmocka cases, run from the table of test_command.c. */
void fuzz_random_bytes(void **state);
void fuzz_single_byte_mutations(void **state);

#endif /* TESTS_UNIT_COMMAND_FUZZ_H */
