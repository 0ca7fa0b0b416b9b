/* One version for the whole project: aurorad reports aurorapack's
 * (cli/cli.h), so `aurorad --version` and `aurorapack --version` agree. */
#ifndef AURORAD_VERSION_H
#define AURORAD_VERSION_H

#include "cli.h"

#define AURORAD_VERSION AURORAPACK_VERSION

#endif
