/* Field tables: a body of fixed shape written down once, walked by one
 * encoder and one decoder. */
#include "fields.h"

#include "proto.h"

static void put_string(struct wcursor *w, const char *s, size_t len)
{
        wcursor_u8(w, (uint8_t)len);
        wcursor_bytes(w, s, len);
}

static void get_string(struct rcursor *r, struct proto_string *s)
{
        s->len = rcursor_u8(r);
        s->p = (const char *)rcursor_bytes(r, s->len);
}

void fields_put(struct wcursor *w, const struct fields_entry *f, size_t n,
                const void *src)
{
        const unsigned char *base = src;
        size_t i;

        for (i = 0; i < n; i++) {
                const void *p = base + f[i].offset;

                switch (f[i].kind) {
                case FIELDS_U8:
                        wcursor_u8(w, *(const uint8_t *)p);
                        break;
                case FIELDS_U16:
                        wcursor_u16(w, *(const uint16_t *)p);
                        break;
                case FIELDS_U32:
                        wcursor_u32(w, *(const uint32_t *)p);
                        break;
                case FIELDS_I32:
                        wcursor_u32(w, (uint32_t) * (const int32_t *)p);
                        break;
                case FIELDS_U64:
                        wcursor_u64(w, *(const uint64_t *)p);
                        break;
                case FIELDS_STRING: {
                        const struct proto_string *s = p;

                        put_string(w, s->p, s->len);
                        break;
                }
                }
        }
}

void fields_get(struct rcursor *r, const struct fields_entry *f, size_t n,
                void *dst)
{
        unsigned char *base = dst;
        size_t i;

        for (i = 0; i < n; i++) {
                void *p = base + f[i].offset;

                switch (f[i].kind) {
                case FIELDS_U8:
                        *(uint8_t *)p = rcursor_u8(r);
                        break;
                case FIELDS_U16:
                        *(uint16_t *)p = rcursor_u16(r);
                        break;
                case FIELDS_U32:
                        *(uint32_t *)p = rcursor_u32(r);
                        break;
                case FIELDS_I32:
                        *(int32_t *)p = (int32_t)rcursor_u32(r);
                        break;
                case FIELDS_U64:
                        *(uint64_t *)p = rcursor_u64(r);
                        break;
                case FIELDS_STRING:
                        get_string(r, p);
                        break;
                }
        }
}
