// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * xroce perf server: accept clients while serving the ones connected.  A
 * bw client only needs its WRITEs to land; a lat client gets each
 * WRITE_WITH_IMM echoed back; every client ends with WRITE_WITH_IMM(DONE),
 * echoed so that it can close without racing our acknowledgements.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "perf.h"

/* One client. */
struct pf_sconn {
	struct xroce_qp *qp;     /* NULL: a free slot */
	struct pf_hello hello;
};

struct pf_server {
	const struct pf_opts *o;
	struct pf_env e;
	struct pf_welcome w;     /* our buffer, offered to every client */
	struct pf_sconn sc[PF_MAX_CONNS];
	struct xroce_qp *nq;     /* waits for the next client */
	double next_accept;      /* xr_mono_s() of the next look for a client */
};

/* How often the serving loop looks for new clients: each look is a system
 * call on the control socket, which a busy-polling echo cannot afford on
 * every turn. */
#define PF_ACCEPT_EVERY 1e-3

static int free_slot(const struct pf_server *s)
{
	int i;

	for (i = 0; i < PF_MAX_CONNS; i++)
		if (!s->sc[i].qp)
			return i;
	return -1;
}

/* A fresh QP always waits for the next client (kept across rounds until a
 * request takes it).  1: a client was taken, 0: none waiting (or no slot
 * free), -1: no QP. */
static int accept_client(struct pf_server *s)
{
	int slot = free_slot(s);
	struct pf_sconn *c;

	if (slot < 0)
		return 0;
	if (!s->nq) {
		if (pf_qp(s->o, &s->e, &s->nq))
			return -1;
		xroce_set_private_data(s->nq, &s->w, sizeof(s->w));
	}
	if (xroce_accept(s->nq, 0))
		return 0;
	c = &s->sc[slot];
	c->qp = s->nq;
	xroce_get_private_data(s->nq, &c->hello, sizeof(c->hello));
	s->nq = NULL;
	if ((c->hello.flags & PF_HELLO_TRACE) && xroce_trace_enable(s->e.dev, 1))
		fprintf(stderr, "xroce perf server: cannot trace\n");
	return 1;
}

/* Busy-poll while a latency client that busy-polls is connected (as
 * perftest does: a wakeup per message would be measured too); otherwise
 * sleep until completions, a connection request or 10 ms. */
static int next_completions(struct pf_server *s, struct xroce_wc *wc, int max)
{
	bool spin = false;
	int i;

	for (i = 0; i < PF_MAX_CONNS; i++)
		spin |= s->sc[i].qp && s->sc[i].hello.mode == PF_LAT &&
			!(s->sc[i].hello.flags & PF_HELLO_WAIT);
	return spin ? xroce_poll_cq(s->e.cq, max, wc) :
		      xroce_wait_cq(s->e.cq, max, wc, 10);
}

static struct pf_sconn *conn_of(struct pf_server *s, uint32_t qp_num)
{
	struct pf_sconn *c = NULL;
	int i;

	for (i = 0; i < PF_MAX_CONNS; i++)
		if (s->sc[i].qp && xroce_qp_num(s->sc[i].qp) == qp_num)
			c = &s->sc[i];
	return c;
}

/* The records traced so far, to the client's echo area (--breakdown). */
static void send_trace(struct pf_server *s, struct pf_sconn *c)
{
	struct xroce_trace_rec *r = (void *)(s->e.buf + PF_BUF / 2 + PF_TRACE_OFF);
	int n = xroce_trace_take(s->e.dev, r, (int)PF_TRACE_MAX);

	if (n < 0)
		n = 0;
	xr_post_write(c->qp, s->e.mr->lkey, 0, r, (uint32_t)(n * sizeof(*r)),
		c->hello.addr + PF_TRACE_OFF, c->hello.rkey, true, PF_IMM_TRACE);
}

/* A client's WRITE_WITH_IMM arrived: echo DONE (it closes then), send our
 * trace, or in lat mode the same number of bytes with the same immediate. */
static void serve(struct pf_server *s, const struct xroce_wc *wc)
{
	struct pf_sconn *c = conn_of(s, wc->qp_num);

	if (!c || wc->opcode != XROCE_WC_RECV_RDMA_WITH_IMM)
		return;
	xr_post_empty_recvs(c->qp, 1);
	if (wc->imm_data == PF_IMM_DONE)
		xr_post_write(c->qp, s->e.mr->lkey, 0, NULL, 0, c->hello.addr, c->hello.rkey,
			true, PF_IMM_DONE);
	else if (wc->imm_data == PF_IMM_TRACE)
		send_trace(s, c);
	else if (c->hello.mode == PF_LAT)
		xr_post_write(c->qp, s->e.mr->lkey, 0, s->e.buf + PF_BUF / 2, wc->byte_len,
			c->hello.addr, c->hello.rkey, true, wc->imm_data);
}

/* Destroy the connections the clients closed; true when --once and the
 * last one is gone. */
static bool reap_closed(struct pf_server *s)
{
	int i;

	for (i = 0; i < PF_MAX_CONNS; i++) {
		if (!s->sc[i].qp || xroce_qp_state(s->sc[i].qp) == XROCE_QPS_RTS)
			continue;
		xroce_destroy_qp(s->sc[i].qp);
		s->sc[i].qp = NULL;
		if (s->o->once) {
			bool any = false;
			int j;

			for (j = 0; j < PF_MAX_CONNS; j++)
				any |= s->sc[j].qp != NULL;
			if (!any)
				return true;
		}
	}
	return false;
}

int pf_server(const struct pf_opts *o)
{
	struct pf_server s;
	struct xroce_wc wc[64];
	int n, k, rc;

	memset(&s, 0, sizeof(s));
	s.o = o;
	s.w = (struct pf_welcome){ PF_MAGIC, 0, 0, 0, 0, PF_BUF };
	if (pf_open(o, o->ep.port, &s.e))
		goto fail;
	s.w.addr = (uint64_t)(uintptr_t)s.e.buf;
	s.w.rkey = s.e.mr->rkey;
	if (!o->ep.json)
		printf("xroce perf server: listening on %s port %u\n", o->ep.ifnames[0],
		       o->ep.port);
	fflush(stdout);
	for (;;) {
		if (xr_mono_s() >= s.next_accept) {
			rc = accept_client(&s);
			if (rc < 0)
				goto fail;
			s.next_accept = rc > 0 ? 0 : xr_mono_s() + PF_ACCEPT_EVERY;
			if (rc > 0)
				continue;
		}
		n = next_completions(&s, wc, 64);
		for (k = 0; k < n; k++)
			serve(&s, &wc[k]);
		if (reap_closed(&s))
			break;
	}
	xroce_close_device(s.e.dev);
	return XR_EXIT_OK;
fail:
	if (s.e.dev)
		xroce_close_device(s.e.dev);
	return XR_EXIT_FAIL;
}
