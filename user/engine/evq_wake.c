// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Whether a record XDP puts into the device's event ring wakes anyone.
 *
 * A ring-buffer commit that may wake a reader queues irq_work, and that is
 * an inter-processor interrupt per record whenever the reader keeps up
 * (it always does when it polls).  On these virtual machines the
 * interrupt cost more than the rest of a small message's round trip.  So
 * while no thread of the device sleeps on the ring, every connection's
 * xr_evb.quiet is 1 and XDP commits with BPF_RB_NO_WAKEUP; whoever then
 * calls in (a poll, a progress round) finds the records without one.
 *
 * Before a thread sleeps: quiet goes to 0 on every connection, a full
 * fence, then one more look at the ring's producer position.  XDP
 * reserves the record (moving that position), makes a full-barrier read
 * of quiet, then commits.  Either XDP saw 0 and its commit may wake (the
 * kernel wakes when the reader had caught up), or the look saw the
 * record and the thread does not sleep.  A device whose descriptor the
 * application took (xroce_device_fd: it may sleep in its own poll) keeps
 * every wake-up.  All of this runs under dev->lock.
 */
#include <errno.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <unistd.h>

#include "evq_wake.h"
#include "qp.h"

static void set_conn(struct xroce_device *dev, uint32_t conn_id, bool quiet)
{
	if (dev->evb && conn_id && conn_id < dev->evb_n)
		__atomic_store_n(&dev->evb[conn_id].quiet, quiet ? 1u : 0u,
				 __ATOMIC_RELAXED);
}

/* Bring every connection's flag to what the device's state says: quiet
 * only with the positions mapped, nobody asleep and the descriptor kept. */
static void apply(struct xroce_device *dev)
{
	bool quiet = dev->evq_cons && !dev->evq_sleepers && !dev->fd_exported;
	struct xroce_qp *qp;

	if (dev->evq_quiet == quiet)
		return;
	dev->evq_quiet = quiet;
	for (qp = dev->qps; qp; qp = qp->next)
		set_conn(dev, qp->conn_id, quiet);
}

/* The ring's consumer and producer positions: its first two pages. */
int xr_evq_wake_map(struct xroce_device *dev)
{
	long pg = sysconf(_SC_PAGESIZE);
	void *c, *p;

	/* Without xr_evb mapped the flags cannot be written: always wake. */
	if (!dev->evb) {
		errno = ENOENT;
		return -1;
	}
	c = mmap(NULL, (size_t)pg, PROT_READ, MAP_SHARED, dev->evq_fd, 0);
	if (c == MAP_FAILED)
		return -1;
	p = mmap(NULL, (size_t)pg, PROT_READ, MAP_SHARED, dev->evq_fd, pg);
	if (p == MAP_FAILED) {
		munmap(c, (size_t)pg);
		return -1;
	}
	dev->evq_cons = c;
	dev->evq_prod = p;
	apply(dev);
	return 0;
}

void xr_evq_wake_unmap(struct xroce_device *dev)
{
	long pg = sysconf(_SC_PAGESIZE);

	if (dev->evq_cons)
		munmap((void *)dev->evq_cons, (size_t)pg);
	if (dev->evq_prod)
		munmap((void *)dev->evq_prod, (size_t)pg);
	dev->evq_cons = dev->evq_prod = NULL;
	apply(dev); /* every record wakes again */
}

void xr_evq_wake_conn(struct xroce_device *dev, uint32_t conn_id)
{
	set_conn(dev, conn_id, dev->evq_quiet);
}

void xr_evq_wake_release(struct xroce_device *dev, uint32_t conn_id)
{
	set_conn(dev, conn_id, false);
}

bool xr_evq_wake_sleep_begin(struct xroce_device *dev)
{
	unsigned long prod, cons;

	dev->evq_sleepers++;
	if (!dev->evq_cons)
		return true; /* never quiet: every record wakes */
	apply(dev);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	prod = __atomic_load_n(dev->evq_prod, __ATOMIC_ACQUIRE);
	cons = __atomic_load_n(dev->evq_cons, __ATOMIC_ACQUIRE);
	if (prod == cons)
		return true;
	xr_evq_wake_sleep_end(dev);
	return false;
}

void xr_evq_wake_sleep_end(struct xroce_device *dev)
{
	if (dev->evq_sleepers)
		dev->evq_sleepers--;
	apply(dev);
}

void xr_evq_wake_always(struct xroce_device *dev)
{
	dev->fd_exported = true;
	apply(dev);
}
