/* Staggered snapshot indexes (src/server/snap/snapphase.h). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../src/server/snap/snapphase.h"

static const uint32_t thresholds[] = {1,    2,    3,     7,       128,
                                      4096, 4097, 65536, 16777216};

/* Every gap lands on the node's phase, is at least 1 and at most the
 * threshold, from any index. */
static void gap_lands_on_phase(void **state)
{
        (void)state;
        for (size_t t = 0; t < sizeof thresholds / sizeof *thresholds; t++) {
                uint32_t th = thresholds[t];
                for (uint64_t id = 1; id <= 7; id++) {
                        uint32_t phase = snapphase_of(id, th);
                        assert_true(phase < th);
                        for (uint64_t index = 0; index < 3 * (uint64_t)th + 9;
                             index += 1 + th / 64) {
                                uint32_t gap = snapphase_gap(id, index, th);
                                assert_true(gap >= 1 && gap <= th);
                                assert_int_equal((index + gap) % th, phase);
                        }
                }
        }
}

/* A node that took its snapshot at its phase waits a whole threshold:
 * on average no more snapshots than without phases. */
static void on_phase_waits_a_threshold(void **state)
{
        (void)state;
        for (uint64_t id = 1; id <= 5; id++) {
                uint64_t index = 4096 * 9 + snapphase_of(id, 4096);
                assert_int_equal(snapphase_gap(id, index, 4096), 4096);
        }
}

/* The phases of nodes 1 to 3, and of nodes 1 to 5, are apart: at least
 * 0.2 and 0.14 of the threshold between any two (0.33 and 0.2 at best). */
static void phases_spread(void **state)
{
        const uint32_t th = 4096;

        (void)state;
        for (uint64_t n = 3; n <= 5; n += 2) {
                uint32_t least = n == 3 ? th / 5 : th / 7;
                for (uint64_t a = 1; a <= n; a++) {
                        for (uint64_t b = a + 1; b <= n; b++) {
                                uint32_t pa = snapphase_of(a, th);
                                uint32_t pb = snapphase_of(b, th);
                                uint32_t d = pa > pb ? pa - pb : pb - pa;
                                if (th - d < d) {
                                        d = th - d;
                                }
                                assert_true(d >= least);
                        }
                }
        }
}

static void zero_threshold(void **state)
{
        (void)state;
        assert_int_equal(snapphase_gap(1, 12345, 0), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(gap_lands_on_phase),
            cmocka_unit_test(on_phase_waits_a_threshold),
            cmocka_unit_test(phases_spread),
            cmocka_unit_test(zero_threshold),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
