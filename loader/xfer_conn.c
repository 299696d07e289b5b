// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "xfer_conn.h"
#include "xfer_proto.h"

void xf_close(struct xf_ctx *x)
{
	if (x->qp)
		xroce_destroy_qp(x->qp);
	if (x->mr)
		xroce_dereg_mr(x->mr);
	if (x->scq)
		xroce_destroy_cq(x->scq);
	if (x->rcq)
		xroce_destroy_cq(x->rcq);
	if (x->pd)
		xroce_dealloc_pd(x->pd);
	if (x->dev)
		xroce_close_device(x->dev);
	memset(x, 0, sizeof(*x));
}

int xf_open(const char *cmd, const struct xf_common *c, uint16_t ctrl_port,
	    uint64_t buflen, int access, struct xf_ctx *x)
{
	struct xroce_device_attr da;
	struct xroce_qp_init_attr qa;
	int rc;

	xr_ep_device_attr(&c->ep, &da);
	da.mem_size = buflen + (1u << 20);
	if (c->mem > da.mem_size)
		da.mem_size = c->mem;
	da.ctrl_port = ctrl_port;
	rc = xroce_open_device(&da, &x->dev);
	if (rc)
		return xr_err(cmd, rc, "cannot open the device");
	if ((rc = xroce_alloc_pd(x->dev, &x->pd)) ||
	    (rc = xroce_create_cq(x->dev, 4096, &x->scq)) ||
	    (rc = xroce_create_cq(x->dev, 4096, &x->rcq)))
		return xr_err(cmd, rc, "cannot set up");
	x->buf = xroce_mem_alloc(x->dev, buflen, 4096);
	if (!x->buf)
		return xr_err(cmd, -ENOMEM, "cannot allocate %" PRIu64 " bytes", buflen);
	rc = xroce_reg_mr(x->pd, x->buf, buflen, access, &x->mr);
	if (rc)
		return xr_err(cmd, rc, "cannot register memory");
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = x->scq;
	qa.recv_cq = x->rcq;
	qa.max_send_wr = 1024;
	qa.npaths = c->ep.npaths;
	qa.timeout_ms = c->timeout_ms;
	rc = xroce_create_qp(x->pd, &qa, &x->qp);
	if (rc)
		return xr_err(cmd, rc, "cannot create a queue pair");
	rc = xr_post_empty_recvs(x->qp, XF_RECVS);
	if (rc)
		return xr_err(cmd, rc, "cannot post receives");
	return XR_EXIT_OK;
}

int xf_wait_one(const char *cmd, struct xroce_cq *cq, struct xroce_wc *wc,
		int timeout_ms, const char *what)
{
	int n = xroce_wait_cq(cq, 1, wc, timeout_ms);

	if (n < 0)
		return xr_err(cmd, n, "waiting for %s", what);
	if (n == 0)
		return xr_err(cmd, -ETIMEDOUT, "no %s within %d ms", what, timeout_ms);
	if (wc->status != XROCE_WC_SUCCESS)
		return xr_err(cmd, 0, "%s failed: %s", what,
			      xroce_wc_status_str(wc->status));
	return 0;
}
