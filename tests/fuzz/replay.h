/* The plain build of a fuzz target: its corpus replayed under make check.
 *
 * Built with libFuzzer (scripts/fuzz, -DBATON_LIBFUZZER) a target in
 * tests/fuzz/ is only LLVMFuzzerTestOneInput(); built plainly it gets
 *
 *     int main(int argc, char **argv)
 *     {
 *             return fuzz_replay_main(argc, argv, "reader");
 *     }
 *
 * which feeds every file of tests/fuzz/corpus/reader/ (under $srcdir, which
 * make check sets) to the target once, or the files named on the command
 * line (a reproducer: `tests/fuzz/fuzz_reader crash-1234`). A target
 * reports a failure by aborting, as it does under libFuzzer; a replay that
 * returns has passed, and prints TAP with the number of inputs run. An
 * empty or missing corpus is a failure: a replay of nothing checks nothing. */
#ifndef BATON_TESTS_FUZZ_REPLAY_H
#define BATON_TESTS_FUZZ_REPLAY_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int fuzz_replay_main(int argc, char **argv, const char *name);

#endif
