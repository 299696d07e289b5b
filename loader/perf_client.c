// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * xroce perf client: connect --conns connections to the server, each with
 * a hello saying the mode and where echoes go; run every size (perf_bw.c,
 * perf_lat.c); then say DONE and wait for the echoes before closing.
 */
#include <errno.h>
#include <stdio.h>

#include "cli.h"
#include "perf.h"

/* Connections to host, their welcomes in w[]: 0 or an exit status. */
static int connect_all(const struct pf_opts *o, struct pf_env *e,
		       struct pf_welcome *w, const char *host)
{
	struct pf_hello h;
	uint32_t i;
	int rc;

	h.magic = PF_MAGIC;
	h.mode = (uint32_t)o->mode;
	h.addr = (uint64_t)(uintptr_t)(e->buf + PF_BUF / 2);
	h.rkey = e->mr->rkey;
	h.flags = (o->wait ? PF_HELLO_WAIT : 0) | (o->breakdown ? PF_HELLO_TRACE : 0);
	for (i = 0; i < o->conns; i++) {
		if (pf_qp(o, e, &e->qp[i]))
			return XR_EXIT_FAIL;
		e->nqp++;
		xroce_set_private_data(e->qp[i], &h, sizeof(h));
		rc = xroce_connect(e->qp[i], host, o->ep.port, 5000);
		if (rc)
			return xr_err("perf", rc, "connect to %s port %u", host, o->ep.port);
		if (xroce_get_private_data(e->qp[i], &w[i], sizeof(w[i])) != sizeof(w[i]) ||
		    w[i].magic != PF_MAGIC)
			return xr_err("perf", -EPROTO, "the peer is not `xroce perf server`");
	}
	return XR_EXIT_OK;
}

/* Tell the servers we are done and wait (at most 2 s) for their echo, so
 * closing never races their last acknowledgements. */
static void say_done(struct pf_env *e, const struct pf_welcome *w)
{
	uint32_t i, echoes = 0;
	double t0 = xr_mono_s();

	for (i = 0; i < e->nqp; i++)
		xr_post_write(e->qp[i], e->mr->lkey, 0, NULL, 0, w[i].addr, w[i].rkey, true, PF_IMM_DONE);
	while (echoes < e->nqp && xr_mono_s() - t0 < 2.0) {
		struct xroce_wc wc[16];
		int n = xroce_wait_cq(e->cq, 16, wc, 100), j;

		for (j = 0; j < n; j++)
			if (wc[j].opcode == XROCE_WC_RECV_RDMA_WITH_IMM &&
			    wc[j].imm_data == PF_IMM_DONE)
				echoes++;
	}
}

int pf_client(const struct pf_opts *o, const char *host)
{
	struct pf_welcome w[PF_MAX_CONNS] = { 0 };
	struct pf_env e = { 0 };
	int rc, k;

	rc = pf_open(o, 0, &e) ? XR_EXIT_FAIL : connect_all(o, &e, w, host);
	if (!rc && o->breakdown && xroce_trace_enable(e.dev, 1))
		rc = xr_err("perf", -ENOMEM, "cannot trace");
	for (k = 0; !rc && k < o->nsizes; k++) {
		if (o->mode == PF_BW)
			rc = pf_run_bw(o, &e, w, o->sizes[k], k == 0);
		else
			rc = pf_run_lat(o, &e, w, o->sizes[k], k == 0);
		if (!rc && o->breakdown)
			rc = pf_breakdown(o, &e, w, o->sizes[k]);
	}
	if (!rc)
		say_done(&e, w);
	if (e.dev)
		xroce_close_device(e.dev);
	return rc;
}
