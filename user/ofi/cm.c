// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Connection management over libxroce's connection set-up without
 * blocking.  fi_connect starts a connect (xroce_connect_start, CM data as
 * private data: 60 bytes, ofi_rxm needs 24); fi_accept answers the request
 * an endpoint was made from (xroce_accept_conn_req: the QP is connected on
 * return, so FI_CONNECTED is queued at once); fi_reject refuses it with
 * data.  The progress below, run by EQ reads and by a thread every 10 ms,
 * turns requests into FI_CONNREQ on the listening endpoint's EQ, answered
 * connects into FI_CONNECTED or an error (FI_ECONNREFUSED with the reject
 * data), and a QP gone to the error state (peer closed, peer silent) into
 * FI_SHUTDOWN.
 *
 * Locks: the CM lock guards the lists and requests; an endpoint's lock
 * may be held when taking it, never the other way round (the progress
 * changes endpoint states with atomic stores).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ofi.h"

static pthread_mutex_t cm_lock = PTHREAD_MUTEX_INITIALIZER;
static struct xrf_pep *cm_peps;
static struct xrf_ep *cm_eps;

static pthread_mutex_t thr_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t thr_cond = PTHREAD_COND_INITIALIZER;
static pthread_t thr;
static int thr_users;
static bool thr_stop;

static enum xrf_ep_state state_of(const struct xrf_ep *ep)
{
	return __atomic_load_n(&ep->state, __ATOMIC_ACQUIRE);
}

static void set_state(struct xrf_ep *ep, enum xrf_ep_state s)
{
	__atomic_store_n(&ep->state, s, __ATOMIC_RELEASE);
}

/* ---- requests ---------------------------------------------------------- */
static int connreq_close(struct fid *fid)
{
	return 0; /* its passive endpoint frees it */
}

static struct fi_ops connreq_ops = {
	.size = sizeof(struct fi_ops),
	.close = connreq_close,
	.bind = xrf_no_bind,
	.control = xrf_no_control,
	.ops_open = xrf_no_ops_open,
	.tostr = xrf_no_tostr,
	.ops_set = xrf_no_ops_set,
};

void xrf_connreq_hold(struct xrf_connreq *cr)
{
	pthread_mutex_lock(&cm_lock);
	cr->refs++;
	pthread_mutex_unlock(&cm_lock);
}

static void release_locked(struct xrf_connreq *cr, bool reject)
{
	if (reject && !cr->answered) {
		xroce_reject_conn_req(cr->xd->dev, &cr->req, NULL, 0);
		cr->answered = true;
	}
	if (--cr->refs == 0)
		free(cr);
}

void xrf_connreq_release(struct xrf_connreq *cr, bool reject)
{
	pthread_mutex_lock(&cm_lock);
	release_locked(cr, reject);
	pthread_mutex_unlock(&cm_lock);
}

void xrf_cm_pep_release_reqs(struct xrf_pep *pep)
{
	pthread_mutex_lock(&cm_lock);
	while (pep->reqs) {
		struct xrf_connreq *cr = pep->reqs;

		pep->reqs = cr->next;
		release_locked(cr, true);
	}
	pthread_mutex_unlock(&cm_lock);
}

int xrf_cm_reject(struct fid_pep *pep, fid_t handle, const void *param,
		  size_t paramlen)
{
	struct xrf_connreq *cr = (struct xrf_connreq *)handle;
	int rc;

	if (!pep || !handle || handle->fclass != FI_CLASS_CONNREQ ||
	    paramlen > XROCE_PRIVATE_DATA_MAX || (paramlen && !param))
		return -FI_EINVAL;
	pthread_mutex_lock(&cm_lock);
	if (cr->answered) {
		pthread_mutex_unlock(&cm_lock);
		return -FI_EINVAL;
	}
	rc = xroce_reject_conn_req(cr->xd->dev, &cr->req, param, paramlen);
	cr->answered = true;
	pthread_mutex_unlock(&cm_lock);
	return rc;
}

