/* baton_strerror() and baton_errname(), both from BATON_ERROR_MAP. */
#include "../../include/baton/errors.h"

#include <stddef.h>

const char *baton_strerror(int code)
{
        switch (code) {
        case 0:
                return "success";
#define TEXT(name, number, text)                                               \
        case number:                                                           \
                return text;
                BATON_ERROR_MAP(TEXT)
#undef TEXT
        default:
                return "unknown error";
        }
}

const char *baton_errname(int code)
{
        switch (code) {
        case 0:
                return "BATON_OK";
#define NAME(name, number, text)                                               \
        case number:                                                           \
                return "BATON_" #name;
                BATON_ERROR_MAP(NAME)
#undef NAME
        default:
                return "BATON_E?";
        }
}
