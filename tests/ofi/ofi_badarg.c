// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ofi_badarg: every object of the xroce provider given bad arguments,
 * unsupported flags and calls out of order.  Each call must return the
 * -FI_E* libfabric documents for it (and the process must not abort);
 * afterwards the objects still work and close cleanly.  One process, no
 * peer: run where an interface carries xroce.
 */
#include <netinet/in.h>

#include "ofi_common.h"
#include "xroce/fi_xroce.h"

#include <rdma/fi_atomic.h>
#include <rdma/fi_tagged.h>

struct objs {
	struct fi_info *info;
	struct fid_fabric *fab;
	struct fid_domain *dom;
	struct fid_eq *eq;
	struct fid_cq *cq, *cq_nowait;
	struct fid_ep *ep;
	struct fid_pep *pep;
	struct fid_mr *mr;
	char buf[8192];
};

static int bad_objects(struct objs *o)
{
	struct fi_cq_attr ca = { .format = FI_CQ_FORMAT_MSG };
	struct fi_eq_attr ea = { .wait_obj = FI_WAIT_MUTEX_COND };
	struct fi_mr_attr ma = { 0 };
	struct iovec v[2] = { { o->buf, 8 }, { o->buf + 8, 8 } };
	struct fi_info *bad = fi_dupinfo(o->info);
	struct fid_cq *cq;
	struct fid_eq *eq;
	struct fid_mr *mr;
	struct fid_av *av;
	struct fid_cntr *cntr;
	struct fid_domain *dom;
	struct fid_ep *ep;
	void *ops;

	CHECK(bad, "fi_dupinfo");
	free(bad->domain_attr->name);
	bad->domain_attr->name = strdup("verbs_mlx5_0");
	EXPECT(fi_domain(o->fab, bad, &dom, NULL), -FI_EINVAL, "fi_domain(another provider's)");
	bad->ep_attr->type = FI_EP_RDM;
	EXPECT(fi_endpoint(o->dom, bad, &ep, NULL), -FI_EINVAL, "fi_endpoint(FI_EP_RDM)");
	EXPECT(fi_endpoint(o->dom, NULL, &ep, NULL), -FI_EINVAL, "fi_endpoint(NULL info)");
	fi_freeinfo(bad);
	ca.format = (enum fi_cq_format)99;
	EXPECT(fi_cq_open(o->dom, &ca, &cq, NULL), -FI_ENOSYS, "fi_cq_open(format 99)");
	ca.format = FI_CQ_FORMAT_MSG;
	ca.wait_obj = FI_WAIT_SET;
	EXPECT(fi_cq_open(o->dom, &ca, &cq, NULL), -FI_ENOSYS, "fi_cq_open(FI_WAIT_SET)");
	ca.wait_obj = FI_WAIT_FD;
	ca.flags = FI_REMOTE_WRITE;
	EXPECT(fi_cq_open(o->dom, &ca, &cq, NULL), -FI_EBADFLAGS, "fi_cq_open(bad flags)");
	ca.flags = 0;
	ca.size = (size_t)1 << 30;
	EXPECT(fi_cq_open(o->dom, &ca, &cq, NULL), -FI_EINVAL, "fi_cq_open(2^30 entries)");
	EXPECT(fi_eq_open(o->fab, &ea, &eq, NULL), -FI_ENOSYS, "fi_eq_open(FI_WAIT_MUTEX_COND)");
	EXPECT(fi_mr_reg(o->dom, NULL, 64, FI_SEND, 0, 0, 0, &mr, NULL), -FI_EINVAL,
	       "fi_mr_reg(NULL, 64)");
	EXPECT(fi_mr_reg(o->dom, o->buf, 64, 1ULL << 40, 0, 0, 0, &mr, NULL), -FI_EINVAL,
	       "fi_mr_reg(unknown access)");
	EXPECT(fi_mr_reg(o->dom, o->buf, 64, FI_SEND, 0, 0, FI_RMA_EVENT, &mr, NULL),
	       -FI_EBADFLAGS, "fi_mr_reg(FI_RMA_EVENT)");
	EXPECT(fi_mr_regv(o->dom, v, 2, FI_SEND, 0, 0, 0, &mr, NULL), -FI_EINVAL,
	       "fi_mr_regv(2 entries)");
	ma.mr_iov = v;
	ma.iov_count = 1;
	ma.access = FI_SEND;
	ma.iface = FI_HMEM_CUDA;
	EXPECT(fi_mr_regattr(o->dom, &ma, 0, &mr), -FI_ENOSYS, "fi_mr_regattr(CUDA)");
	EXPECT(fi_av_open(o->dom, NULL, &av, NULL), -FI_ENOSYS, "fi_av_open (FI_EP_MSG only)");
	EXPECT(fi_cntr_open(o->dom, NULL, &cntr, NULL), -FI_ENOSYS, "fi_cntr_open");
	EXPECT(fi_open_ops(&o->dom->fid, "no_such_ops", 0, &ops, NULL), -FI_ENOSYS,
	       "fi_open_ops(unknown)");
	EXPECT(fi_open_ops(&o->dom->fid, FI_XROCE_MEM_OPS, 1, &ops, NULL), -FI_EBADFLAGS,
	       "fi_open_ops(flags)");
	printf("  ok   domain, CQ, EQ and registration arguments\n");
	return 0;
}

