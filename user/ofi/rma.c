// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fi_rma calls: WRITE (WRITE_WITH_IMM with remote CQ data, which consumes
 * one of the peer's posted receives: FI_RX_CQ_DATA) and READ.  The remote
 * address is the peer's virtual address (FI_MR_VIRT_ADDR) and the key its
 * region's rkey (FI_MR_PROV_KEY); libxroce's XDP program checks both, and
 * the access rights, for every packet.  A READ is answered by the peer's
 * progress thread.
 */
#include "ofi.h"

#define RMA_FLAGS (FI_COMPLETION | FI_INJECT | FI_REMOTE_CQ_DATA | \
		   FI_INJECT_COMPLETE | FI_TRANSMIT_COMPLETE | \
		   FI_DELIVERY_COMPLETE | FI_MORE)

static ssize_t rma_common(struct fid_ep *ep_fid, enum xroce_wr_opcode opcode,
			  const struct iovec *iov, void **desc, size_t count,
			  uint64_t addr, uint64_t key, uint64_t data,
			  uint64_t flags, void *context)
{
	struct xrf_tx tx = {
		.iov = iov, .desc = desc, .count = count, .opcode = opcode,
		.raddr = addr, .rkey = key, .data = data, .flags = flags,
		.context = context,
		.cflags = FI_RMA | (opcode == XROCE_WR_RDMA_READ ? FI_READ : FI_WRITE),
	};

	if (opcode == XROCE_WR_RDMA_READ && (flags & (FI_INJECT | FI_REMOTE_CQ_DATA)))
		return -FI_EINVAL;
	return xrf_post_tx((struct xrf_ep *)ep_fid, &tx);
}

static uint64_t op_flags(struct fid_ep *ep_fid)
{
	return ((struct xrf_ep *)ep_fid)->tx_op_flags;
}

static ssize_t x_read(struct fid_ep *ep, void *buf, size_t len, void *desc,
		      fi_addr_t src, uint64_t addr, uint64_t key, void *context)
{
	struct iovec v = { buf, len };

	return rma_common(ep, XROCE_WR_RDMA_READ, &v, &desc, 1, addr, key, 0,
			  op_flags(ep), context);
}

static ssize_t x_readv(struct fid_ep *ep, const struct iovec *iov, void **desc,
		       size_t count, fi_addr_t src, uint64_t addr, uint64_t key,
		       void *context)
{
	return rma_common(ep, XROCE_WR_RDMA_READ, iov, desc, count, addr, key, 0,
			  op_flags(ep), context);
}

static ssize_t rma_msg(struct fid_ep *ep, enum xroce_wr_opcode opcode,
		       const struct fi_msg_rma *msg, uint64_t flags)
{
	if (!msg || msg->rma_iov_count != 1 || !msg->rma_iov)
		return -FI_EINVAL; /* rma_iov_limit is 1 */
	if (flags & ~(uint64_t)RMA_FLAGS)
		return -FI_EBADFLAGS;
	return rma_common(ep, opcode, msg->msg_iov, msg->desc, msg->iov_count,
			  msg->rma_iov[0].addr, msg->rma_iov[0].key, msg->data,
			  flags, msg->context);
}

static ssize_t x_readmsg(struct fid_ep *ep, const struct fi_msg_rma *msg,
			 uint64_t flags)
{
	return rma_msg(ep, XROCE_WR_RDMA_READ, msg, flags);
}

static ssize_t x_write(struct fid_ep *ep, const void *buf, size_t len, void *desc,
		       fi_addr_t dest, uint64_t addr, uint64_t key, void *context)
{
	struct iovec v = { (void *)buf, len };

	return rma_common(ep, XROCE_WR_RDMA_WRITE, &v, &desc, 1, addr, key, 0,
			  op_flags(ep), context);
}

static ssize_t x_writev(struct fid_ep *ep, const struct iovec *iov, void **desc,
			size_t count, fi_addr_t dest, uint64_t addr, uint64_t key,
			void *context)
{
	return rma_common(ep, XROCE_WR_RDMA_WRITE, iov, desc, count, addr, key, 0,
			  op_flags(ep), context);
}

static ssize_t x_writemsg(struct fid_ep *ep, const struct fi_msg_rma *msg,
			  uint64_t flags)
{
	return rma_msg(ep, XROCE_WR_RDMA_WRITE, msg, flags);
}

static ssize_t x_inject_write(struct fid_ep *ep, const void *buf, size_t len,
			      fi_addr_t dest, uint64_t addr, uint64_t key)
{
	struct iovec v = { (void *)buf, len };

	return rma_common(ep, XROCE_WR_RDMA_WRITE, &v, NULL, 1, addr, key, 0,
			  FI_INJECT, NULL);
}

static ssize_t x_writedata(struct fid_ep *ep, const void *buf, size_t len,
			   void *desc, uint64_t data, fi_addr_t dest, uint64_t addr,
			   uint64_t key, void *context)
{
	struct iovec v = { (void *)buf, len };

	return rma_common(ep, XROCE_WR_RDMA_WRITE, &v, &desc, 1, addr, key, data,
			  op_flags(ep) | FI_REMOTE_CQ_DATA, context);
}

static ssize_t x_inject_writedata(struct fid_ep *ep, const void *buf, size_t len,
				  uint64_t data, fi_addr_t dest, uint64_t addr,
				  uint64_t key)
{
	struct iovec v = { (void *)buf, len };

	return rma_common(ep, XROCE_WR_RDMA_WRITE, &v, NULL, 1, addr, key, data,
			  FI_INJECT | FI_REMOTE_CQ_DATA, NULL);
}

struct fi_ops_rma xrf_rma_ops = {
	.size = sizeof(struct fi_ops_rma),
	.read = x_read,
	.readv = x_readv,
	.readmsg = x_readmsg,
	.write = x_write,
	.writev = x_writev,
	.writemsg = x_writemsg,
	.inject = x_inject_write,
	.writedata = x_writedata,
	.injectdata = x_inject_writedata,
};
