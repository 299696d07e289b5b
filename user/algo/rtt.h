/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Round-trip time estimator of one path: pure, no I/O, the clock is passed in.
 *
 *   min     windowed minimum (default window 10 s): the path's propagation
 *           delay, the base of the congestion controller's delay target.
 *   srtt    smoothed RTT and rttvar, RFC 6298 gains (1/8, 1/4): the base of
 *           the retransmission timeout and of pacing.
 *   p99     a recent high percentile over the last XR_RTT_HIST samples,
 *           computed on demand (telemetry; O(XR_RTT_HIST) per call).
 *
 * All values are in nanoseconds; 0 means "no sample yet".
 */
#ifndef XR_USER_RTT_H
#define XR_USER_RTT_H

#include <stdint.h>

#define XR_RTT_HIST 256                        /* samples kept for percentiles */
#define XR_RTT_MIN_WIN_NS (10ull * 1000000000) /* default window of the min */

/* Windowed minimum, Kathleen Nichols' three-sample scheme: the best, second
 * best and third best sample of successive sub-windows, so the minimum of the
 * last `win` ns is known in O(1) space and time. */
struct xr_rtt_minwin {
	uint64_t t_ns;
	uint64_t v_ns;
};

struct xr_rtt {
	uint64_t srtt_ns;
	uint64_t rttvar_ns;
	uint64_t latest_ns;
	uint64_t nsamples;
	uint64_t min_win_ns;
	struct xr_rtt_minwin mm[3];
	uint32_t hist[XR_RTT_HIST]; /* ring of recent samples, saturated to u32 */
	uint32_t hist_pos;          /* next slot to write */
};

/* min_win_ns = 0 selects XR_RTT_MIN_WIN_NS. */
void xr_rtt_init(struct xr_rtt *r, uint64_t min_win_ns);

/* Record one sample taken at now_ns.  A zero sample is counted as 1 ns (a
 * sample is never "nothing"). */
void xr_rtt_sample(struct xr_rtt *r, uint64_t rtt_ns, uint64_t now_ns);

static inline uint64_t xr_rtt_srtt(const struct xr_rtt *r) { return r->srtt_ns; }
static inline uint64_t xr_rtt_var(const struct xr_rtt *r) { return r->rttvar_ns; }
static inline uint64_t xr_rtt_latest(const struct xr_rtt *r) { return r->latest_ns; }
static inline uint64_t xr_rtt_count(const struct xr_rtt *r) { return r->nsamples; }

/* Minimum over the window ending at the latest sample (0 before any). */
static inline uint64_t xr_rtt_min(const struct xr_rtt *r) { return r->mm[0].v_ns; }

/* Nearest-rank percentile (pct in 1..100) of the last min(nsamples,
 * XR_RTT_HIST) samples; 0 before any sample. */
uint64_t xr_rtt_percentile(const struct xr_rtt *r, unsigned int pct);

static inline uint64_t xr_rtt_p99(const struct xr_rtt *r)
{
	return xr_rtt_percentile(r, 99);
}

#endif /* XR_USER_RTT_H */
