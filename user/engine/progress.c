// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The progress engine.  One round drains the event ring (ACK records and
 * message completions from XDP), recycles transmit frames, runs the
 * timers, transmits what the windows allow and delivers completions.
 * Rounds run inside the application's calls and, on a threaded device,
 * in a thread of the device's own, so a side that makes no calls (a READ
 * responder, a WRITE target) is still served and its timers still fire.
 */
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "acks.h"
#include "bind.h"
#include "cm.h"
#include "complete.h"
#include "ctrl.h"
#include "events.h"
#include "evq_wake.h"
#include "plane.h"
#include "planewatch.h"
#include "engine.h"
#include "progress.h"
#include "qp.h"
#include "sender.h"
#include "telem.h"
#include "trace.h"

#define XR_CTRL_POLL_NS 2000000ull /* control socket check while busy */
#define XR_TELEM_PERIOD_NS 10000000ull /* telemetry update (p99s cost) */
#define XR_WATCH_PERIOD_NS 100000000ull /* planes: attachment and MTU */
/* An application that computes between calls (filling its next buffer,
 * say) leaves the network unwatched; so does a process the host
 * deschedules.  A retransmission deadline that passed meanwhile proves
 * nothing: on a busy host the ACKs may not have been processed yet either
 * (the softirq that would deliver them is queued behind the application on
 * the same CPU), and a path's last packet before the absence asked for no
 * ACK if it was an even PSN (sender.c: the next packet on its path, which
 * the absent sender did not send, would have answered for it).  Expiring
 * then resends packets that arrived.  So after an absence longer than
 * XR_ABSENT_NS (half the default RTO floor of 1 ms, since such a timer
 * fires after an absence of about one RTO) the timers wait
 * XR_ABSENT_GRACE_NS more, watched, before they may fire.  A program that
 * is away between all its calls so has its timers held until it waits for
 * completions (asleep in xroce_wait_cq it watches); SACK still finds the
 * losses that later packets reveal.  (Letting the timers fire at every
 * other such call instead gave `xroce send` at MTU 9000, which computes
 * for ~1.7 ms between calls, ~500 spurious timeouts per 256 MiB.) */
#define XR_ABSENT_NS 500000ull
#define XR_ABSENT_GRACE_NS 1000000ull

/* The network went unwatched from `from` to `to`: hold the timers (see
 * XR_ABSENT_NS). */
static void note_absence(struct xroce_device *dev, uint64_t from, uint64_t to)
{
	if (!from || to - from <= XR_ABSENT_NS)
		return;
	/* Never earlier: the QPs' next timer runs (qp->timer_due) were
	 * reckoned with the hold in force. */
	if (to + XR_ABSENT_GRACE_NS > dev->timer_hold_ns)
		dev->timer_hold_ns = to + XR_ABSENT_GRACE_NS;
}

/* One QP's share of a round; lowers *next to its next deadline, sets
 * *busy if it could send right now. */
static void progress_qp(struct xroce_device *dev, struct xroce_qp *qp,
			uint64_t *next, bool *busy)
{
	uint64_t r;

	if (qp->bind) { /* the exchange of xroce_qp_bind */
		r = xr_bind_run(qp);
		if (r < *next)
			*next = r;
	}
	/* Each QP costs a few comparisons unless it has something to do:
	 * timers run when due (timer_due is reset to 0 whenever sending or an
	 * acknowledgement changes them), completion when something changed. */
	if (dev->now_ns >= qp->timer_due)
		qp->timer_due = xr_qp_timers(qp);
	if (xr_qp_has_tx_work(qp)) {
		xr_qp_transmit(qp);
		/* What went out has a retransmission deadline the timers have
		 * not seen yet (transmit reset timer_due): the wake-up returned
		 * must include it, or a lost packet on an otherwise idle QP
		 * waits for some unrelated event. */
		if (!qp->timer_due)
			qp->timer_due = xr_qp_timers(qp);
	}
	if (qp->timer_due < *next)
		*next = qp->timer_due;
	xr_qp_complete(qp);
	/* Busy only if the QP could send right now; a paced QP sleeps until
	 * its pacing time, a window-limited one until an ACK arrives on the
	 * event ring (which wakes the epoll wait). */
	r = xr_qp_tx_ready(qp, dev->now_ns);
	if (r == 0)
		*busy = true;
	else if (r < *next)
		*next = r;
}

