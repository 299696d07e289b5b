// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <string.h>
#include <time.h>

#include "cli.h"
#include "endpoint.h"

int xr_ep_parse_opt(const char *cmd, int c, const char *arg, struct xr_ep_opts *o)
{
	uint32_t v;

	switch (c) {
	case 'i':
		if (o->nplanes == XROCE_MAX_PLANES)
			return xr_usage_err(cmd, "at most %d interfaces", XROCE_MAX_PLANES);
		o->ifnames[o->nplanes++] = arg;
		return XR_CONTINUE;
	case 'p':
		if (xr_parse_u32(arg, 1, 65535, &v))
			return xr_usage_err(cmd, "bad port '%s'", arg);
		o->port = (uint16_t)v;
		return XR_CONTINUE;
	case 'P':
		if (xr_parse_u32(arg, 1, XROCE_MAX_PATHS, &v))
			return xr_usage_err(cmd, "paths must be 1..%d", XROCE_MAX_PATHS);
		o->npaths = v;
		return XR_CONTINUE;
	case 'K':
		o->key_file = arg;
		return XR_CONTINUE;
	case 'F':
		o->accept_from = arg;
		return XR_CONTINUE;
	case 'j':
		o->json = 1;
		return XR_CONTINUE;
	case 'v':
		o->verbose = 1;
		return XR_CONTINUE;
	}
	return XR_NOT_MINE;
}

void xr_ep_device_attr(const struct xr_ep_opts *o, struct xroce_device_attr *da)
{
	int i;

	memset(da, 0, sizeof(*da));
	for (i = 0; i < o->nplanes; i++)
		da->ifnames[i] = o->ifnames[i];
	da->nplanes = o->nplanes;
	da->key_file = o->key_file;
	da->accept_from = o->accept_from;
	da->log_level = o->verbose ? XROCE_LOG_DEBUG : XROCE_LOG_WARN;
}

double xr_mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int xr_post_empty_recvs(struct xroce_qp *qp, int n)
{
	struct xroce_recv_wr r, *bad;
	int i, rc;

	memset(&r, 0, sizeof(r));
	for (i = 0; i < n; i++) {
		rc = xroce_post_recv(qp, &r, &bad);
		if (rc)
			return rc;
	}
	return 0;
}

int xr_post_write(struct xroce_qp *qp, uint32_t lkey, uint64_t wr_id, void *laddr,
		  uint32_t len, uint64_t raddr, uint32_t rkey, bool with_imm,
		  uint32_t imm)
{
	struct xroce_sge sge = { (uint64_t)(uintptr_t)laddr, len, lkey };
	struct xroce_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = len ? &sge : NULL;
	wr.num_sge = len ? 1 : 0;
	wr.opcode = with_imm ? XROCE_WR_RDMA_WRITE_WITH_IMM : XROCE_WR_RDMA_WRITE;
	wr.send_flags = XROCE_SEND_SIGNALED;
	wr.imm_data = imm;
	wr.rdma.remote_addr = raddr;
	wr.rdma.rkey = rkey;
	return xroce_post_send(qp, &wr, &bad);
}