/* A request for pep: FI_CONNREQ with an fi_info naming it. */
static void report_request(struct xrf_pep *pep, const struct xroce_conn_req *req)
{
	struct xrf_connreq *cr = calloc(1, sizeof(*cr));
	struct fi_info *info = fi_dupinfo(pep->info);
	union xrf_sa peer;

	if (!cr || !info || !(info->dest_addr = malloc(sizeof(peer)))) {
		xroce_reject_conn_req(pep->xd->dev, req, NULL, 0);
		free(cr);
		fi_freeinfo(info);
		return;
	}
	cr->fid.fclass = FI_CLASS_CONNREQ;
	cr->fid.ops = &connreq_ops;
	cr->xd = pep->xd;
	cr->req = *req;
	cr->refs = 1;
	cr->next = pep->reqs;
	pep->reqs = cr;
	xrf_sa_from16(&peer, req->peer_addr, req->peer_port, req->family);
	info->dest_addrlen = req->family == AF_INET6 ? sizeof(peer.in6) : sizeof(peer.in);
	memcpy(info->dest_addr, &peer, info->dest_addrlen);
	info->handle = &cr->fid;
	if (xrf_eq_push_cm(pep->eq, FI_CONNREQ, &pep->pep_fid.fid, info,
			   req->private_data, req->private_data_len)) {
		fi_freeinfo(info);
		xroce_reject_conn_req(pep->xd->dev, req, NULL, 0);
		cr->answered = true;
	}
}

/* A request taken from a device, to be reported once the endpoints have
 * been looked at (see xrf_cm_progress). */
struct taken_req {
	struct xrf_pep *pep; /* NULL: nobody listens on its port */
	struct xrf_dev *xd; /* the device it came from */
	struct xroce_conn_req req;
};

#define XRF_REQS_PER_ROUND 16

/* Requests waiting at pep's device, each paired with the endpoint
 * listening on its port (none: refused when reported).  At most room of
 * them; the rest wait in the library for the next round. */
static size_t take_requests(struct xrf_pep *first, struct taken_req *t, size_t room)
{
	struct xrf_pep *p;
	size_t n = 0;

	while (n < room && !xroce_get_conn_req(first->xd->dev, &t[n].req)) {
		for (p = cm_peps; p; p = p->cm_next)
			if (p->xd == first->xd && p->listening &&
			    xrf_sa_port(&p->addr) == t[n].req.port)
				break;
		t[n].pep = p;
		t[n].xd = first->xd;
		n++;
	}
	return n;
}

/* ---- endpoints ------------------------------------------------------------ */
static void poll_connecting(struct xrf_ep *ep)
{
	uint8_t data[XROCE_PRIVATE_DATA_MAX];
	int rc = xroce_connect_poll(ep->qp), n;

	if (rc == -EINPROGRESS)
		return;
	n = xroce_get_private_data(ep->qp, data, sizeof(data));
	if (n < 0)
		n = 0;
	if (!rc) {
		set_state(ep, XRF_EP_CONNECTED);
		xrf_eq_push_cm(ep->eq, FI_CONNECTED, &ep->ep_fid.fid, NULL, data,
			       (size_t)n);
		return;
	}
	ep->shutdown_reported = true;
	set_state(ep, XRF_EP_SHUTDOWN);
	xrf_eq_push_err(ep->eq, &ep->ep_fid.fid, -rc, -rc,
			rc == -ECONNREFUSED ? data : NULL,
			rc == -ECONNREFUSED ? (size_t)n : 0);
}

static void poll_ep(struct xrf_ep *ep)
{
	enum xroce_qp_state qs;

	switch (state_of(ep)) {
	case XRF_EP_CONNECTING:
		poll_connecting(ep);
		return;
	case XRF_EP_CONNECTED:
		qs = xroce_qp_state(ep->qp);
		if (qs != XROCE_QPS_ERR && qs != XROCE_QPS_CLOSED)
			return;
		set_state(ep, XRF_EP_SHUTDOWN);
		if (!ep->shutdown_reported) {
			ep->shutdown_reported = true;
			xrf_eq_push_cm(ep->eq, FI_SHUTDOWN, &ep->ep_fid.fid, NULL,
				       NULL, 0);
		}
		return;
	default:
		return;
	}
}

void xrf_cm_progress(void)
{
	struct taken_req t[XRF_REQS_PER_ROUND];
	struct xrf_pep *p, *q;
	struct xrf_ep *ep;
	size_t n = 0, i;

	/* Someone else is at it: that is progress enough. */
	if (pthread_mutex_trylock(&cm_lock))
		return;
	/* Take the requests first and report them last: taking them reads
	 * the device's control messages, which may also end a connection (a
	 * peer's CLOSE).  A peer closes one connection before asking for the
	 * next, so its FI_SHUTDOWN must come before the FI_CONNREQ. */
	for (p = cm_peps; p; p = p->cm_next) {
		for (q = cm_peps; q != p && q->xd != p->xd; q = q->cm_next)
			;
		if (q == p) /* the first listener of its device */
			n += take_requests(p, t + n, XRF_REQS_PER_ROUND - n);
	}
	for (ep = cm_eps; ep; ep = ep->cm_next)
		poll_ep(ep);
	for (i = 0; i < n; i++) {
		if (t[i].pep)
			report_request(t[i].pep, &t[i].req);
		else
			xroce_reject_conn_req(t[i].xd->dev, &t[i].req, NULL, 0);
	}
	pthread_mutex_unlock(&cm_lock);
}

