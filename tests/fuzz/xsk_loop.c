// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The AF_XDP socket of user/xsk.h, replaced for the fuzzers by a transmit
 * engine that stays in the process: a pushed frame is checked (inside one
 * UMEM frame, not already in flight), handed to the harness (sim.on_tx),
 * and completed at the next kick unless the harness stalls the "NIC"
 * (xsk_loop_stall), so the library's frame accounting is exercised with
 * full rings too.  Same ring limits as the real one: tx_size descriptors
 * pushed and not yet reaped.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "xsk.h"
#include "xsk_loop.h"

#define RING 2048u
#define FRAMES_MAX (1u << 16)

struct xr_xsk {
	uint8_t *umem;
	size_t umem_len;
	uint32_t size;                 /* descriptors in flight at most */
	uint64_t pushed[RING];         /* ring of pushed, not completed */
	uint32_t push_head, push_tail; /* [head, tail): pushed, not sent */
	uint64_t done[RING];           /* completed, not reaped */
	uint32_t done_head, done_tail;
	uint8_t *busy;                 /* per frame: pushed and not reaped */
	bool stalled;
	struct xr_xsk_stats st;
};

int xr_xsk_create(struct xr_xsk **out, int ifindex, int queue, void *umem,
		  size_t umem_len, const struct xr_xsk_opts *opts)
{
	struct xr_xsk *x;

	(void)ifindex;
	(void)queue;
	if (!umem || !umem_len || umem_len % XR_XSK_FRAME_SIZE ||
	    umem_len / XR_XSK_FRAME_SIZE > FRAMES_MAX)
		return -EINVAL;
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->busy = calloc(umem_len / XR_XSK_FRAME_SIZE, 1);
	if (!x->busy) {
		free(x);
		return -ENOMEM;
	}
	x->umem = umem;
	x->umem_len = umem_len;
	x->size = opts && opts->tx_size ? opts->tx_size : RING;
	if (x->size > RING)
		x->size = RING;
	*out = x;
	return 0;
}

void xr_xsk_destroy(struct xr_xsk *x)
{
	if (!x)
		return;
	free(x->busy);
	free(x);
}

int xr_xsk_fd(const struct xr_xsk *x)
{
	(void)x;
	return -1;
}

bool xr_xsk_zerocopy(const struct xr_xsk *x)
{
	(void)x;
	return false;
}

bool xr_xsk_sg(const struct xr_xsk *x)
{
	(void)x;
	return false;
}

bool xr_xsk_tx_budget_set(const struct xr_xsk *x)
{
	(void)x;
	return false;
}

static uint32_t in_flight(const struct xr_xsk *x)
{
	return (x->push_tail - x->push_head) + (x->done_tail - x->done_head);
}

uint32_t xr_xsk_tx_free_slots(struct xr_xsk *x)
{
	return x->size - in_flight(x);
}

uint32_t xr_xsk_outstanding(const struct xr_xsk *x)
{
	return in_flight(x);
}

uint32_t xr_xsk_tx_queued(struct xr_xsk *x)
{
	return x->push_tail - x->push_head;
}

int xr_xsk_tx_push(struct xr_xsk *x, uint64_t addr, uint32_t len)
{
	uint64_t f = addr / XR_XSK_FRAME_SIZE;

	SIM_CHECK(len > 0 && addr < x->umem_len && len <= x->umem_len - addr &&
		  (addr + len - 1) / XR_XSK_FRAME_SIZE == f,
		  "descriptor [%#llx, +%u) outside one frame of a %zu-byte UMEM",
		  (unsigned long long)addr, len, x->umem_len);
	SIM_CHECK(!x->busy[f], "frame %llu pushed while still in flight",
		  (unsigned long long)f);
	if (!xr_xsk_tx_free_slots(x)) {
		x->st.ring_full++;
		return -ENOSPC;
	}
	x->busy[f] = 1;
	x->pushed[x->push_tail++ % RING] = addr;
	x->st.tx_pkts++;
	x->st.tx_descs++;
	x->st.tx_bytes += len;
	/* The frame is complete once pushed: this is the moment the NIC may
	 * read it, so that is what the harness sees. */
	if (sim.on_tx)
		sim.on_tx(sim.on_tx_arg, x, x->umem + addr, len);
	return 0;
}

int xr_xsk_tx_push_sg(struct xr_xsk *x, const struct xr_xsk_seg *segs,
		      int nsegs)
{
	if (nsegs == 1)
		return xr_xsk_tx_push(x, segs[0].addr, segs[0].len);
	return -EOPNOTSUPP; /* no multi-buffer here, like a no_sg socket */
}

int xr_xsk_tx_push_hdr_payload(struct xr_xsk *x, uint64_t hdr_addr,
			       uint32_t hdr_len, uint64_t pay_addr,
			       uint32_t pay_len)
{
	(void)x;
	(void)hdr_addr;
	(void)hdr_len;
	(void)pay_addr;
	(void)pay_len;
	return -EOPNOTSUPP;
}

int xr_xsk_tx_kick(struct xr_xsk *x)
{
	x->st.kicks++;
	if (x->stalled) {
		x->st.eagain++;
		return x->push_tail != x->push_head ? -EAGAIN : 0;
	}
	while (x->push_head != x->push_tail)
		x->done[x->done_tail++ % RING] = x->pushed[x->push_head++ % RING];
	return 0;
}

int xr_xsk_reap(struct xr_xsk *x, uint64_t *addrs, int max)
{
	int n = 0;

	while (n < max && x->done_head != x->done_tail) {
		uint64_t a = x->done[x->done_head++ % RING];

		x->busy[a / XR_XSK_FRAME_SIZE] = 0;
		addrs[n++] = a;
	}
	x->st.completed += (uint64_t)n;
	return n;
}

int xr_xsk_fill(struct xr_xsk *x, const uint64_t *addrs, int n)
{
	(void)x;
	(void)addrs;
	(void)n;
	return 0;
}

int xr_xsk_get_stats(const struct xr_xsk *x, struct xr_xsk_stats *out)
{
	*out = x->st;
	return 0;
}

void xsk_loop_stall(struct xr_xsk *x, bool stalled)
{
	x->stalled = stalled;
}

void xsk_loop_flush(struct xr_xsk *x)
{
	bool s = x->stalled;

	x->stalled = false;
	xr_xsk_tx_kick(x);
	x->stalled = s;
}

uint32_t xsk_loop_in_flight(const struct xr_xsk *x)
{
	return in_flight(x);
}
