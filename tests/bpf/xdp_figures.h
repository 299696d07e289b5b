/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Figures the team wants printed with the XDP tables (not checks): the
 * verifier's processed-instruction count and load time, and the cost per
 * packet of the data path and of the ACK path, kernel-timed.  Included
 * once, by bpf_xdp_table.c.
 */
#ifndef XR_TEST_XDP_FIGURES_H
#define XR_TEST_XDP_FIGURES_H

#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <bpf/bpf.h>
#include "contract/abi.h"
#include "xdp_env.h"
#include "xdp_frame.h"
#include "xdp_check.h"

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* ns per packet of 'count' in-order 1400-byte data packets, each a new PSN
 * and CSN (bpf_prog_test_run with repeat=1 per packet, the kernel-measured
 * durations summed): a repeated run of one frame would measure duplicates. */
static double time_data(struct env *e, int count, uint8_t flags,
			uint32_t plen, uint32_t want, double *wall_ns)
{
	static uint8_t in[FR_MAX], out[FR_MAX];
	struct step st = { "timing", .flags = flags, BIGMSG(1, 0) };
	uint64_t total = 0;
	double t0, wall = 0;
	int i;

	st.msg_len = 0xffffffffu;
	st.plen = plen;
	for (i = 0; i < count; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in,
			    .data_out = out, .data_size_out = FR_MAX,
			    .repeat = 1);
		struct built b;

		st.psn = st.csn = (uint32_t)i;
		st.roff = (uint32_t)(i % 4) * plen % (0x4000 - plen);
		st.msg_off = (uint32_t)i * plen;
		o.data_size_in = (uint32_t)build(e, &st, 1, 0, in, &b);
		t0 = now_s();
		if (bpf_prog_test_run_opts(e->w->prog_fd, &o) ||
		    o.retval != want) {
			print_error("timing run %d: err %d verdict %u\n", i,
				    errno, o.retval);
			return -1;
		}
		wall += now_s() - t0;
		total += o.duration;
		if ((i & 1023) == 1023)
			drain_events(e);
	}
	*wall_ns = wall * 1e9 / count;
	return (double)total / count;
}

static double time_repeat(struct xw *w, const uint8_t *in, size_t n,
			  uint32_t repeat, uint32_t *verdict)
{
	static uint8_t out[FR_MAX];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in,
		    .data_size_in = (uint32_t)n, .data_out = out,
		    .data_size_out = FR_MAX, .repeat = repeat);

	if (bpf_prog_test_run_opts(w->prog_fd, &o))
		return -1;
	*verdict = o.retval;
	return o.duration;
}

