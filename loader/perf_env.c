// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>

#include "cli.h"
#include "perf.h"

double pf_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double pf_cpu(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

int pf_open(const struct pf_opts *o, uint16_t port, struct pf_env *e)
{
	struct xroce_device_attr da;
	int i, rc;

	memset(&da, 0, sizeof(da));
	for (i = 0; i < o->nplanes; i++)
		da.ifnames[i] = o->ifnames[i];
	da.nplanes = o->nplanes;
	da.mem_size = PF_BUF + (4u << 20);
	da.ctrl_port = port;
	da.log_level = o->verbose ? XROCE_LOG_DEBUG : XROCE_LOG_WARN;
	da.tx_engine = o->engine;
	da.key_file = o->key_file;
	da.accept_from = o->accept_from;
	if ((rc = xroce_open_device(&da, &e->dev)))
		return xr_err("perf", rc, "cannot open the device");
	if ((rc = xroce_alloc_pd(e->dev, &e->pd)) ||
	    (rc = xroce_create_cq(e->dev, 65536, &e->cq)))
		return xr_err("perf", rc, "set-up");
	e->buf = xroce_mem_alloc(e->dev, PF_BUF, 4096);
	if (!e->buf)
		return xr_err("perf", -ENOMEM, "buffer");
	rc = xroce_reg_mr(e->pd, e->buf, PF_BUF, XROCE_ACCESS_LOCAL_WRITE |
			  XROCE_ACCESS_REMOTE_WRITE, &e->mr);
	if (rc)
		return xr_err("perf", rc, "register");
	return 0;
}

int pf_post_recvs(struct xroce_qp *qp, int n)
{
	struct xroce_recv_wr r, *bad;
	int i;

	memset(&r, 0, sizeof(r));
	for (i = 0; i < n; i++)
		if (xroce_post_recv(qp, &r, &bad))
			return -1;
	return 0;
}

int pf_qp(const struct pf_opts *o, struct pf_env *e, struct xroce_qp **qp)
{
	struct xroce_qp_init_attr qa;
	int rc;

	memset(&qa, 0, sizeof(qa));
	qa.send_cq = e->cq;
	qa.recv_cq = e->cq;
	qa.max_send_wr = 4096;
	qa.npaths = o->npaths;
	qa.mtu = o->mtu;
	qa.max_inflight = o->max_inflight;
	if (o->no_redundant)
		qa.flags |= XROCE_QP_NO_REDUNDANT;
	rc = xroce_create_qp(e->pd, &qa, qp);
	if (rc)
		return xr_err("perf", rc, "create_qp");
	return pf_post_recvs(*qp, PF_RECVS) ? xr_err("perf", -ENOMEM, "post_recv") : 0;
}

int pf_post(struct pf_env *e, struct xroce_qp *qp, uint64_t wr_id, void *l,
	    uint32_t len, uint64_t raddr, uint32_t rkey, bool imm, uint32_t immv)
{
	struct xroce_sge sge = { (uint64_t)(uintptr_t)l, len, e->mr->lkey };
	struct xroce_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = len ? &sge : NULL;
	wr.num_sge = len ? 1 : 0;
	wr.opcode = imm ? XROCE_WR_RDMA_WRITE_WITH_IMM : XROCE_WR_RDMA_WRITE;
	wr.send_flags = XROCE_SEND_SIGNALED;
	wr.imm_data = immv;
	wr.rdma.remote_addr = raddr;
	wr.rdma.rkey = rkey;
	return xroce_post_send(qp, &wr, &bad);
}
