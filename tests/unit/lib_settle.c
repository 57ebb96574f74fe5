/* SPDX-License-Identifier: Apache-2.0 */
/* The settle rule memtest and autostop share (lib/settle.c). */
#include "check.h"
#include "settle.h"
#include "units.h"

TEST(free_memory_settles_at_the_background_drift)
{
	CHECK(!vmc_free_settled(200.0 * VMC_MIB, 0));
	CHECK(vmc_free_settled(8.0 * VMC_MIB, 0));
	CHECK(!vmc_free_settled(9.0 * VMC_MIB, 0));
	CHECK(vmc_free_settled(30.0 * VMC_MIB, -25.0 * VMC_MIB)); /* drift either way */
	CHECK(!vmc_free_settled(40.0 * VMC_MIB, 25.0 * VMC_MIB));
	CHECK(vmc_free_settled(-50.0 * VMC_MIB, 0)); /* falling: nothing more to come */
}

int main(void)
{
	RUN(free_memory_settles_at_the_background_drift);
	return check_done();
}
