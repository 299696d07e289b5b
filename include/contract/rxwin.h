/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Receive windows, one job: decide whether a packet is new, and keep the
 * state an ACK reports.  Pure functions over struct xr_rx_path / the CSN ring
 * of struct xr_rx_state, no helpers and no calls, so the XDP program can run
 * them under the connection's bpf_spin_lock and the unit tests can run the
 * very same code in userspace.
 *
 * Per path:  cack = next PSN expected; sack bit i = PSN cack + 1 + i arrived.
 * Per conn:  csn_next = next CSN expected; ring bit (csn % XR_CSN_WIN) = that
 *            CSN arrived.  The CSN decides placement (a packet retransmitted
 *            on another path has a new PSN but the same CSN); the PSN only
 *            feeds the path's ACK, which is how the sender finds losses.
 */
#ifndef XR_CONTRACT_RXWIN_H
#define XR_CONTRACT_RXWIN_H

#include <linux/types.h>
#include "abi.h"

#include "inline.h"

enum xr_rxw_verdict {
	XR_RXW_NEW = 0, /* first time seen */
	XR_RXW_OLD = 1, /* already seen (duplicate) */
	XR_RXW_OOW = 2, /* beyond the window: the sender broke the protocol */
};

/* Population count without branches (the verifier then has one state to
 * follow, not one per bit pattern). */
XR_INLINE __u32 xr_popcount64(__u64 x)
{
	x = x - ((x >> 1) & 0x5555555555555555ULL);
	x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
	return (__u32)((x * 0x0101010101010101ULL) >> 56);
}

/* Number of consecutive one bits starting at bit 0: x ^ (x + 1) keeps the
 * trailing ones plus the zero above them. */
XR_INLINE __u32 xr_ones64(__u64 x)
{
	if (x == ~0ULL)
		return 64;
	return xr_popcount64(x ^ (x + 1)) - 1;
}

/* Hide a value's known range from the compiler so that a following mask
 * is kept: the verifier needs to see the mask to bound an array index. */
#define xr_barrier_var(v) asm volatile("" : "+r"(v))

/* Shift a 256-bit bitmap (word 0 holds bits 0..63) towards bit 0 by n.
 * Written with constant indexes only: the verifier then never has to
 * bound a computed index into the bitmap. */
XR_INLINE void xr_sack_shift(__u64 *s, __u32 n)
{
	__u64 a0 = s[0], a1 = s[1], a2 = s[2], a3 = s[3];
	__u32 b = n & 63;

	if (n >= XR_SACK_BITS) {
		s[0] = s[1] = s[2] = s[3] = 0;
		return;
	}
	switch (n >> 6) {
	case 0:
		break;
	case 1:
		a0 = a1; a1 = a2; a2 = a3; a3 = 0;
		break;
	case 2:
		a0 = a2; a1 = a3; a2 = 0; a3 = 0;
		break;
	default:
		a0 = a3; a1 = 0; a2 = 0; a3 = 0;
		break;
	}
	if (b) {
		a0 = (a0 >> b) | (a1 << (64 - b));
		a1 = (a1 >> b) | (a2 << (64 - b));
		a2 = (a2 >> b) | (a3 << (64 - b));
		a3 >>= b;
	}
	s[0] = a0;
	s[1] = a1;
	s[2] = a2;
	s[3] = a3;
}

/* Index (0..3) of the word of a 256-bit bitmap that holds bit.  The
 * barrier keeps the mask, which the verifier needs as the bound. */
XR_INLINE __u32 xr_sack_idx(__u32 bit)
{
	__u32 w = bit >> 6;

	xr_barrier_var(w);
	return w & 3;
}

/* Word of a 256-bit bitmap that holds bit. */
XR_INLINE __u64 *xr_sack_word(__u64 *s, __u32 bit)
{
	return &s[xr_sack_idx(bit)];
}

/* Bits set from bit 0 of the 256-bit bitmap, consecutively. */
XR_INLINE __u32 xr_sack_ones(const __u64 *s)
{
	__u32 n = 0, t, i;

#pragma clang loop unroll(full)
	for (i = 0; i < XR_SACK_WORDS; i++) {
		t = xr_ones64(s[i]);
		n += t;
		if (t < 64)
			break;
	}
	return n;
}

XR_INLINE int xr_sack_test(const __u64 *s, __u32 bit)
{
	return (s[xr_sack_idx(bit)] >> (bit & 63)) & 1;
}