static int bad_ep_setup(struct objs *o)
{
	struct fi_cq_attr ca = { .format = FI_CQ_FORMAT_DATA, .wait_obj = FI_WAIT_NONE };
	struct fi_cq_data_entry e;
	size_t len = 0, sz;
	char addr[128];

	EXPECT(fi_endpoint(o->dom, o->info, &o->ep, NULL), 0, "fi_endpoint");
	EXPECT(fi_enable(o->ep), -FI_ENOCQ, "fi_enable without CQs");
	EXPECT(fi_cq_open(o->dom, &ca, &o->cq_nowait, NULL), 0, "fi_cq_open");
	EXPECT(fi_ep_bind(o->ep, &o->cq->fid, 0), -FI_EINVAL, "fi_ep_bind(cq, no direction)");
	EXPECT(fi_ep_bind(o->ep, &o->cq->fid, FI_REMOTE_READ), -FI_EBADFLAGS,
	       "fi_ep_bind(cq, bad flags)");
	EXPECT(fi_ep_bind(o->ep, &o->cq->fid, FI_TRANSMIT | FI_RECV), 0, "fi_ep_bind(cq)");
	EXPECT(fi_ep_bind(o->ep, &o->cq_nowait->fid, FI_TRANSMIT), -FI_EINVAL,
	       "fi_ep_bind(a second transmit CQ)");
	EXPECT(fi_ep_bind(o->ep, &o->eq->fid, 7), -FI_EBADFLAGS, "fi_ep_bind(eq, flags)");
	EXPECT(fi_ep_bind(o->ep, &o->dom->fid, 0), -FI_EINVAL, "fi_ep_bind(a domain)");
	EXPECT(fi_recv(o->ep, o->buf, 64, NULL, 0, NULL), -FI_EOPBADSTATE,
	       "fi_recv before fi_enable");
	EXPECT(fi_enable(o->ep), -FI_ENOEQ, "fi_enable without an EQ");
	EXPECT(fi_ep_bind(o->ep, &o->eq->fid, 0), 0, "fi_ep_bind(eq)");
	EXPECT(fi_enable(o->ep), 0, "fi_enable");
	EXPECT(fi_ep_bind(o->ep, &o->cq_nowait->fid, FI_RECV), -FI_EOPBADSTATE,
	       "fi_ep_bind after fi_enable");
	EXPECT(fi_cq_sread(o->cq_nowait, &e, 1, NULL, 10), -FI_ENOSYS,
	       "fi_cq_sread on FI_WAIT_NONE");
	EXPECT(fi_cq_read(o->cq, NULL, 1), -FI_EINVAL, "fi_cq_read(NULL, 1)");
	EXPECT(fi_cq_read(o->cq, &e, 1), -FI_EAGAIN, "fi_cq_read(empty)");
	EXPECT(fi_cq_readerr(o->cq, NULL, 0), -FI_EINVAL, "fi_cq_readerr(NULL)");
	sz = sizeof(len);
	EXPECT(fi_getopt(&o->ep->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE, &len, &sz), 0,
	       "fi_getopt(FI_OPT_CM_DATA_SIZE)");
	CHECK(len >= 24, "CM data size %zu (ofi_rxm needs 24)", len);
	EXPECT(fi_getopt(&o->ep->fid, FI_OPT_ENDPOINT, 12345, &len, &sz), -FI_ENOPROTOOPT,
	       "fi_getopt(unknown)");
	sz = 1;
	EXPECT(fi_getname(&o->ep->fid, addr, &sz), -FI_ETOOSMALL, "fi_getname(short buffer)");
	printf("  ok   endpoint set-up order and options (CM data %zu bytes)\n", len);
	return 0;
}

