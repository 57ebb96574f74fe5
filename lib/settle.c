/* SPDX-License-Identifier: Apache-2.0 */
#include "settle.h"

bool vmc_free_settled(double rise_per_s, double drift_per_s)
{
	double allowed = (drift_per_s > 0 ? drift_per_s : -drift_per_s) + VMC_SETTLE_SLACK_PER_S;
	return rise_per_s <= allowed;
}
