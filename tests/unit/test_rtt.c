/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Unit tests of the RTT estimator (user/rtt.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "rtt.h"

#define US 1000ull
#define MS 1000000ull
#define S 1000000000ull

static void test_empty(void **state)
{
	struct xr_rtt r;

	(void)state;
	xr_rtt_init(&r, 0);
	assert_int_equal(xr_rtt_count(&r), 0);
	assert_int_equal(xr_rtt_srtt(&r), 0);
	assert_int_equal(xr_rtt_min(&r), 0);
	assert_int_equal(xr_rtt_p99(&r), 0);
	assert_int_equal(r.min_win_ns, XR_RTT_MIN_WIN_NS);
}

/* RFC 6298 arithmetic, checked by hand: R1 = 100, R2 = 200 gives
 * rttvar = 50 - 50/4 + 100/4 = 63 and srtt = 100 - 100/8 + 200/8 = 113. */
static void test_rfc6298(void **state)
{
	struct xr_rtt r;

	(void)state;
	xr_rtt_init(&r, 0);
	xr_rtt_sample(&r, 100, 1000);
	assert_int_equal(xr_rtt_srtt(&r), 100);
	assert_int_equal(xr_rtt_var(&r), 50);
	assert_int_equal(xr_rtt_min(&r), 100);
	xr_rtt_sample(&r, 200, 2000);
	assert_int_equal(xr_rtt_var(&r), 63);
	assert_int_equal(xr_rtt_srtt(&r), 113);
	assert_int_equal(xr_rtt_latest(&r), 200);
	assert_int_equal(xr_rtt_min(&r), 100);
}

static void test_converges(void **state)
{
	struct xr_rtt r;
	int i;

	(void)state;
	xr_rtt_init(&r, 0);
	xr_rtt_sample(&r, 1 * MS, 1);
	for (i = 0; i < 200; i++)
		xr_rtt_sample(&r, 50 * US, 10 + i);
	/* srtt within 1% of the steady value, variance nearly gone. */
	assert_in_range(xr_rtt_srtt(&r), 50 * US, 50 * US + 500);
	assert_true(xr_rtt_var(&r) < 1 * US);
	assert_int_equal(xr_rtt_min(&r), 50 * US);
}

static void test_zero_sample(void **state)
{
	struct xr_rtt r;

	(void)state;
	xr_rtt_init(&r, 0);
	xr_rtt_sample(&r, 0, 5);
	assert_int_equal(xr_rtt_count(&r), 1);
	assert_int_equal(xr_rtt_srtt(&r), 1);
	assert_int_equal(xr_rtt_min(&r), 1);
}

/* The minimum forgets samples older than the window, falling back to the
 * best of the later ones rather than to the newest. */
static void test_min_window(void **state)
{
	struct xr_rtt r;
	uint64_t t;

	(void)state;
	xr_rtt_init(&r, 10 * S);
	xr_rtt_sample(&r, 50 * US, 1 * S);
	for (t = 2; t <= 10; t++)
		xr_rtt_sample(&r, (t == 5 ? 80 : 100) * US, t * S);
	assert_int_equal(xr_rtt_min(&r), 50 * US);
	xr_rtt_sample(&r, 100 * US, 12 * S); /* the 50 us sample is 11 s old */
	assert_int_equal(xr_rtt_min(&r), 80 * US);
	for (t = 13; t <= 16; t++)
		xr_rtt_sample(&r, 100 * US, t * S);
	assert_int_equal(xr_rtt_min(&r), 100 * US); /* the 80 us one aged out */
	/* A new lower sample wins at once. */
	xr_rtt_sample(&r, 30 * US, 17 * S);
	assert_int_equal(xr_rtt_min(&r), 30 * US);
}

/* A silent gap longer than the window restarts the minimum. */
static void test_min_after_gap(void **state)
{
	struct xr_rtt r;

	(void)state;
	xr_rtt_init(&r, 1 * S);
	xr_rtt_sample(&r, 10 * US, 1 * S);
	xr_rtt_sample(&r, 90 * US, 5 * S);
	assert_int_equal(xr_rtt_min(&r), 90 * US);
}

/* A clock going backwards (caller bug) does not throw the minimum away. */
static void test_clock_backwards(void **state)
{
	struct xr_rtt r;

	(void)state;
	xr_rtt_init(&r, 1 * S);
	xr_rtt_sample(&r, 10 * US, 5 * S);
	xr_rtt_sample(&r, 20 * US, 1 * S);
	assert_int_equal(xr_rtt_min(&r), 10 * US);
}

static void test_percentiles(void **state)
{
	struct xr_rtt r;
	uint32_t i, v[XR_RTT_HIST];

	(void)state;
	xr_rtt_init(&r, 0);
	for (i = 0; i < XR_RTT_HIST; i++)
		v[i] = i + 1;
	/* Shuffle 1..256 deterministically. */
	srand(7);
	for (i = XR_RTT_HIST - 1; i > 0; i--) {
		uint32_t j = (uint32_t)rand() % (i + 1), t = v[i];

		v[i] = v[j];
		v[j] = t;
	}
	for (i = 0; i < XR_RTT_HIST; i++)
		xr_rtt_sample(&r, v[i], i + 1);
	/* Nearest rank: ceil(0.99 * 256) = 254. */
	assert_int_equal(xr_rtt_p99(&r), 254);
	assert_int_equal(xr_rtt_percentile(&r, 50), 128);
	assert_int_equal(xr_rtt_percentile(&r, 100), 256);
	assert_int_equal(xr_rtt_percentile(&r, 1), 3);
	/* Out-of-range pct is clamped. */
	assert_int_equal(xr_rtt_percentile(&r, 0), 3);
	assert_int_equal(xr_rtt_percentile(&r, 1000), 256);
}

static void test_percentile_few(void **state)
{
	struct xr_rtt r;
	uint32_t i;

	(void)state;
	xr_rtt_init(&r, 0);
	for (i = 10; i >= 1; i--)
		xr_rtt_sample(&r, i * US, 100 - i);
	assert_int_equal(xr_rtt_p99(&r), 10 * US);
	assert_int_equal(xr_rtt_percentile(&r, 50), 5 * US);
}

/* Only the last XR_RTT_HIST samples count. */
static void test_percentile_recent(void **state)
{
	struct xr_rtt r;
	uint32_t i;

	(void)state;
	xr_rtt_init(&r, 0);
	for (i = 0; i < XR_RTT_HIST; i++)
		xr_rtt_sample(&r, 1 * MS, i + 1);
	assert_int_equal(xr_rtt_p99(&r), 1 * MS);
	for (i = 0; i < XR_RTT_HIST - 2; i++)
		xr_rtt_sample(&r, 10 * US, 1000 + i);
	/* 2 old samples of 1 ms remain: above rank 254 of 256. */
	assert_int_equal(xr_rtt_p99(&r), 10 * US);
	assert_int_equal(xr_rtt_percentile(&r, 100), 1 * MS);
	xr_rtt_sample(&r, 10 * US, 2000);
	xr_rtt_sample(&r, 10 * US, 2001);
	assert_int_equal(xr_rtt_percentile(&r, 100), 10 * US);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The quickselect agrees with sorting, on random data with duplicates. */
static void test_percentile_vs_sort(void **state)
{
	uint32_t v[XR_RTT_HIST];
	struct xr_rtt r;
	int round;

	(void)state;
	srand(42);
	for (round = 0; round < 300; round++) {
		uint32_t n = 1 + (uint32_t)rand() % XR_RTT_HIST, i, mod;
		unsigned int pct;

		mod = round % 3 == 0 ? 5 : 1000000; /* many duplicates, or few */
		xr_rtt_init(&r, 0);
		for (i = 0; i < n; i++) {
			v[i] = 1 + (uint32_t)rand() % mod;
			xr_rtt_sample(&r, v[i], i + 1);
		}
		qsort(v, n, sizeof(v[0]), cmp_u32);
		for (pct = 1; pct <= 100; pct += 7) {
			uint32_t rank = (n * pct + 99) / 100;

			assert_int_equal(xr_rtt_percentile(&r, pct), v[rank - 1]);
		}
		assert_int_equal(xr_rtt_p99(&r), v[(n * 99 + 99) / 100 - 1]);
	}
}

/* Samples beyond 32 bits of ns saturate in the percentile ring only. */
static void test_huge_sample(void **state)
{
	struct xr_rtt r;

	(void)state;
	xr_rtt_init(&r, 0);
	xr_rtt_sample(&r, 10 * S, 1);
	assert_int_equal(xr_rtt_srtt(&r), 10 * S);
	assert_int_equal(xr_rtt_min(&r), 10 * S);
	assert_int_equal(xr_rtt_p99(&r), UINT32_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_rfc6298),
		cmocka_unit_test(test_converges),
		cmocka_unit_test(test_zero_sample),
		cmocka_unit_test(test_min_window),
		cmocka_unit_test(test_min_after_gap),
		cmocka_unit_test(test_clock_backwards),
		cmocka_unit_test(test_percentiles),
		cmocka_unit_test(test_percentile_few),
		cmocka_unit_test(test_percentile_recent),
		cmocka_unit_test(test_percentile_vs_sort),
		cmocka_unit_test(test_huge_sample),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
