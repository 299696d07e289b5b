/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Round-trip time estimator: see rtt.h. */
#include <string.h>

#include "rtt.h"

void xr_rtt_init(struct xr_rtt *r, uint64_t min_win_ns)
{
	memset(r, 0, sizeof(*r));
	r->min_win_ns = min_win_ns ? min_win_ns : XR_RTT_MIN_WIN_NS;
}

/* Windowed minimum.  mm[0] is the minimum of the whole window, mm[1] the
 * minimum of what came after mm[0], mm[2] the minimum of what came after
 * mm[1].  When mm[0] ages out of the window mm[1] takes its place, and so
 * on; the sub-window checks (1/4, 1/2 of the window) make sure mm[1] and
 * mm[2] hold later, different samples so that such a promotion never falls
 * back to a sample older than the window. */
static void minwin_update(struct xr_rtt *r, uint64_t t, uint64_t v)
{
	struct xr_rtt_minwin s = { .t_ns = t, .v_ns = v };
	struct xr_rtt_minwin *mm = r->mm;
	uint64_t win = r->min_win_ns, age;

	if (r->nsamples == 0 || v <= mm[0].v_ns || t - mm[2].t_ns > win) {
		mm[0] = mm[1] = mm[2] = s;
		return;
	}
	if (v <= mm[1].v_ns)
		mm[1] = mm[2] = s;
	else if (v <= mm[2].v_ns)
		mm[2] = s;

	age = t - mm[0].t_ns;
	if (age > win) {
		mm[0] = mm[1];
		mm[1] = mm[2];
		mm[2] = s;
		if (t - mm[0].t_ns > win) {
			mm[0] = mm[1];
			mm[1] = mm[2];
		}
	} else if (mm[1].t_ns == mm[0].t_ns && age > win / 4) {
		mm[1] = mm[2] = s;
	} else if (mm[2].t_ns == mm[1].t_ns && age > win / 2) {
		mm[2] = s;
	}
}

void xr_rtt_sample(struct xr_rtt *r, uint64_t rtt_ns, uint64_t now_ns)
{
	if (rtt_ns == 0)
		rtt_ns = 1;
	/* The clock is the caller's; never let it run backwards in here. */
	if (r->nsamples && now_ns < r->mm[2].t_ns)
		now_ns = r->mm[2].t_ns;

	minwin_update(r, now_ns, rtt_ns);

	if (r->nsamples == 0) {
		r->srtt_ns = rtt_ns;
		r->rttvar_ns = rtt_ns / 2;
	} else {
		uint64_t err = rtt_ns > r->srtt_ns ? rtt_ns - r->srtt_ns
						   : r->srtt_ns - rtt_ns;

		/* RFC 6298: rttvar first (it uses the old srtt). */
		r->rttvar_ns = r->rttvar_ns - r->rttvar_ns / 4 + err / 4;
		r->srtt_ns = r->srtt_ns - r->srtt_ns / 8 + rtt_ns / 8;
		if (r->srtt_ns == 0)
			r->srtt_ns = 1;
	}
	r->latest_ns = rtt_ns;
	r->hist[r->hist_pos] = rtt_ns > UINT32_MAX ? UINT32_MAX : (uint32_t)rtt_ns;
	r->hist_pos = (r->hist_pos + 1) % XR_RTT_HIST;
	r->nsamples++;
}

/* k-th smallest (0-based) of a[0..n-1]; reorders a.  Quickselect with a
 * median-of-three pivot: expected O(n), and sorted input is not a worst
 * case. */
static uint32_t select_kth(uint32_t *a, uint32_t n, uint32_t k)
{
	uint32_t lo = 0, hi = n - 1;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2, i, j, pivot, t;
		uint32_t x = a[lo], y = a[mid], z = a[hi];

		/* median of three */
		pivot = x < y ? (y < z ? y : (x < z ? z : x))
			      : (x < z ? x : (y < z ? z : y));
		/* Hoare partition: afterwards a[lo..j] <= pivot <= a[j+1..hi]
		 * with lo <= j < hi, because the pivot is the median of three
		 * array values (so it is not a unique maximum at a[hi]). */
		i = lo - 1;
		j = hi + 1;
		for (;;) {
			do
				i++;
			while (a[i] < pivot);
			do
				j--;
			while (a[j] > pivot);
			if (i >= j)
				break;
			t = a[i];
			a[i] = a[j];
			a[j] = t;
		}
		if (k <= j)
			hi = j;
		else
			lo = j + 1;
	}
	return a[k];
}

uint64_t xr_rtt_percentile(const struct xr_rtt *r, unsigned int pct)
{
	uint32_t buf[XR_RTT_HIST];
	uint32_t n, rank;

	if (r->nsamples == 0)
		return 0;
	if (pct < 1)
		pct = 1;
	if (pct > 100)
		pct = 100;
	n = r->nsamples < XR_RTT_HIST ? (uint32_t)r->nsamples : XR_RTT_HIST;
	/* The ring is full, or filled from slot 0: either way the first n
	 * slots are exactly the samples we have. */
	memcpy(buf, r->hist, n * sizeof(buf[0]));
	rank = (n * pct + 99) / 100; /* nearest rank, 1-based */
	if (rank < 1)
		rank = 1;
	return select_kth(buf, n, rank - 1);
}
