// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The receive windows of include/contract/rxwin.h, the very code the XDP program
 * runs, compiled for userspace: per-path cumulative PSN + 256-bit SACK
 * bitmap, psn_base forwarding, and the connection's CSN ring, including
 * 32-bit wrap-around, checked against a simple reference model.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunknown-pragmas"
#include "contract/rxwin.h"
#pragma GCC diagnostic pop

/* Reference model of one path: the set of PSNs received, as a sorted list
 * relative to a base, and the expected cack. */
static int sack_bit(const struct xr_rx_path *p, uint32_t i)
{
	return (p->sack[i / 64] >> (i % 64)) & 1;
}

static void check_path(const struct xr_rx_path *p, uint32_t cack,
		       const uint32_t *have, int n)
{
	uint32_t i;
	int k;

	assert_int_equal(p->cack, cack);
	for (i = 0; i < XR_SACK_BITS; i++) {
		int want = 0;

		for (k = 0; k < n; k++)
			if (have[k] == cack + 1 + i)
				want = 1;
		assert_int_equal(sack_bit(p, i), want);
	}
}

static void test_in_order(void **state)
{
	struct xr_rx_path p = { .cack = 1000 };
	uint32_t i;

	(void)state;
	for (i = 0; i < 600; i++)
		assert_int_equal(xr_rxw_accept(&p, 1000 + i), XR_RXW_NEW);
	check_path(&p, 1600, NULL, 0);
	assert_int_equal(xr_rxw_accept(&p, 1599), XR_RXW_OLD);
	assert_int_equal(xr_rxw_accept(&p, 1000), XR_RXW_OLD);
}

static void test_gap_and_fill(void **state)
{
	struct xr_rx_path p = { .cack = 10 };
	uint32_t have[] = { 12, 13, 15 };

	(void)state;
	assert_int_equal(xr_rxw_accept(&p, 12), XR_RXW_NEW);
	assert_int_equal(xr_rxw_accept(&p, 13), XR_RXW_NEW);
	assert_int_equal(xr_rxw_accept(&p, 15), XR_RXW_NEW);
	assert_int_equal(xr_rxw_accept(&p, 13), XR_RXW_OLD); /* dup in bitmap */
	check_path(&p, 10, have, 3);
	/* 10 fills the head: cack moves to 11 (11 missing). */
	assert_int_equal(xr_rxw_accept(&p, 10), XR_RXW_NEW);
	check_path(&p, 11, have, 3);
	/* 11 fills the next gap: cack runs over 12, 13 to 14. */
	assert_int_equal(xr_rxw_accept(&p, 11), XR_RXW_NEW);
	check_path(&p, 14, have + 2, 1);
	assert_int_equal(xr_rxw_accept(&p, 14), XR_RXW_NEW);
	check_path(&p, 16, NULL, 0);
}

static void test_window_edge(void **state)
{
	struct xr_rx_path p = { .cack = 0 };

	(void)state;
	/* cack + 256 is the last PSN the bitmap holds (bit 255). */
	assert_int_equal(xr_rxw_accept(&p, 256), XR_RXW_NEW);
	assert_int_equal(sack_bit(&p, 255), 1);
	assert_int_equal(xr_rxw_accept(&p, 257), XR_RXW_OOW);
	assert_int_equal(p.cack, 0u);
}

static void test_wraparound(void **state)
{
	struct xr_rx_path p = { .cack = 0xffffff80u };
	uint32_t psn, i;

	(void)state;
	/* Every other PSN across the wrap, then the missing ones. */
	for (i = 0; i < 256; i += 2)
		assert_int_equal(xr_rxw_accept(&p, 0xffffff80u + i + 1), XR_RXW_NEW);
	assert_int_equal(p.cack, 0xffffff80u);
	for (i = 0; i < 256; i += 2)
		assert_int_equal(xr_rxw_accept(&p, 0xffffff80u + i), XR_RXW_NEW);
	assert_int_equal(p.cack, 0xffffff80u + 256);  /* == 0x80 */
	assert_int_equal(p.cack, 0x80u);
	for (i = 0; i < 4; i++)
		assert_int_equal(p.sack[i], 0);
	psn = 0xffffffffu;
	assert_int_equal(xr_rxw_accept(&p, psn), XR_RXW_OLD); /* before cack */
}

