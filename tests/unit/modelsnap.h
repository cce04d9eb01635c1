/* The check of lockfsm's snapshot against the reference model: every field
 * of the format of docs/fsm.md parsed and compared with the model's state. */
#ifndef TESTS_UNIT_MODELSNAP_H
#define TESTS_UNIT_MODELSNAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* Whether the snapshot `buf` (`len` bytes, taken at `index`) holds the
 * model's state `m` exactly; false with the first difference, "snapshot:
 * ...", in `why` (`cap` bytes). */
bool modelsnap_check(const struct model *m, const uint8_t *buf, size_t len,
                     uint64_t index, char *why, size_t cap);

#endif /* TESTS_UNIT_MODELSNAP_H */
