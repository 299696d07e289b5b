/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The checksum fixture, generated rather than tabled: every payload length
 * with a good and a corrupted UDP checksum.  Included once, by
 * bpf_xdp_table.c.
 */
#ifndef XR_TEST_XDP_SWEEP_H
#define XR_TEST_XDP_SWEEP_H

#include <stdint.h>
#include "contract/abi.h"
#include "xdp_env.h"
#include "xdp_frame.h"
#include "xdp_check.h"

/* Every payload length 1..1600 and a few up to the largest payload
 * (8192, a multi-buffer frame past ~3.4 KB: test runs of an xdp.frags
 * program put what exceeds a page's linear room in fragments): a good
 * checksum is accepted and the bytes land; a corrupted one (one bit of the
 * last, first or middle byte) is refused.  Exercises every tail of
 * xr_csum_span and xr_csum_frags and every step of xr_place_piece. */
static void test_csum_sweep(void **state)
{
	struct tcase *tc = *state;
	static const struct step proto = { "sweep", BIGMSG(1, 0) };
	struct env *e = env_up(tc->w, tc->sc, tc->v6, tc->S, tc->C,
			       XR_CFG_VERIFY_CSUM);
	static uint8_t in[FR_MAX], out[FR_MAX];
	uint32_t plen, k = 0, roff = 0, outn, ret;
	int errs = 0;

	assert_non_null(e);
	for (plen = 1; plen <= 8192;
	     plen = plen < 1600 ? plen + 1 : plen + 97 > 8192 && plen < 8192 ? 8192 : plen + 97) {
		struct step st = proto;
		uint64_t s0[XR_STAT_MAX], s1[XR_STAT_MAX];
		struct built b;
		size_t n, j;
		int bad;

		if (roff + plen > 0x4000)
			roff = (roff + 1) & 0x3f;
		st.plen = plen;
		st.psn = st.csn = k;
		st.roff = roff;
		st.msg_off = roff;
		for (bad = 1; bad >= 0; bad--) {
			e->stepno = (int)plen;
			e->where = bad ? "sweep, corrupted" : "sweep";
			e->errs = 0;
			st.corrupt = bad ? (int)(k % 3 == 0 ? plen
						 : k % 3 == 1 ? 1 : plen / 2 + 1)
					 : 0;
			stats_read(e->w, s0);
			n = build(e, &st, 0, 0, in, &b);
			if (run_frame(e->w, in, n, out, &outn, &ret))
				ERR(e, "test run failed");
			EQ(e, "verdict", ret, XDP_DROP);
			stats_read(e->w, s1);
			if (bad) {
				EQ(e, "DROP_CSUM delta",
				   s1[XR_STAT_DROP_CSUM] - s0[XR_STAT_DROP_CSUM], 1);
			} else {
				EQ(e, "RX_DATA delta",
				   s1[XR_STAT_RX_DATA] - s0[XR_STAT_RX_DATA], 1);
				EQ(e, "RX_BYTES delta",
				   s1[XR_STAT_RX_BYTES] - s0[XR_STAT_RX_BYTES],
				   plen);
				for (j = 0; j < plen; j++)
					e->dom[0].shadow[b.pos + j] =
						payload_byte(b.seed, j);
			}
			check_memory(e);
			drain_events(e);
			errs += e->errs;
		}
		k++;
		roff += plen;
	}
	env_down(e);
	if (errs)
		fail_msg("%d mismatches in the checksum sweep", errs);
}

#endif /* XR_TEST_XDP_SWEEP_H */