/* Every QP's share of a round, starting one QP further each round: the
 * QPs early in the list must not take all of a plane's transmit room
 * every time (with four ib_send_bw QPs of 8 MiB messages the last one got
 * none for a second and failed its peer timeout). */
static void progress_qps(struct xroce_device *dev, uint64_t *next, bool *busy)
{
	struct xroce_qp *qp, *start;
	uint32_t n = 0, k;

	for (qp = dev->qps; qp; qp = qp->next)
		n++;
	if (!n)
		return;
	k = dev->qp_rr++ % n;
	for (start = dev->qps; k; k--)
		start = start->next;
	for (qp = start; qp; qp = qp->next)
		progress_qp(dev, qp, next, busy);
	for (qp = dev->qps; qp != start; qp = qp->next)
		progress_qp(dev, qp, next, busy);
}

/* Send what the QPs queued on each plane; true if an engine was busy. */
static bool kick_planes(struct xroce_device *dev)
{
	bool busy = false;
	int i;

	for (i = 0; i < dev->nplanes; i++) {
		struct xr_plane *pl = &dev->plane[i];

		if (!pl->need_kick)
			continue;
		pl->need_kick = false;
		if (dev->trace)
			xr_trace_kick(dev, i);
		if (xr_plane_kick(pl) == -EAGAIN)
			busy = true;
	}
	return busy;
}

/* A round run by the application may leave a deadline earlier than the
 * one the sleeping progress thread set itself (a packet just sent has a
 * retransmission timer): wake it so it sleeps again until then. */
static void wake_thread(struct xroce_device *dev, uint64_t next)
{
	uint64_t one = 1;

	if (!dev->threaded || !dev->sleep_until || next >= dev->sleep_until ||
	    pthread_equal(pthread_self(), dev->thread))
		return;
	dev->sleep_until = 0; /* one wake-up is enough */
	if (write(dev->wake_fd, &one, sizeof(one)) < 0)
		xr_log(&dev->log, XROCE_LOG_DEBUG, "cannot wake the progress thread");
}

uint64_t xr_progress(struct xroce_device *dev)
{
	uint64_t next = UINT64_MAX;
	struct xroce_qp *qp;
	bool busy = false;
	int i;

	/* The drain reads the clock the round's timers use: an absence is
	 * measured to it, so that one while the round starts counts too. */
	xr_events_drain(dev);
	note_absence(dev, dev->seen_ns, dev->now_ns);
	if (dev->trace)
		xr_trace_drain_xdp(dev);
	for (i = 0; i < dev->nplanes; i++)
		xr_plane_reap(&dev->plane[i]);
	if (dev->now_ns >= dev->ctrl_next_ns) {
		xr_ctrl_service(dev);
		if (dev->nlisten || dev->nconnecting || dev->npending)
			xr_cm_service(dev);
		dev->ctrl_next_ns = dev->now_ns + XR_CTRL_POLL_NS;
	}
	if (dev->now_ns >= dev->watch_next_ns) {
		xr_planes_watch(dev);
		dev->watch_next_ns = dev->now_ns + XR_WATCH_PERIOD_NS;
	}
	if (dev->now_ns >= dev->telem_next_ns) {
		for (qp = dev->qps; qp; qp = qp->next)
			xr_telem_publish(qp);
		xr_telem_publish_dev(dev);
		dev->telem_next_ns = dev->now_ns + XR_TELEM_PERIOD_NS;
	}
	progress_qps(dev, &next, &busy);
	if (kick_planes(dev))
		busy = true;
	/* A round is watching only until it sends: one held up in a system
	 * call (a test-run transmission preempted on a busy host) left what it
	 * sent without the packets that would have answered for it. */
	dev->seen_ns = xr_now_ns();
	note_absence(dev, dev->now_ns, dev->seen_ns);
	if (busy || next <= dev->now_ns)
		next = 0;
	else if (dev->ctrl_next_ns < next)
		next = dev->ctrl_next_ns; /* connection requests too */
	wake_thread(dev, next);
	return next;
}