static void test_figures(void **state)
{
	struct tcase *tc = *state;
	static const struct scen sc = { "figures", F4, ST_N, 0, 0, NULL, 0, 0 };
	static const struct step ack_st = { "ack", .kind = K_ACK, .path = 1,
					    .a = { .cack = 5, .ack_psn = 4 } };
	static const struct step arp_st = { "arp", .kind = K_ARP };
	static uint8_t in[FR_MAX];
	uint64_t s0[XR_STAT_MAX], s1[XR_STAT_MAX];
	double drop_ns, ack_ns, nov_ns, w1, w2, w3, ns, arp_rep, arp_one, tot;
	struct env *e;
	struct built b;
	uint32_t verdict = 0;
	size_t n;
	int i;

	printf("[figures] verifier: processed %lu insns; load %.2f s\n",
	       tc->w->verified, tc->w->load_s);

	e = env_up(tc->w, &sc, 0, 1000, 5000, XR_CFG_VERIFY_CSUM);
	assert_non_null(e);
	drop_ns = time_data(e, 100000, 0, 1400, XDP_DROP, &w1);
	env_down(e);
	e = env_up(tc->w, &sc, 0, 1000, 5000, XR_CFG_VERIFY_CSUM);
	assert_non_null(e);
	ack_ns = time_data(e, 100000, XR_DF_AR, 1400, XDP_TX, &w2);
	env_down(e);
	e = env_up(tc->w, &sc, 0, 1000, 5000, 0);
	assert_non_null(e);
	nov_ns = time_data(e, 100000, 0, 1400, XDP_DROP, &w3);
	assert_true(drop_ns > 0 && ack_ns > 0 && nov_ns > 0);
	printf("[figures] in-order 1400 B data, IPv4, new PSN/CSN per packet, "
	       "100000 packets, kernel-timed (syscall round trip):\n"
	       "[figures]   consumed (XDP_DROP), checksum verified: %.0f ns/pkt "
	       "(%.0f)\n"
	       "[figures]   with AR (XDP_TX ACK), checksum verified: %.0f ns/pkt "
	       "(%.0f)\n"
	       "[figures]   consumed, checksum not verified:        %.0f ns/pkt "
	       "(%.0f)\n",
	       drop_ns, w1, ack_ns, w2, nov_ns, w3);

	{
		static const uint32_t sizes[] = { 64, 512, 3000 };
		uint32_t k;

		env_down(e);
		e = env_up(tc->w, &sc, 0, 1000, 5000, XR_CFG_VERIFY_CSUM);
		assert_non_null(e);
		printf("[figures]   consumed, checksum verified, by payload:");
		for (k = 0; k < X(sizes); k++) {
			ns = time_data(e, 20000, 0, sizes[k], XDP_DROP, &w1);
			printf(" %u B %.0f ns;", sizes[k], ns);
			env_down(e);
			e = env_up(tc->w, &sc, 0, 1000, 5000,
				   XR_CFG_VERIFY_CSUM);
			assert_non_null(e);
		}
		printf("\n");
	}

	/* Overhead of one kernel-timed run, from a frame the program passes
	 * at once: repeat=100000 once vs 100000 runs of repeat=1. */
	n = build(e, &arp_st, 0, 0, in, &b);
	arp_rep = time_repeat(tc->w, in, n, 100000, &verdict);
	assert_int_equal(verdict, XDP_PASS);
	tot = 0;
	for (i = 0; i < 100000; i++) {
		static uint8_t out[FR_MAX];
		uint32_t ret;

		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in,
			    .data_size_in = (uint32_t)n, .data_out = out,
			    .data_size_out = FR_MAX, .repeat = 1);
		assert_int_equal(bpf_prog_test_run_opts(tc->w->prog_fd, &o), 0);
		ret = o.retval;
		assert_int_equal(ret, XDP_PASS);
		tot += o.duration;
	}
	arp_one = tot / 100000;
	printf("[figures] ARP (XDP_PASS): repeat=100000 %.0f ns/pkt; "
	       "kernel-timed single runs %.0f ns/pkt (the difference is the "
	       "timing overhead included above)\n", arp_rep, arp_one);

	/* The literal request: repeat=100000 of one data frame.  Only the
	 * first run places; then the frame is a duplicate (a DUP ACK rewrites
	 * it in place) and afterwards an ACK on the sender's port (passed). */
	{
		struct step st = { "rep", BIGMSG(1, 0) };

		st.msg_len = 0xffffffffu;
		st.plen = 1400;
		st.psn = st.csn = 0; /* e is fresh: in order */
		stats_read(tc->w, s0);
		n = build(e, &st, 2, 0, in, &b);
		ns = time_repeat(tc->w, in, n, 100000, &verdict);
		stats_read(tc->w, s1);
		printf("[figures] one 1400 B data frame, repeat=100000: %.0f "
		       "ns/run, last verdict %s; the runs were %llu data "
		       "(%llu of them duplicates), %llu ACKs, %llu passed: "
		       "after the first run the frame is a duplicate, its DUP "
		       "ACK overwrites it, and the rest measure that ACK -- "
		       "not a data-path figure\n", ns, verdict_name(verdict),
		       (unsigned long long)(s1[XR_STAT_RX_DATA] - s0[XR_STAT_RX_DATA]),
		       (unsigned long long)(s1[XR_STAT_RX_DUP] - s0[XR_STAT_RX_DUP]),
		       (unsigned long long)(s1[XR_STAT_RX_ACK] - s0[XR_STAT_RX_ACK] +
					    s1[XR_STAT_DROP_ACK_LOST] -
					    s0[XR_STAT_DROP_ACK_LOST]),
		       (unsigned long long)(s1[XR_STAT_PASS] - s0[XR_STAT_PASS]));
	}
	env_down(e);

	/* ACK frames (sender side): the frame is not changed, but every run
	 * queues an 88-byte event; a 4 MiB ring holds ~43000, so the ring is
	 * drained every 25000 runs. */
	e = env_up(tc->w, &sc, 0, 1000, 5000, XR_CFG_VERIFY_CSUM);
	assert_non_null(e);
	n = build(e, &ack_st, 0, 0, in, &b);
	stats_read(tc->w, s0);
	tot = 0;
	for (i = 0; i < 4; i++) {
		ns = time_repeat(tc->w, in, n, 25000, &verdict);
		assert_true(ns >= 0);
		assert_int_equal(verdict, XDP_DROP);
		tot += ns;
		drain_events(e);
	}
	stats_read(tc->w, s1);
	printf("[figures] ACK frame (IPv4, XDP_DROP + ring event): %.0f ns/pkt "
	       "(repeat=25000 x 4, ring drained between; %llu events, %llu "
	       "lost)\n", tot / 4,
	       (unsigned long long)(s1[XR_STAT_RX_ACK] - s0[XR_STAT_RX_ACK]),
	       (unsigned long long)(s1[XR_STAT_DROP_ACK_LOST] -
				    s0[XR_STAT_DROP_ACK_LOST]));
	assert_int_equal(s1[XR_STAT_RX_ACK] - s0[XR_STAT_RX_ACK], 100000);
	stats_read(tc->w, s0);
	ns = time_repeat(tc->w, in, n, 100000, &verdict);
	stats_read(tc->w, s1);
	printf("[figures] ACK frame, one repeat=100000 run: %.0f ns/pkt "
	       "(%llu events queued, %llu refused by the full ring)\n", ns,
	       (unsigned long long)(s1[XR_STAT_RX_ACK] - s0[XR_STAT_RX_ACK]),
	       (unsigned long long)(s1[XR_STAT_DROP_ACK_LOST] -
				    s0[XR_STAT_DROP_ACK_LOST]));
	env_down(e);
}

#endif /* XR_TEST_XDP_FIGURES_H */
