/* baton_version(): the Baton release a library or program was built from. */
#include "../../include/baton/api.h"

const char *baton_version(void)
{
        return PACKAGE_VERSION;
}
