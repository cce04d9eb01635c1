/* One seed of the simulation replayed alone in a fresh process, for its
 * digest: what `test_sim --nodes N --seed S` reproduces of a longer run. */
#ifndef TESTS_SIM_REPLAY_H
#define TESTS_SIM_REPLAY_H

#include <stddef.h>
#include <stdint.h>

/*
 * Runs this program again (the file /proc/self/exe links to) as `--nodes N
 * --seed S`, and
 * `--break BRK` if `brk` is not NULL, and reads the digest from the
 * "digest=" of its one TAP line, passed or failed. A fresh process has
 * nothing of this one's history and, with address-space randomisation,
 * another layout, and the replay runs with glibc's MALLOC_PERTURB_ (what
 * malloc hands out is filled with a byte first): a run that reads state
 * an earlier run left, memory malloc gave it before writing there, its
 * stack's leftovers or where malloc put something shows up as another
 * digest, the first two every time, the others when the two processes'
 * leftovers or addresses lead the run apart.
 *
 * 0 with *digest, or -1 with the reason in `reason` (`cap` bytes) when the
 * program cannot be run or prints no digest.
 */
int replay_digest(unsigned nodes, uint64_t seed, const char *brk,
                  uint64_t *digest, char *reason, size_t cap);

/*
 * The replay check: one TAP line from *k + 1 for each seed first .. first
 * + n - 1 on `nodes` nodes, whose digests in this run were digests[0 ..
 * n): not ok unless the seed replays alone (replay_digest(), with `brk`)
 * to the same digest. Returns how many were not ok.
 */
unsigned replay_check(unsigned nodes, uint64_t first, unsigned n,
                      const uint64_t *digests, const char *brk, unsigned *k);

#endif /* TESTS_SIM_REPLAY_H */
