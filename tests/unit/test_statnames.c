// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The name tables of user/statnames.c: every counter, connection state and
 * configuration flag of include/contract/abi.h has a name, names are unique identifiers, and
 * lookups by name give the enum value back.  Fails when someone adds a
 * counter to enum xr_stat and forgets its name.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "statnames.h"
#include "contract/abi.h"

static int is_identifier(const char *s)
{
	if (!*s || !(*s >= 'a' && *s <= 'z'))
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
		      *s == '_'))
			return 0;
	return 1;
}

static void every_stat_named_and_unique(void **state)
{
	unsigned int i, j;

	(void)state;
	for (i = 0; i < XR_STAT_MAX; i++) {
		const char *n = xr_stat_name(i);

		assert_non_null(n);
		assert_true(is_identifier(n));
		for (j = 0; j < i; j++)
			assert_string_not_equal(n, xr_stat_name(j));
		assert_int_equal(xr_stat_by_name(n), (int)i);
	}
}

static void stat_names_match_enum(void **state)
{
	(void)state;
	/* Spot checks that the table is indexed by the enum, not by order. */
	assert_string_equal(xr_stat_name(XR_STAT_RX_DATA), "rx_data");
	assert_string_equal(xr_stat_name(XR_STAT_PASS), "pass");
	assert_string_equal(xr_stat_name(XR_STAT_DROP_TOKEN), "drop_token");
	assert_string_equal(xr_stat_name(XR_STAT_EVT_LOST), "evt_lost");
}

static void out_of_range_and_unknown(void **state)
{
	(void)state;
	assert_null(xr_stat_name(XR_STAT_MAX));
	assert_null(xr_stat_name(~0u));
	assert_int_equal(xr_stat_by_name("no_such_counter"), -ENOENT);
	assert_int_equal(xr_stat_by_name(""), -ENOENT);
	assert_null(xr_conn_state_name(XR_CONN_CLOSED + 1));
}

static void conn_states_named(void **state)
{
	(void)state;
	assert_string_equal(xr_conn_state_name(XR_CONN_INIT), "init");
	assert_string_equal(xr_conn_state_name(XR_CONN_RTS), "rts");
	assert_string_equal(xr_conn_state_name(XR_CONN_ERROR), "error");
	assert_string_equal(xr_conn_state_name(XR_CONN_CLOSED), "closed");
}

static void cfg_flags_named(void **state)
{
	unsigned int bit;

	(void)state;
	for (bit = 0; bit < 16; bit++) {
		const char *n = xr_cfg_flag_name(bit);

		/* A flag with a meaning has a name; others have none. */
		if ((1u << bit) == XR_CFG_VERIFY_CSUM)
			assert_string_equal(n, "verify_csum");
		else
			assert_null(n);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_stat_named_and_unique),
		cmocka_unit_test(stat_names_match_enum),
		cmocka_unit_test(out_of_range_and_unknown),
		cmocka_unit_test(conn_states_named),
		cmocka_unit_test(cfg_flags_named),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
