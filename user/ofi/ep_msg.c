// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Active FI_EP_MSG endpoints: binding CQs and an EQ, enabling (the QP is
 * created then, on the CQs bound: one CQ bound serves both directions),
 * options, close.  Connection calls are in cm.c, data calls in msg.c and
 * rma.c.  An endpoint made from an FI_CONNREQ's fi_info owns that request
 * until fi_accept answers it; closed unanswered, it rejects it.
 */
#include <stdlib.h>
#include <string.h>

#include "ofi.h"

static int bind_cq(struct xrf_ep *ep, struct xrf_cq *cq, uint64_t flags)
{
	if (flags & ~(uint64_t)(FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION))
		return -FI_EBADFLAGS;
	if (!(flags & (FI_TRANSMIT | FI_RECV)) || cq->dom != ep->dom)
		return -FI_EINVAL;
	if (((flags & FI_TRANSMIT) && ep->tx_cq) || ((flags & FI_RECV) && ep->rx_cq))
		return -FI_EINVAL;
	if (flags & FI_TRANSMIT) {
		ep->tx_cq = cq;
		ep->tx_selective = flags & FI_SELECTIVE_COMPLETION;
		pthread_mutex_lock(&cq->lock);
		cq->refs++;
		pthread_mutex_unlock(&cq->lock);
	}
	if (flags & FI_RECV) {
		ep->rx_cq = cq;
		ep->rx_selective = flags & FI_SELECTIVE_COMPLETION;
		pthread_mutex_lock(&cq->lock);
		cq->refs++;
		pthread_mutex_unlock(&cq->lock);
	}
	return 0;
}

static int ep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct xrf_ep *ep = (struct xrf_ep *)fid;
	struct xrf_eq *eq;
	int rc;

	if (!bfid)
		return -FI_EINVAL;
	pthread_mutex_lock(&ep->lock);
	if (ep->qp) {
		pthread_mutex_unlock(&ep->lock);
		return -FI_EOPBADSTATE; /* enabled: bindings are fixed */
	}
	switch (bfid->fclass) {
	case FI_CLASS_CQ:
		rc = bind_cq(ep, (struct xrf_cq *)bfid, flags);
		break;
	case FI_CLASS_EQ:
		eq = (struct xrf_eq *)bfid;
		rc = flags ? -FI_EBADFLAGS : ep->eq ? -FI_EINVAL : 0;
		if (!rc) {
			ep->eq = eq;
			pthread_mutex_lock(&eq->lock);
			eq->refs++;
			pthread_mutex_unlock(&eq->lock);
		}
		break;
	case FI_CLASS_CNTR:
	case FI_CLASS_SRX_CTX:
	case FI_CLASS_STX_CTX:
		rc = -FI_ENOSYS;
		break;
	default:
		rc = -FI_EINVAL;
	}
	pthread_mutex_unlock(&ep->lock);
	return rc;
}

/* Called with ep->lock held. */
int xrf_ep_enable(struct xrf_ep *ep)
{
	struct xroce_qp_init_attr qa = {
		.timeout_ms = (uint32_t)xrf_params.timeout_ms,
		.npaths = (uint32_t)xrf_params.npaths,
		/* A receiver slower than its sender is not a failure: the
		 * refused SEND is retried (backing off to seconds) for as long
		 * as the peer answers; a dead peer still fails by timeout. */
		.rnr_retry = 100, .rnr_timer_us = 50,
	};
	int rc;

	if (ep->qp)
		return 0;
	if (!ep->tx_cq && !ep->rx_cq)
		return -FI_ENOCQ;
	if (!ep->eq)
		return -FI_ENOEQ;
	qa.send_cq = (ep->tx_cq ? ep->tx_cq : ep->rx_cq)->xcq;
	qa.recv_cq = (ep->rx_cq ? ep->rx_cq : ep->tx_cq)->xcq;
	qa.max_send_wr = ep->tx_size;
	rc = xroce_create_qp(ep->dom->pd, &qa, &ep->qp);
	if (rc) {
		ep->qp = NULL;
		return rc == -E2BIG || rc == -EBUSY ? -FI_ENOSPC : rc;
	}
	return 0;
}