void xrf_cm_add_pep(struct xrf_pep *pep)
{
	pthread_mutex_lock(&cm_lock);
	pep->cm_next = cm_peps;
	cm_peps = pep;
	pthread_mutex_unlock(&cm_lock);
}

void xrf_cm_del_pep(struct xrf_pep *pep)
{
	struct xrf_pep **pp;

	pthread_mutex_lock(&cm_lock);
	for (pp = &cm_peps; *pp && *pp != pep; pp = &(*pp)->cm_next)
		;
	if (*pp)
		*pp = pep->cm_next;
	pthread_mutex_unlock(&cm_lock);
}

void xrf_cm_add_ep(struct xrf_ep *ep)
{
	pthread_mutex_lock(&cm_lock);
	if (!ep->on_cm) {
		ep->cm_next = cm_eps;
		cm_eps = ep;
		ep->on_cm = true;
	}
	pthread_mutex_unlock(&cm_lock);
}

void xrf_cm_del_ep(struct xrf_ep *ep)
{
	struct xrf_ep **pp;

	pthread_mutex_lock(&cm_lock);
	for (pp = &cm_eps; *pp && *pp != ep; pp = &(*pp)->cm_next)
		;
	if (*pp)
		*pp = ep->cm_next;
	ep->on_cm = false;
	pthread_mutex_unlock(&cm_lock);
}

/* ---- the thread --------------------------------------------------------- */
static void *cm_main(void *arg)
{
	struct timespec ts;

	pthread_mutex_lock(&thr_lock);
	while (!thr_stop) {
		pthread_mutex_unlock(&thr_lock);
		xrf_cm_progress();
		pthread_mutex_lock(&thr_lock);
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 10 * 1000 * 1000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		if (!thr_stop)
			pthread_cond_timedwait(&thr_cond, &thr_lock, &ts);
	}
	pthread_mutex_unlock(&thr_lock);
	return NULL;
}

int xrf_cm_thread_get(void)
{
	int rc = 0;

	pthread_mutex_lock(&thr_lock);
	if (thr_users++ == 0) {
		thr_stop = false;
		if (pthread_create(&thr, NULL, cm_main, NULL)) {
			thr_users--;
			rc = -FI_ENOMEM;
		}
	}
	pthread_mutex_unlock(&thr_lock);
	return rc;
}

void xrf_cm_thread_put(void)
{
	bool join;

	pthread_mutex_lock(&thr_lock);
	join = --thr_users == 0;
	if (join) {
		thr_stop = true;
		pthread_cond_signal(&thr_cond);
	}
	pthread_mutex_unlock(&thr_lock);
	if (join)
		pthread_join(thr, NULL);
}

/* ---- endpoint calls ------------------------------------------------------- */
static int ep_connect(struct fid_ep *ep_fid, const void *addr, const void *param,
		      size_t paramlen)
{
	struct xrf_ep *ep = (struct xrf_ep *)ep_fid;
	char host[INET6_ADDRSTRLEN];
	size_t alen;
	int rc;

	if (paramlen > XROCE_PRIVATE_DATA_MAX || (paramlen && !param))
		return -FI_EINVAL;
	pthread_mutex_lock(&ep->lock);
	if (state_of(ep) != XRF_EP_IDLE || ep->connreq) {
		pthread_mutex_unlock(&ep->lock);
		return -FI_EISCONN;
	}
	alen = addr ? xrf_sa_len(addr, sizeof(union xrf_sa)) : 0;
	if (addr && !alen) {
		pthread_mutex_unlock(&ep->lock);
		return -FI_EINVAL;
	}
	if (alen)
		memcpy(&ep->peer, addr, alen);
	rc = xrf_sa_host(&ep->peer, host, sizeof(host));
	if (!rc && !xrf_sa_port(&ep->peer))
		rc = -FI_EINVAL;
	if (!rc)
		rc = xrf_ep_enable(ep);
	if (!rc)
		rc = xroce_set_private_data(ep->qp, param, paramlen);
	if (!rc)
		rc = xroce_connect_start(ep->qp, host, xrf_sa_port(&ep->peer),
					 xrf_params.cm_timeout_ms);
	if (!rc)
		set_state(ep, XRF_EP_CONNECTING);
	pthread_mutex_unlock(&ep->lock);
	if (!rc)
		xrf_cm_add_ep(ep);
	return rc;
}

