// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fi_msg calls: SENDs (SEND_WITH_IMM with remote CQ data) into the peer's
 * posted receives, and receives.  The n-th SEND fills the n-th receive,
 * whatever order its packets arrive in (FI_ORDER_SAS).  dest_addr /
 * src_addr are ignored, as on any connected endpoint.
 */
#include "ofi.h"

#define SEND_FLAGS (FI_COMPLETION | FI_INJECT | FI_REMOTE_CQ_DATA | \
		    FI_INJECT_COMPLETE | FI_TRANSMIT_COMPLETE | \
		    FI_DELIVERY_COMPLETE | FI_MORE)

static struct xrf_ep *ep_of(struct fid_ep *ep_fid)
{
	return (struct xrf_ep *)ep_fid;
}

static ssize_t send_common(struct xrf_ep *ep, const struct iovec *iov, void **desc,
			   size_t count, uint64_t data, uint64_t flags, void *context)
{
	struct xrf_tx tx = {
		.iov = iov, .desc = desc, .count = count, .opcode = XROCE_WR_SEND,
		.data = data, .flags = flags, .context = context,
		.cflags = FI_SEND | FI_MSG,
	};

	return xrf_post_tx(ep, &tx);
}

static ssize_t x_send(struct fid_ep *ep_fid, const void *buf, size_t len,
		      void *desc, fi_addr_t dest, void *context)
{
	struct iovec v = { (void *)buf, len };
	struct xrf_ep *ep = ep_of(ep_fid);

	return send_common(ep, &v, &desc, 1, 0, ep->tx_op_flags, context);
}

static ssize_t x_sendv(struct fid_ep *ep_fid, const struct iovec *iov, void **desc,
		       size_t count, fi_addr_t dest, void *context)
{
	struct xrf_ep *ep = ep_of(ep_fid);

	return send_common(ep, iov, desc, count, 0, ep->tx_op_flags, context);
}

static ssize_t x_sendmsg(struct fid_ep *ep_fid, const struct fi_msg *msg,
			 uint64_t flags)
{
	if (!msg)
		return -FI_EINVAL;
	if (flags & ~(uint64_t)SEND_FLAGS)
		return -FI_EBADFLAGS;
	return send_common(ep_of(ep_fid), msg->msg_iov, msg->desc, msg->iov_count,
			   msg->data, flags, msg->context);
}

static ssize_t x_inject(struct fid_ep *ep_fid, const void *buf, size_t len,
			fi_addr_t dest)
{
	struct iovec v = { (void *)buf, len };

	return send_common(ep_of(ep_fid), &v, NULL, 1, 0, FI_INJECT, NULL);
}

static ssize_t x_senddata(struct fid_ep *ep_fid, const void *buf, size_t len,
			  void *desc, uint64_t data, fi_addr_t dest, void *context)
{
	struct iovec v = { (void *)buf, len };
	struct xrf_ep *ep = ep_of(ep_fid);

	return send_common(ep, &v, &desc, 1, data,
			   ep->tx_op_flags | FI_REMOTE_CQ_DATA, context);
}

static ssize_t x_injectdata(struct fid_ep *ep_fid, const void *buf, size_t len,
			    uint64_t data, fi_addr_t dest)
{
	struct iovec v = { (void *)buf, len };

	return send_common(ep_of(ep_fid), &v, NULL, 1, data,
			   FI_INJECT | FI_REMOTE_CQ_DATA, NULL);
}

static ssize_t x_recv(struct fid_ep *ep_fid, void *buf, size_t len, void *desc,
		      fi_addr_t src, void *context)
{
	struct iovec v = { buf, len };
	struct xrf_ep *ep = ep_of(ep_fid);

	return xrf_post_rx(ep, &v, &desc, 1, context, ep->rx_op_flags);
}

static ssize_t x_recvv(struct fid_ep *ep_fid, const struct iovec *iov, void **desc,
		       size_t count, fi_addr_t src, void *context)
{
	struct xrf_ep *ep = ep_of(ep_fid);

	return xrf_post_rx(ep, iov, desc, count, context, ep->rx_op_flags);
}

static ssize_t x_recvmsg(struct fid_ep *ep_fid, const struct fi_msg *msg,
			 uint64_t flags)
{
	if (!msg)
		return -FI_EINVAL;
	return xrf_post_rx(ep_of(ep_fid), msg->msg_iov, msg->desc, msg->iov_count,
			   msg->context, flags);
}

struct fi_ops_msg xrf_msg_ops = {
	.size = sizeof(struct fi_ops_msg),
	.recv = x_recv,
	.recvv = x_recvv,
	.recvmsg = x_recvmsg,
	.send = x_send,
	.sendv = x_sendv,
	.sendmsg = x_sendmsg,
	.inject = x_inject,
	.senddata = x_senddata,
	.injectdata = x_injectdata,
};
