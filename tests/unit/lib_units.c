/* SPDX-License-Identifier: Apache-2.0 */
#include "check.h"
#include "units.h"

TEST(sizes_as_lima_reads_them)
{
	uint64_t b = 0;
	CHECK_INT(vmc_parse_size("6GiB", &b), 0);
	CHECK_U64(b, 6 * VMC_GIB);
	CHECK_INT(vmc_parse_size("4G", &b), 0);
	CHECK_U64(b, 4 * VMC_GIB);
	CHECK_INT(vmc_parse_size("4gb", &b), 0);
	CHECK_U64(b, 4 * VMC_GIB);
	CHECK_INT(vmc_parse_size("512 MiB", &b), 0);
	CHECK_U64(b, 512 * VMC_MIB);
	CHECK_INT(vmc_parse_size("1.5GiB", &b), 0);
	CHECK_U64(b, 3 * VMC_GIB / 2);
	CHECK_INT(vmc_parse_size("4096", &b), 0);
	CHECK_U64(b, 4096);
	CHECK_INT(vmc_parse_size("100b", &b), 0);
	CHECK_U64(b, 100);
	CHECK_INT(vmc_parse_size("1k", &b), 0);
	CHECK_U64(b, 1024);
}

/* Between 2^63 and 2^64 the value is exact (it went through a signed llround before). */
TEST(sizes_up_to_2_to_the_64)
{
	uint64_t b = 0;
	CHECK_INT(vmc_parse_size("15000PiB", &b), 0);
	CHECK_U64(b, (uint64_t)15000 << 50);
	CHECK_INT(vmc_parse_size("8192PiB", &b), 0);
	CHECK_U64(b, (uint64_t)1 << 63);
	CHECK_INT(vmc_parse_size("16383.5PiB", &b), 0);
	CHECK_U64(b, ((uint64_t)16383 << 50) + ((uint64_t)1 << 49));
	CHECK_INT(vmc_parse_size("16384PiB", &b), -1);		   /* 2^64 */
	CHECK_INT(vmc_parse_size("18446744073709551615", &b), -1); /* rounds to 2^64 in double */
	CHECK_INT(vmc_parse_size("18446744073709549568", &b), 0);  /* the largest double below */
	CHECK_U64(b, UINT64_C(18446744073709549568));
}

TEST(bad_sizes_are_refused)
{
	uint64_t b = 7;
	CHECK_INT(vmc_parse_size("", &b), -1);
	CHECK_INT(vmc_parse_size("GiB", &b), -1);
	CHECK_INT(vmc_parse_size("-1G", &b), -1);
	CHECK_INT(vmc_parse_size("1..5G", &b), -1);
	CHECK_INT(vmc_parse_size("1Q", &b), -1);
	CHECK_INT(vmc_parse_size("1bi", &b), -1);
	CHECK_INT(vmc_parse_size("1GiBs", &b), -1);
	CHECK_INT(vmc_parse_size("99999999P", &b), -1);
	CHECK_INT(vmc_parse_size(NULL, &b), -1);
	CHECK_U64(b, 7);
}

TEST(decimals_are_plain_and_stop_at_the_first_other_character)
{
	static const struct {
		const char *text;
		double value;
		const char *rest;
	} good[] = {
	    {"0.5", 0.5, ""},	       {"12", 12, ""}, {".5", 0.5, ""},	       {"5.", 5, ""},
	    {"0.20 0.1", 0.2, " 0.1"}, {"3%", 3, "%"}, {"1.5GiB", 1.5, "GiB"}, {"007", 7, ""},
	};
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		const char *p = good[i].text;
		double v = -1;
		CHECK_INT(vmc_parse_decimal(&p, &v), 0);
		CHECK_DBL(v, good[i].value, 0);
		CHECK_STR(p, good[i].rest);
	}
	static const char *const bad[] = {
	    "",
	    ".",
	    "..",
	    "1.2.3",
	    "-1",
	    "+1",
	    "1e5x",
	    "e5",
	    "nan",
	    "inf",
	    "0x10",
	    " 1",
	    "1234567890123456789012345678901234567890123456789012345678901234"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		const char *p = bad[i];
		double v = -1;
		int rc = vmc_parse_decimal(&p, &v);
		/* "1e5x" and "0x10" start with a number: it ends where the letter starts. */
		if (rc == 0) {
			CHECK(p > bad[i] && (*p == 'e' || *p == 'x'));
			continue;
		}
		CHECK_INT(rc, -1);
		CHECK(p == bad[i]);
		CHECK_DBL(v, -1, 0);
	}
}

TEST(durations)
{
	double s = 0;
	CHECK_INT(vmc_parse_duration("120", &s), 0);
	CHECK_DBL(s, 120, 1e-9);
	CHECK_INT(vmc_parse_duration("2m", &s), 0);
	CHECK_DBL(s, 120, 1e-9);
	CHECK_INT(vmc_parse_duration("10min", &s), 0);
	CHECK_DBL(s, 600, 1e-9);
	CHECK_INT(vmc_parse_duration("500ms", &s), 0);
	CHECK_DBL(s, 0.5, 1e-9);
	CHECK_INT(vmc_parse_duration("1h", &s), 0);
	CHECK_DBL(s, 3600, 1e-9);
	CHECK_INT(vmc_parse_duration("5 days", &s), -1);
	CHECK_INT(vmc_parse_duration("x", &s), -1);
}

TEST(formatting)
{
	char buf[32];
	CHECK_STR(vmc_format_bytes(17, buf, sizeof buf), "17 B");
	CHECK_STR(vmc_format_bytes(4096, buf, sizeof buf), "4.00 KiB");
	CHECK_STR(vmc_format_bytes(812 * VMC_MIB, buf, sizeof buf), "812 MiB");
	CHECK_STR(vmc_format_bytes(3 * VMC_GIB / 2, buf, sizeof buf), "1.50 GiB");
	CHECK_STR(vmc_format_bytes_delta(-(int64_t)(800 * VMC_MIB), buf, sizeof buf), "-800 MiB");
	CHECK_STR(vmc_format_bytes_delta(INT64_MIN, buf, sizeof buf), "-8192 PiB");
	CHECK_STR(vmc_format_duration(0.25, buf, sizeof buf), "250 ms");
	CHECK_STR(vmc_format_duration(12.34, buf, sizeof buf), "12.3 s");
	CHECK_STR(vmc_format_duration(245, buf, sizeof buf), "4 min 05 s");
	CHECK_STR(vmc_format_duration(7380, buf, sizeof buf), "2 h 03 min");
}

int main(void)
{
	RUN(sizes_as_lima_reads_them);
	RUN(sizes_up_to_2_to_the_64);
	RUN(bad_sizes_are_refused);
	RUN(decimals_are_plain_and_stop_at_the_first_other_character);
	RUN(durations);
	RUN(formatting);
	return check_done();
}