static int bad_ep_calls(struct objs *o)
{
	char big[61] = { 0 };
	struct iovec v[5];
	struct fi_msg m = { .msg_iov = v, .iov_count = 1 };
	struct fi_rma_iov ri[2] = { { 0, 8, 1 }, { 0, 8, 1 } };
	struct fi_msg_rma mr = { .msg_iov = v, .iov_count = 1, .rma_iov = ri,
				 .rma_iov_count = 2 };
	int i;

	for (i = 0; i < 5; i++)
		v[i] = (struct iovec){ o->buf + i * 16, 16 };
	EXPECT(fi_send(o->ep, o->buf, 8, NULL, 0, NULL), -FI_ENOTCONN, "fi_send unconnected");
	EXPECT(fi_recvv(o->ep, v, NULL, 5, 0, NULL), -FI_EINVAL, "fi_recvv(5 entries)");
	EXPECT(fi_sendmsg(o->ep, &m, FI_FENCE), -FI_EBADFLAGS, "fi_sendmsg(FI_FENCE)");
	EXPECT(fi_recvmsg(o->ep, &m, FI_MULTI_RECV), -FI_EBADFLAGS, "fi_recvmsg(FI_MULTI_RECV)");
	EXPECT(fi_writemsg(o->ep, &mr, 0), -FI_EINVAL, "fi_writemsg(2 remote ranges)");
	mr.rma_iov_count = 1;
	EXPECT(fi_readmsg(o->ep, &mr, FI_INJECT), -FI_EINVAL, "fi_readmsg(FI_INJECT)");
	EXPECT(fi_sendmsg(o->ep, NULL, 0), -FI_EINVAL, "fi_sendmsg(NULL)");
	EXPECT(fi_tsend(o->ep, o->buf, 8, NULL, 0, 1, NULL), -FI_ENOSYS, "fi_tsend");
	EXPECT(fi_atomic(o->ep, o->buf, 1, NULL, 0, 0, 0, FI_UINT64, FI_SUM, NULL),
	       -FI_ENOSYS, "fi_atomic");
	EXPECT(fi_connect(o->ep, NULL, big, sizeof(big)), -FI_EINVAL,
	       "fi_connect(61 bytes of CM data)");
	EXPECT(fi_accept(o->ep, NULL, 0), -FI_EINVAL, "fi_accept without a request");
	EXPECT(fi_shutdown(o->ep, 0), -FI_ENOTCONN, "fi_shutdown unconnected");
	EXPECT(fi_shutdown(o->ep, 1), -FI_EBADFLAGS, "fi_shutdown(flags)");
	EXPECT(fi_cancel(&o->ep->fid, NULL), -FI_ENOSYS, "fi_cancel");
	printf("  ok   data and connection calls out of order or with bad arguments\n");
	return 0;
}