static void test_forward(void **state)
{
	struct xr_rx_path p = { .cack = 100 };
	uint32_t have[] = { 105, 107 };

	(void)state;
	xr_rxw_accept(&p, 103);
	xr_rxw_accept(&p, 105);
	xr_rxw_accept(&p, 107);
	/* Sender abandoned 100..102: base 103 (which arrived) -> cack 104. */
	xr_rxw_forward(&p, 103);
	check_path(&p, 104, have, 2);
	/* A base behind cack changes nothing. */
	xr_rxw_forward(&p, 90);
	check_path(&p, 104, have, 2);
	/* A base far beyond the bitmap clears it. */
	xr_rxw_forward(&p, 100000);
	check_path(&p, 100000, NULL, 0);
}

/* Random arrivals against a reference set, wrapping around 2^32. */
static void test_random_model(void **state)
{
	uint32_t start = 0xfffff000u, cack = start;
	struct xr_rx_path p = { .cack = start };
	static uint8_t got[1 << 16];
	uint32_t i, seed = 12345;

	(void)state;
	memset(got, 0, sizeof(got));
	for (i = 0; i < 200000; i++) {
		uint32_t off, psn;
		int want, rc;

		seed = seed * 1103515245 + 12345;
		off = (cack - start) + (seed >> 8) % 300; /* some beyond the window */
		psn = start + off;
		if (off >= sizeof(got))
			break;
		if ((int32_t)(psn - cack) < 0)
			want = XR_RXW_OLD;
		else if (psn - cack > XR_SACK_BITS)
			want = XR_RXW_OOW;
		else
			want = got[off] ? XR_RXW_OLD : XR_RXW_NEW;
		rc = xr_rxw_accept(&p, psn);
		assert_int_equal(rc, want);
		if (rc == XR_RXW_NEW)
			got[off] = 1;
		while ((cack - start) < sizeof(got) && got[cack - start])
			cack++;
		assert_int_equal(p.cack, cack);
	}
}

static void test_csn_ring(void **state)
{
	struct xr_rx_state *st = calloc(1, sizeof(*st));
	uint32_t base = 0xfffffff0u, i;

	(void)state;
	assert_non_null(st);
	st->csn_next = base;
	/* Out of order, with a duplicate and an out-of-window CSN. */
	assert_int_equal(xr_csn_accept(st, base + 5), XR_RXW_NEW);
	assert_int_equal(xr_csn_accept(st, base + 5), XR_RXW_OLD);
	assert_int_equal(xr_csn_accept(st, base + XR_CSN_WIN), XR_RXW_OOW);
	assert_int_equal(xr_csn_accept(st, base - 1), XR_RXW_OLD);
	for (i = 0; i < 5; i++)
		assert_int_equal(xr_csn_accept(st, base + i), XR_RXW_NEW);
	assert_int_equal(st->csn_next, base + 6);
	/* A long run: csn_next may lag (at most two words per packet) but
	 * never passes a hole, and catches up as packets keep coming. */
	for (i = 7; i < 3000; i++)
		assert_int_equal(xr_csn_accept(st, base + i), XR_RXW_NEW);
	assert_int_equal(st->csn_next, base + 6);
	assert_int_equal(xr_csn_accept(st, base + 6), XR_RXW_NEW);
	assert_true(st->csn_next - base > 6);
	for (i = 3000; i < 3100; i++)
		xr_csn_accept(st, base + i);
	assert_int_equal(st->csn_next, base + 3100);
	/* The bits behind csn_next were cleared: one window later the same
	 * ring positions are free again. */
	assert_int_equal(xr_csn_accept(st, base + 3100 + XR_CSN_WIN - 1), XR_RXW_NEW);
	free(st);
}

static void test_bit_helpers(void **state)
{
	__u64 s[4] = { ~0ull, 0x7, 0, 1ull << 63 };

	(void)state;
	assert_int_equal(xr_ones64(0), 0);
	assert_int_equal(xr_ones64(1), 1);
	assert_int_equal(xr_ones64(0xff), 8);
	assert_int_equal(xr_ones64(~0ull), 64);
	assert_int_equal(xr_popcount64(0x8000000000000001ull), 2);
	assert_int_equal(xr_sack_ones(s), 67);
	xr_sack_shift(s, 65);
	assert_int_equal(s[0], 0x3);
	assert_int_equal(s[2], 1ull << 62);
	xr_sack_shift(s, 300);
	assert_int_equal(s[0] | s[1] | s[2] | s[3], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_in_order),
		cmocka_unit_test(test_gap_and_fill),
		cmocka_unit_test(test_window_edge),
		cmocka_unit_test(test_wraparound),
		cmocka_unit_test(test_forward),
		cmocka_unit_test(test_random_model),
		cmocka_unit_test(test_csn_ring),
		cmocka_unit_test(test_bit_helpers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