void xr_progress_sleep(struct xroce_device *dev, uint64_t until_ns)
{
	uint64_t now = xr_now_ns();
	struct epoll_event ev[4];
	struct timespec ts;

	if (until_ns <= now)
		return;
	ts.tv_sec = (time_t)((until_ns - now) / 1000000000ull);
	ts.tv_nsec = (long)((until_ns - now) % 1000000000ull);
	/* Records came while XDP thought nobody slept: take them first. */
	if (!xr_evq_wake_sleep_begin(dev))
		return;
	pthread_mutex_unlock(&dev->lock);
	epoll_pwait2(dev->epfd, ev, 4, &ts, NULL);
	pthread_mutex_lock(&dev->lock);
	xr_evq_wake_sleep_end(dev);
	/* Asleep here, we were watching: wake-ups are due to events or to our
	 * own deadlines, not an absence. */
	dev->seen_ns = xr_now_ns();
}

/* An application that busy-polls a CQ runs a round at every poll; the
 * thread waking for every event too only takes the CPU from it (on two
 * cores, ib_send_lat's one-way time went from 18 to 35 us).  So after
 * XR_BUSY_POLLS polls in a row, the thread stands by, asleep, until the
 * polls stop (none for XR_POLL_IDLE_NS) or the application is about to
 * sleep (xr_progress_no_standby: it arms a CQ or waits).  The few polls an
 * event-driven program makes before it arms and sleeps do not count.
 * Polls that found something count too: ib_write_bw, 128 WRITEs in
 * flight, finds completions at nearly every poll, and when only empty
 * ones counted its thread never stood by but woke for ACK records into
 * the poller's lock (27,000-30,000 futex calls a second in about half
 * its runs). */
#define XR_BUSY_POLLS 8
#define XR_POLL_IDLE_NS 1000000ull

void xr_progress_note_poll(struct xroce_device *dev)
{
	if (!dev->threaded)
		return;
	__atomic_store_n(&dev->poll_ns, xr_now_ns(), __ATOMIC_RELAXED);
	if (dev->busy_polls < UINT32_MAX)
		__atomic_store_n(&dev->busy_polls, dev->busy_polls + 1,
				 __ATOMIC_RELAXED);
}

void xr_progress_no_standby(struct xroce_device *dev)
{
	if (!__atomic_load_n(&dev->busy_polls, __ATOMIC_RELAXED))
		return;
	/* Cleared before the standby lock is taken: a thread that looks
	 * after we signal, under that lock, sees it. */
	__atomic_store_n(&dev->busy_polls, 0, __ATOMIC_RELAXED);
	pthread_mutex_lock(&dev->standby_lock);
	pthread_cond_signal(&dev->standby);
	pthread_mutex_unlock(&dev->standby_lock);
}

/* A poller is at work and the thread should keep standing by; until: when
 * it stops being one if no poll comes meanwhile. */
static bool poller_active(struct xroce_device *dev, uint64_t *until)
{
	*until = __atomic_load_n(&dev->poll_ns, __ATOMIC_RELAXED) + XR_POLL_IDLE_NS;
	return __atomic_load_n(&dev->busy_polls, __ATOMIC_RELAXED) >= XR_BUSY_POLLS &&
	       !__atomic_load_n(&dev->stopping, __ATOMIC_RELAXED) &&
	       xr_now_ns() < *until;
}

/* Stand by while a poller is at work, and without the device lock: a
 * timed wait on `lock` retakes it every time it ends, so the thread queued
 * behind the poller's rounds once a millisecond, and the two convoyed: each
 * retry cost the poller a futex wake-up on its unlock and the thread a
 * sleep (about 3000 futex calls a second in each fi_pingpong of a 1 MiB
 * rdm ping-pong through ofi_rxm).  Called and returns with `lock` held. */