static int ep_control(struct fid *fid, int command, void *arg)
{
	struct xrf_ep *ep = (struct xrf_ep *)fid;
	uint64_t *flags = arg;
	int rc;

	switch (command) {
	case FI_ENABLE:
		pthread_mutex_lock(&ep->lock);
		rc = xrf_ep_enable(ep);
		pthread_mutex_unlock(&ep->lock);
		return rc;
	case FI_GETOPSFLAG:
		if (!flags)
			return -FI_EINVAL;
		if (*flags & FI_TRANSMIT)
			*flags = ep->tx_op_flags;
		else if (*flags & FI_RECV)
			*flags = ep->rx_op_flags;
		else
			return -FI_EINVAL;
		return 0;
	case FI_SETOPSFLAG:
		if (!flags)
			return -FI_EINVAL;
		if (*flags & FI_TRANSMIT)
			ep->tx_op_flags = *flags & ~(uint64_t)FI_TRANSMIT;
		else if (*flags & FI_RECV)
			ep->rx_op_flags = *flags & ~(uint64_t)FI_RECV;
		else
			return -FI_EINVAL;
		return 0;
	default:
		return -FI_ENOSYS;
	}
}

/* Operations still naming ep (flushed completions not read yet) forget
 * it: the CQ may deliver them after ep is gone. */
static void forget_ops(struct xrf_ep *ep);

static int ep_close(struct fid *fid)
{
	struct xrf_ep *ep = (struct xrf_ep *)fid;

	xrf_cm_del_ep(ep);
	if (ep->qp)
		xroce_destroy_qp(ep->qp);
	forget_ops(ep);
	if (ep->connreq)
		xrf_connreq_release(ep->connreq, true);
	if (ep->tx_cq) {
		pthread_mutex_lock(&ep->tx_cq->lock);
		ep->tx_cq->refs--;
		pthread_mutex_unlock(&ep->tx_cq->lock);
	}
	if (ep->rx_cq) {
		pthread_mutex_lock(&ep->rx_cq->lock);
		ep->rx_cq->refs--;
		pthread_mutex_unlock(&ep->rx_cq->lock);
	}
	if (ep->eq) {
		xrf_eq_forget(ep->eq, &ep->ep_fid.fid);
		pthread_mutex_lock(&ep->eq->lock);
		ep->eq->refs--;
		pthread_mutex_unlock(&ep->eq->lock);
	}
	pthread_mutex_lock(&ep->dom->lock);
	ep->dom->refs--;
	pthread_mutex_unlock(&ep->dom->lock);
	fi_freeinfo(ep->info);
	pthread_mutex_destroy(&ep->lock);
	free(ep);
	return 0;
}

static void forget_ops(struct xrf_ep *ep)
{
	struct xrf_domain *dom = ep->dom;

	pthread_mutex_lock(&dom->lock);
	xrf_domain_forget_ep(dom, ep);
	pthread_mutex_unlock(&dom->lock);
}

static ssize_t ep_cancel(fid_t fid, void *context)
{
	return -FI_ENOSYS; /* a posted xroce work request cannot be taken back */
}

static int ep_getopt(fid_t fid, int level, int optname, void *optval,
		     size_t *optlen)
{
	if (level != FI_OPT_ENDPOINT)
		return -FI_ENOPROTOOPT;
	if (!optval || !optlen)
		return -FI_EINVAL;
	if (optname != FI_OPT_CM_DATA_SIZE)
		return -FI_ENOPROTOOPT;
	if (*optlen < sizeof(size_t)) {
		*optlen = sizeof(size_t);
		return -FI_ETOOSMALL;
	}
	*(size_t *)optval = XROCE_PRIVATE_DATA_MAX;
	*optlen = sizeof(size_t);
	return 0;
}

static int ep_setopt(fid_t fid, int level, int optname, const void *optval,
		     size_t optlen)
{
	if (level != FI_OPT_ENDPOINT)
		return -FI_ENOPROTOOPT;
	return -FI_ENOPROTOOPT;
}

static int no_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr,
		     struct fid_ep **ep, void *context)
{
	return -FI_ENOSYS;
}

