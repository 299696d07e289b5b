// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>

#include "cli.h"
#include "perf.h"

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
	int rc;

	xr_ep_device_attr(&o->ep, &da);
	da.mem_size = PF_BUF + (4u << 20);
	da.ctrl_port = port;
	da.tx_engine = o->engine;
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

int pf_qp(const struct pf_opts *o, struct pf_env *e, struct xroce_qp **qp)
{
	struct xroce_qp_init_attr qa;
	int rc;

	memset(&qa, 0, sizeof(qa));
	qa.send_cq = e->cq;
	qa.recv_cq = e->cq;
	qa.max_send_wr = 4096;
	qa.npaths = o->ep.npaths;
	qa.mtu = o->mtu;
	qa.max_inflight = o->max_inflight;
	if (o->no_redundant)
		qa.flags |= XROCE_QP_NO_REDUNDANT;
	rc = xroce_create_qp(e->pd, &qa, qp);
	if (rc)
		return xr_err("perf", rc, "create_qp");
	return xr_post_empty_recvs(*qp, PF_RECVS) ? xr_err("perf", -ENOMEM, "post_recv") : 0;
}