static int answer(struct xrf_ep *ep)
{
	struct xrf_connreq *cr = ep->connreq;
	int rc;

	pthread_mutex_lock(&cm_lock);
	if (cr->answered) {
		pthread_mutex_unlock(&cm_lock);
		return -FI_EINVAL;
	}
	rc = xroce_accept_conn_req(ep->qp, &cr->req);
	cr->answered = true;
	pthread_mutex_unlock(&cm_lock);
	if (!rc)
		xrf_sa_from16(&ep->peer, cr->req.peer_addr, cr->req.peer_port,
			      cr->req.family);
	return rc;
}

static int ep_accept(struct fid_ep *ep_fid, const void *param, size_t paramlen)
{
	struct xrf_ep *ep = (struct xrf_ep *)ep_fid;
	int rc;

	if (paramlen > XROCE_PRIVATE_DATA_MAX || (paramlen && !param))
		return -FI_EINVAL;
	pthread_mutex_lock(&ep->lock);
	if (!ep->connreq) {
		pthread_mutex_unlock(&ep->lock);
		return -FI_EINVAL; /* not made from an FI_CONNREQ */
	}
	if (state_of(ep) != XRF_EP_IDLE) {
		pthread_mutex_unlock(&ep->lock);
		return -FI_EISCONN;
	}
	rc = xrf_ep_enable(ep);
	if (!rc)
		rc = xroce_set_private_data(ep->qp, param, paramlen);
	if (!rc)
		rc = answer(ep);
	if (!rc)
		set_state(ep, XRF_EP_CONNECTED);
	pthread_mutex_unlock(&ep->lock);
	if (rc)
		return rc;
	xrf_eq_push_cm(ep->eq, FI_CONNECTED, &ep->ep_fid.fid, NULL, NULL, 0);
	xrf_cm_add_ep(ep);
	return 0;
}

static int ep_shutdown(struct fid_ep *ep_fid, uint64_t flags)
{
	struct xrf_ep *ep = (struct xrf_ep *)ep_fid;
	bool report;

	if (flags)
		return -FI_EBADFLAGS;
	pthread_mutex_lock(&ep->lock);
	if (state_of(ep) != XRF_EP_CONNECTED && state_of(ep) != XRF_EP_SHUTDOWN) {
		pthread_mutex_unlock(&ep->lock);
		return -FI_ENOTCONN;
	}
	xrf_cm_del_ep(ep);
	set_state(ep, XRF_EP_SHUTDOWN);
	/* Destroying the QP tells the peer (CLOSE) and cancels what is
	 * outstanding here (FI_ECANCELED completions). */
	if (ep->qp)
		xroce_destroy_qp(ep->qp);
	ep->qp = NULL;
	report = !ep->shutdown_reported;
	ep->shutdown_reported = true;
	pthread_mutex_unlock(&ep->lock);
	if (report)
		xrf_eq_push_cm(ep->eq, FI_SHUTDOWN, &ep->ep_fid.fid, NULL, NULL, 0);
	return 0;
}

static int ep_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct xrf_ep *ep = (struct xrf_ep *)fid;
	union xrf_sa a;
	size_t n = xrf_sa_len(ep->dom->info->src_addr, ep->dom->info->src_addrlen);

	if (!n)
		return -FI_EOPBADSTATE;
	memset(&a, 0, sizeof(a));
	memcpy(&a, ep->dom->info->src_addr, n);
	xrf_sa_set_port(&a, xroce_device_ctrl_port(ep->dom->xd->dev));
	return xrf_sa_out(&a, addr, addrlen);
}

static int ep_getpeer(struct fid_ep *ep_fid, void *addr, size_t *addrlen)
{
	struct xrf_ep *ep = (struct xrf_ep *)ep_fid;

	if (!ep->peer.sa.sa_family)
		return -FI_ENOTCONN;
	return xrf_sa_out(&ep->peer, addr, addrlen);
}

static int ep_setname(fid_t fid, void *addr, size_t addrlen)
{
	return -FI_ENOSYS; /* the address is the device's */
}

static int ep_listen(struct fid_pep *pep)
{
	return -FI_ENOSYS;
}

static int ep_reject(struct fid_pep *pep, fid_t handle, const void *param,
		     size_t paramlen)
{
	return -FI_ENOSYS;
}

static int ep_join(struct fid_ep *ep, const void *addr, uint64_t flags,
		   struct fid_mc **mc, void *context)
{
	return -FI_ENOSYS;
}

struct fi_ops_cm xrf_ep_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = ep_setname,
	.getname = ep_getname,
	.getpeer = ep_getpeer,
	.connect = ep_connect,
	.listen = ep_listen,
	.accept = ep_accept,
	.reject = ep_reject,
	.shutdown = ep_shutdown,
	.join = ep_join,
};
