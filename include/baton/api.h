/*
 * Baton's public API: the mark every public function carries (BATON_API),
 * and the release the library was built from. Every other Baton header
 * includes it.
 */
#ifndef BATON_API_H
#define BATON_API_H

#ifdef __cplusplus
extern "C" {
#endif

#ifndef BATON_API
#define BATON_API __attribute__((visibility("default")))
#endif

/**
 * Return the version of the Baton release libbaton was built from, as a
 * static string ("MAJOR.MINOR.PATCH", e.g. "0.3.0"): the version the
 * program runs with, which may differ from the baton.h it was compiled
 * against. Never returns NULL. Thread-safe.
 */
BATON_API const char *baton_version(void);

#ifdef __cplusplus
}
#endif

#endif /* BATON_API_H */
