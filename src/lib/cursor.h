/* Bounds-checked little-endian reading and writing of byte buffers. */
#ifndef LIB_CURSOR_H
#define LIB_CURSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A read cursor over borrowed bytes. Every getter checks the remaining length
 * first; once a read fails the cursor is marked bad and every later read
 * fails too, so a decoder can read a whole structure and check once.
 */
struct rcursor {
        const uint8_t *p;
        size_t left;
        bool bad;
};

/*
 * A write cursor over a caller-owned buffer. Writing past the end marks the
 * cursor bad instead of overflowing; `len` counts the bytes written. A
 * cursor over a NULL buffer only counts, so one walk can size and then
 * write a structure.
 */
struct wcursor {
        uint8_t *p;
        size_t cap;
        size_t len;
        bool bad;
};

void rcursor_init(struct rcursor *c, const void *buf, size_t len);
uint8_t rcursor_u8(struct rcursor *c);
uint16_t rcursor_u16(struct rcursor *c);
uint32_t rcursor_u32(struct rcursor *c);
uint64_t rcursor_u64(struct rcursor *c);
/* Borrow `n` bytes; NULL (and the cursor bad) when fewer remain. */
const uint8_t *rcursor_bytes(struct rcursor *c, size_t n);

void wcursor_init(struct wcursor *c, void *buf, size_t cap);
void wcursor_u8(struct wcursor *c, uint8_t v);
void wcursor_u16(struct wcursor *c, uint16_t v);
void wcursor_u32(struct wcursor *c, uint32_t v);
void wcursor_u64(struct wcursor *c, uint64_t v);
void wcursor_bytes(struct wcursor *c, const void *src, size_t n);

#endif /* LIB_CURSOR_H */