/* PSN cack arrived: move cack past it and past every PSN after it that had
 * already arrived. */
XR_INLINE void xr_rxw_advance(struct xr_rx_path *p)
{
	__u32 n = xr_sack_ones(p->sack);

	p->cack += 1 + n;
	xr_sack_shift(p->sack, 1 + n);
}

/* The sender says every PSN before base is acknowledged or abandoned
 * (retransmitted elsewhere): treat them as done so the window moves on. */
XR_INLINE void xr_rxw_forward(struct xr_rx_path *p, __u32 base)
{
	__s32 d = xr_seq_diff(base, p->cack);
	int head;

	if (d <= 0)
		return;
	if (d > XR_SACK_BITS) {
		/* Even base itself lies beyond what the bitmap covers. */
		p->sack[0] = p->sack[1] = p->sack[2] = p->sack[3] = 0;
		p->cack = base;
		return;
	}
	head = xr_sack_test(p->sack, (__u32)d - 1); /* did PSN base arrive? */
	xr_sack_shift(p->sack, (__u32)d);
	p->cack = base;
	if (head)
		xr_rxw_advance(p);
}

/* Record the arrival of psn on a path. */
XR_INLINE int xr_rxw_accept(struct xr_rx_path *p, __u32 psn)
{
	__s32 d = xr_seq_diff(psn, p->cack);
	__u32 bit;

	if (d < 0)
		return XR_RXW_OLD;
	if (d > XR_SACK_BITS)
		return XR_RXW_OOW;
	if (d == 0) {
		xr_rxw_advance(p);
		return XR_RXW_NEW;
	}
	bit = (__u32)d - 1;
	if (xr_sack_test(p->sack, bit))
		return XR_RXW_OLD;
	*xr_sack_word(p->sack, bit) |= 1ULL << (bit & 63);
	return XR_RXW_NEW;
}

/* Has csn arrived already (without recording anything)? */
XR_INLINE int xr_csn_seen(struct xr_rx_state *st, __u32 csn)
{
	__s32 d = xr_seq_diff(csn, st->csn_next);
	__u32 idx, w;

	if (d < 0)
		return 1;
	if (d >= XR_CSN_WIN)
		return 0;
	idx = csn % XR_CSN_WIN;
	w = idx >> 6;
	xr_barrier_var(w);
	w &= XR_CSN_WIN / 64 - 1;
	return (st->csn_ring[w] >> (idx & 63)) & 1;
}

/* Record the arrival of csn on the connection: NEW means place it. */
XR_INLINE int xr_csn_accept(struct xr_rx_state *st, __u32 csn)
{
	__s32 d = xr_seq_diff(csn, st->csn_next);
	__u32 idx, w, b, t, i;
	__u64 word, mask;

	if (d < 0)
		return XR_RXW_OLD;
	if (d >= XR_CSN_WIN)
		return XR_RXW_OOW;
	idx = csn % XR_CSN_WIN;
	w = idx >> 6;
	xr_barrier_var(w);
	w &= XR_CSN_WIN / 64 - 1;
	if ((st->csn_ring[w] >> (idx & 63)) & 1)
		return XR_RXW_OLD;
	st->csn_ring[w] |= 1ULL << (idx & 63);

	/* Move csn_next over the run of arrived CSNs, clearing their bits so
	 * the ring can be reused one window later.  At most two words per
	 * packet keeps verification cheap; a longer run is consumed by the
	 * following packets.  The lag this allows is why senders may only
	 * use half the window (XR_CSN_SEND_WIN): a lagging csn_next then never
	 * refuses a CSN the sender is allowed to send. */
#pragma clang loop unroll(full)
	for (i = 0; i < 2; i++) {
		idx = st->csn_next % XR_CSN_WIN;
		w = idx >> 6;
		xr_barrier_var(w);
		w &= XR_CSN_WIN / 64 - 1;
		b = idx & 63;
		word = st->csn_ring[w] >> b;
		t = xr_ones64(word); /* at most 64 - b: top b bits are zero */
		if (t == 0)
			break;
		mask = t >= 64 ? ~0ULL : ((1ULL << t) - 1);
		st->csn_ring[w] &= ~(mask << b);
		st->csn_next += t;
		if (b + t < 64)
			break;
	}
	return XR_RXW_NEW;
}

#endif /* XR_CONTRACT_RXWIN_H */