static int bad_pep_eq(struct objs *o)
{
	char addr[128], small[4], ev[64];
	size_t sz = sizeof(addr);
	uint32_t event;
	struct fid *f = &o->dom->fid;

	EXPECT(fi_passive_ep(o->fab, o->info, &o->pep, NULL), 0, "fi_passive_ep");
	EXPECT(fi_listen(o->pep), -FI_ENOEQ, "fi_listen without an EQ");
	EXPECT(fi_pep_bind(o->pep, &o->eq->fid, 1), -FI_EBADFLAGS, "fi_pep_bind(flags)");
	EXPECT(fi_pep_bind(o->pep, &o->eq->fid, 0), 0, "fi_pep_bind");
	EXPECT(fi_listen(o->pep), 0, "fi_listen");
	EXPECT(fi_listen(o->pep), -FI_EOPBADSTATE, "fi_listen twice");
	EXPECT(fi_getname(&o->pep->fid, addr, &sz), 0, "fi_getname(pep)");
	CHECK(((struct sockaddr_in *)addr)->sin_port != 0, "listening port 0");
	sz = 2;
	EXPECT(fi_getname(&o->pep->fid, addr, &sz), -FI_ETOOSMALL, "fi_getname(short)");
	EXPECT(fi_reject(o->pep, &o->dom->fid, NULL, 0), -FI_EINVAL, "fi_reject(not a request)");
	EXPECT(fi_eq_write(o->eq, FI_NOTIFY, "0123456789abcdef", 16, 0), 16, "fi_eq_write");
	EXPECT(fi_eq_read(o->eq, &event, small, sizeof(small), 0), -FI_ETOOSMALL,
	       "fi_eq_read(short buffer)");
	EXPECT(fi_eq_read(o->eq, &event, ev, sizeof(ev), FI_PEEK), 16, "fi_eq_read(FI_PEEK)");
	EXPECT(fi_eq_read(o->eq, &event, ev, sizeof(ev), 0), 16, "fi_eq_read");
	CHECK(event == FI_NOTIFY && !memcmp(ev, "0123456789abcdef", 16), "event");
	EXPECT(fi_eq_read(o->eq, &event, ev, sizeof(ev), 0), -FI_EAGAIN, "fi_eq_read(empty)");
	EXPECT(fi_eq_sread(o->eq, &event, ev, sizeof(ev), 50, 0), -FI_EAGAIN,
	       "fi_eq_sread(timeout)");
	EXPECT(fi_eq_readerr(o->eq, NULL, 0), -FI_EINVAL, "fi_eq_readerr(NULL)");
	EXPECT(fi_trywait(o->fab, &f, 1), -FI_EINVAL, "fi_trywait(a domain)");
	EXPECT(fi_close(&o->dom->fid), -FI_EBUSY, "fi_close(domain in use)");
	EXPECT(fi_close(&o->cq->fid), -FI_EBUSY, "fi_close(cq in use)");
	EXPECT(fi_close(&o->eq->fid), -FI_EBUSY, "fi_close(eq in use)");
	EXPECT(fi_close(&o->fab->fid), -FI_EBUSY, "fi_close(fabric in use)");
	printf("  ok   passive endpoint, event queue, closing objects in use\n");
	return 0;
}

int main(void)
{
	struct fi_cq_attr ca = { .format = FI_CQ_FORMAT_DATA, .wait_obj = FI_WAIT_FD };
	struct fi_eq_attr ea = { .wait_obj = FI_WAIT_FD };
	struct fi_info *hints = xr_hints();
	/* Static: its buffer is registered, and a stack cannot be. */
	static struct objs o;
	char on_stack[64];

	prog = "ofi_badarg";
	memset(&o, 0, sizeof(o));
	CHECK(hints, "fi_allocinfo");
	EXPECT(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &o.info), 0, "fi_getinfo");
	EXPECT(fi_fabric(o.info->fabric_attr, &o.fab, NULL), 0, "fi_fabric");
	EXPECT(fi_domain(o.fab, o.info, &o.dom, NULL), 0, "fi_domain");
	EXPECT(fi_eq_open(o.fab, &ea, &o.eq, NULL), 0, "fi_eq_open");
	EXPECT(fi_cq_open(o.dom, &ca, &o.cq, NULL), 0, "fi_cq_open");
	if (bad_objects(&o) || bad_ep_setup(&o) || bad_ep_calls(&o) || bad_pep_eq(&o))
		return 1;
	EXPECT(fi_mr_reg(o.dom, on_stack, sizeof(on_stack), FI_SEND | FI_RECV, 0, 0, 0,
			 &o.mr, NULL), -FI_EFAULT, "fi_mr_reg(the stack)");
	EXPECT(fi_mr_reg(o.dom, o.buf, sizeof(o.buf), FI_SEND | FI_RECV, 0, 0, 0, &o.mr,
			 NULL), 0, "fi_mr_reg");
	EXPECT(fi_close(&o.mr->fid), 0, "fi_close(mr)");
	EXPECT(fi_close(&o.pep->fid), 0, "fi_close(pep)");
	EXPECT(fi_close(&o.ep->fid), 0, "fi_close(ep)");
	EXPECT(fi_close(&o.cq->fid), 0, "fi_close(cq)");
	EXPECT(fi_close(&o.cq_nowait->fid), 0, "fi_close(cq)");
	EXPECT(fi_close(&o.eq->fid), 0, "fi_close(eq)");
	EXPECT(fi_close(&o.dom->fid), 0, "fi_close(domain)");
	EXPECT(fi_close(&o.fab->fid), 0, "fi_close(fabric)");
	fi_freeinfo(o.info);
	fi_freeinfo(hints);
	printf("ofi_badarg: passed\n");
	return 0;
}
