/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The colours of a check status, the same in `vmcost doctor` and `vmcost-agent check`. Whether
 * to colour at all is vmc_use_color() (log.h): a terminal, and NO_COLOR unset.
 */
#ifndef VMC_COLOR_H
#define VMC_COLOR_H

#include <stdbool.h>

/*
 * The escape that starts a status: "ok" green, "warn" yellow, "fail" red, anything else ("n/a",
 * NULL) dim. "" when color is false.
 */
const char *vmc_status_color(const char *status, bool color);
/* The escape that ends it; "" when color is false. */
const char *vmc_color_reset(bool color);

#endif