static bool stand_by(struct xroce_device *dev)
{
	struct timespec ts;
	uint64_t until;

	if (!poller_active(dev, &until))
		return false;
	pthread_mutex_unlock(&dev->lock);
	pthread_mutex_lock(&dev->standby_lock);
	while (poller_active(dev, &until)) {
		ts.tv_sec = (time_t)(until / 1000000000ull);
		ts.tv_nsec = (long)(until % 1000000000ull);
		pthread_cond_timedwait(&dev->standby, &dev->standby_lock, &ts);
	}
	pthread_mutex_unlock(&dev->standby_lock);
	pthread_mutex_lock(&dev->lock);
	return true;
}

static void *progress_main(void *arg)
{
	struct xroce_device *dev = arg;

	pthread_mutex_lock(&dev->lock);
	while (!dev->stopping) {
		uint64_t next, v;

		if (stand_by(dev))
			continue;
		next = xr_progress(dev);

		if (next) {
			dev->sleep_until = next;
			xr_progress_sleep(dev, next);
			dev->sleep_until = 0;
			if (read(dev->wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
				xr_log(&dev->log, XROCE_LOG_DEBUG, "wake-up: %s",
				       strerror(errno));
			continue;
		}
		/* More to send right now: let the application's threads at
		 * the lock between rounds. */
		pthread_mutex_unlock(&dev->lock);
		sched_yield();
		pthread_mutex_lock(&dev->lock);
	}
	pthread_mutex_unlock(&dev->lock);
	return NULL;
}

int xr_progress_thread_start(struct xroce_device *dev)
{
	struct epoll_event ev = { .events = EPOLLIN };
	pthread_condattr_t ca;
	int rc;

	rc = pthread_condattr_init(&ca);
	if (!rc) {
		rc = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		if (!rc)
			rc = pthread_cond_init(&dev->standby, &ca);
		pthread_condattr_destroy(&ca);
	}
	if (rc)
		return xr_fail(&dev->log, -rc, "pthread_cond_init: %s", strerror(rc));
	rc = pthread_mutex_init(&dev->standby_lock, NULL);
	if (rc) {
		pthread_cond_destroy(&dev->standby);
		return xr_fail(&dev->log, -rc, "pthread_mutex_init: %s", strerror(rc));
	}

	dev->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (dev->wake_fd < 0)
		return xr_fail(&dev->log, -errno, "eventfd: %s", strerror(errno));
	ev.data.u32 = 2;
	if (epoll_ctl(dev->epfd, EPOLL_CTL_ADD, dev->wake_fd, &ev))
		return xr_fail(&dev->log, -errno, "epoll_ctl: %s", strerror(errno));
	rc = pthread_create(&dev->thread, NULL, progress_main, dev);
	if (rc)
		return xr_fail(&dev->log, -rc, "cannot start the progress thread: %s",
			       strerror(rc));
	dev->threaded = true;
	return 0;
}

void xr_progress_thread_stop(struct xroce_device *dev)
{
	uint64_t one = 1;

	if (!dev->threaded)
		return;
	__atomic_store_n(&dev->stopping, true, __ATOMIC_RELAXED);
	pthread_mutex_lock(&dev->standby_lock);
	pthread_cond_signal(&dev->standby);
	pthread_mutex_unlock(&dev->standby_lock);
	if (write(dev->wake_fd, &one, sizeof(one)) < 0)
		xr_log(&dev->log, XROCE_LOG_WARN, "cannot wake the progress thread");
	pthread_mutex_unlock(&dev->lock);
	pthread_join(dev->thread, NULL);
	pthread_mutex_lock(&dev->lock);
	dev->threaded = false;
	dev->busy_polls = 0;
	pthread_cond_destroy(&dev->standby);
	pthread_mutex_destroy(&dev->standby_lock);
}

int xr_progress_once(struct xroce_device *dev)
{
	xr_progress(dev);
	return 0;
}