static int no_rx_ctx(struct fid_ep *sep, int index, struct fi_rx_attr *attr,
		     struct fid_ep **ep, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t rx_left(struct fid_ep *ep_fid)
{
	struct xrf_ep *ep = (struct xrf_ep *)ep_fid;

	return (ssize_t)ep->rx_size - (ssize_t)__atomic_load_n(&ep->rx_posted, __ATOMIC_RELAXED);
}

static ssize_t tx_left(struct fid_ep *ep_fid)
{
	struct xrf_ep *ep = (struct xrf_ep *)ep_fid;

	return (ssize_t)ep->tx_size - (ssize_t)__atomic_load_n(&ep->tx_posted, __ATOMIC_RELAXED);
}

static struct fi_ops ep_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = ep_close,
	.bind = ep_bind,
	.control = ep_control,
	.ops_open = xrf_no_ops_open,
	.tostr = xrf_no_tostr,
	.ops_set = xrf_no_ops_set,
};

static struct fi_ops_ep ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = ep_cancel,
	.getopt = ep_getopt,
	.setopt = ep_setopt,
	.tx_ctx = no_tx_ctx,
	.rx_ctx = no_rx_ctx,
	.rx_size_left = rx_left,
	.tx_size_left = tx_left,
};

static uint32_t size_of(size_t want, uint32_t def, uint32_t max)
{
	return !want ? def : want > max ? max : (uint32_t)want;
}

static int take_connreq(struct xrf_ep *ep, const struct fi_info *info)
{
	struct xrf_connreq *cr = (struct xrf_connreq *)info->handle;

	if (!info->handle)
		return 0;
	if (info->handle->fclass != FI_CLASS_CONNREQ || cr->xd != ep->dom->xd)
		return -FI_EINVAL;
	ep->connreq = cr;
	xrf_connreq_hold(cr);
	return 0;
}

int xrf_endpoint(struct fid_domain *domain, struct fi_info *info,
		 struct fid_ep **out, void *context)
{
	struct xrf_domain *dom = (struct xrf_domain *)domain;
	struct xrf_ep *ep;
	int rc;

	if (!domain || !info || !out || !info->ep_attr || !info->tx_attr ||
	    !info->rx_attr)
		return -FI_EINVAL;
	if (info->ep_attr->type != FI_EP_MSG && info->ep_attr->type != FI_EP_UNSPEC)
		return -FI_EINVAL;
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -FI_ENOMEM;
	ep->dom = dom;
	ep->info = fi_dupinfo(info);
	rc = ep->info ? take_connreq(ep, info) : -FI_ENOMEM;
	if (!rc && pthread_mutex_init(&ep->lock, NULL))
		rc = -FI_ENOMEM;
	if (rc) {
		fi_freeinfo(ep->info);
		free(ep);
		return rc;
	}
	ep->info->handle = NULL;
	ep->tx_size = size_of(info->tx_attr->size, 256, XRF_TX_SIZE_MAX);
	ep->rx_size = size_of(info->rx_attr->size, XRF_RX_SIZE_MAX, XRF_RX_SIZE_MAX);
	ep->tx_op_flags = info->tx_attr->op_flags;
	ep->rx_op_flags = info->rx_attr->op_flags;
	if (info->dest_addr && xrf_sa_len(info->dest_addr, info->dest_addrlen))
		memcpy(&ep->peer, info->dest_addr, xrf_sa_len(info->dest_addr,
							       info->dest_addrlen));
	ep->ep_fid.fid.fclass = FI_CLASS_EP;
	ep->ep_fid.fid.context = context;
	ep->ep_fid.fid.ops = &ep_fi_ops;
	ep->ep_fid.ops = &ep_ops;
	ep->ep_fid.cm = &xrf_ep_cm_ops;
	ep->ep_fid.msg = &xrf_msg_ops;
	ep->ep_fid.rma = &xrf_rma_ops;
	ep->ep_fid.tagged = &xrf_no_tagged;
	ep->ep_fid.atomic = &xrf_no_atomic;
	ep->ep_fid.collective = &xrf_no_collective;
	pthread_mutex_lock(&dom->lock);
	dom->refs++;
	pthread_mutex_unlock(&dom->lock);
	*out = &ep->ep_fid;
	return 0;
}
