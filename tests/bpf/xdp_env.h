/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * One XDP fixture scenario's world, on top of tests/bpf/world.h: the
 * scene (fixtures/scene.h) installed afresh -- two domains with mmapped
 * memory and event rings, the memory regions, the connection under test,
 * one still in INIT and the sender's side of the same connection, their
 * receive state at the scenario's start PSN / CSN -- and, for scenarios
 * with a liveness check, a private network namespace with our plane
 * addresses configured so that control sockets bind to real addresses.
 * Included once, by bpf_xdp_table.c.
 */
#ifndef XR_TEST_XDP_ENV_H
#define XR_TEST_XDP_ENV_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "contract/abi.h"
#include "rqrecall.h"
#include "frames.h"
#include "world.h"
#include "fixtures/all.h"

#define MAX_EV 512

struct env;

struct rbctx {
	struct env *e;
	int dom_idx;
};

struct env {
	struct xw *w;
	const struct scen *sc;
	int v6;
	uint32_t S, C;            /* start PSN / CSN */
	struct xw_dom dom[2];     /* DOM, DOM2 */
	struct rbctx rbc[2];
	struct xr_evt ev[MAX_EV];
	int ev_dom[MAX_EV];
	int nev, bad_ev;
	struct xr_evt_bind bind_rec;  /* the last BIND record */
	/* DOM's control port and the socket bound to it (K_BIND) */
	uint16_t ctrl_port;
	int ctrl_sock;
	/* the netns to return to when the scenario ran in a private one */
	int old_ns;
	/* ACK events K_FILL left in the ring for the next step */
	int fill;
	/* the last XDP_TX output, for K_LOOP */
	uint8_t last_out[FR_MAX];
	uint32_t last_outn;
	/* the library's receive-recall program (K_RECALL), loaded on use */
	struct xr_rqrecall *rqr;
	/* reporting (quiet: count mismatches, print none) */
	const char *where;
	int stepno, errs, quiet;
};

#define ERR(e, ...)                                                          \
	do {                                                                 \
		if (!(e)->quiet) {                                           \
			print_error("%s v%d start %u step %d (%s): ",         \
				    (e)->sc->name, (e)->v6 ? 6 : 4, (e)->S,   \
				    (e)->stepno, (e)->where);                 \
			print_error(__VA_ARGS__);                            \
			print_error("\n");                                   \
		}                                                            \
		(e)->errs++;                                                 \
	} while (0)

#define EQ(e, what, got, want)                                               \
	do {                                                                 \
		unsigned long long g_ = (unsigned long long)(got);           \
		unsigned long long w_ = (unsigned long long)(want);          \
		if (g_ != w_)                                                \
			ERR(e, "%s = %#llx, want %#llx", what, g_, w_);      \
	} while (0)

static int on_event(void *ctx, void *data, size_t size)
{
	struct rbctx *r = ctx;
	struct env *e = r->e;

	if (size == sizeof(struct xr_evt_bind))
		memcpy(&e->bind_rec, data, size);
	else if (size != sizeof(struct xr_evt))
		e->bad_ev++;
	if (e->nev < MAX_EV) {
		memset(&e->ev[e->nev], 0, sizeof(e->ev[0]));
		memcpy(&e->ev[e->nev], data,
		       size < sizeof(e->ev[0]) ? size : sizeof(e->ev[0]));
		e->ev_dom[e->nev] = r->dom_idx;
	}
	e->nev++;
	return 0;
}

static void drain_events(struct env *e)
{
	e->nev = 0;
	e->bad_ev = 0;
	ring_buffer__consume(e->dom[0].rb);
	ring_buffer__consume(e->dom[1].rb);
}

static uint8_t mem_pattern(size_t i, unsigned dom)
{
	return (uint8_t)(i * 37 + (i >> 8) * 11 + dom * 5 + 0x5a);
}

static int make_domain(struct env *e, int i, uint32_t dom, uint32_t pages)
{
	/* No fair-share limit in this world (t_evq fills the ring from one
	 * connection): tests/bpf/bpf_keyed.c tests the shares. */
	struct xr_domain d = { .mem_bytes = (uint64_t)pages * XR_PAGE_SIZE,
			       .owner_pid = (uint32_t)getpid(),
			       .ctrl_port = i == 0 ? e->ctrl_port : 0,
			       .evq_share = 1u << 30 };

	e->rbc[i].e = e;
	e->rbc[i].dom_idx = i;
	if (xw_dom_mem(e->w, &e->dom[i], dom, pages, mem_pattern) ||
	    xw_dom_evq(e->w, &e->dom[i], dom, on_event, &e->rbc[i]) ||
	    xw_dom_register(e->w, dom, &d))
		return -errno;
	return 0;
}

static void set_addrs(uint8_t out[][16], const struct fr_ep *eps, int v6)
{
	int i;

	for (i = 0; i < 2; i++) {
		memset(out[i], 0, 16);
		if (v6) {
			memcpy(out[i], eps[i].ip, 16);
		} else {
			out[i][10] = out[i][11] = 0xff;
			memcpy(out[i] + 12, eps[i].ip, 4);
		}
	}
}

static int make_conn(struct env *e, uint32_t id, uint32_t state, int sender)
{
	int cv6 = e->v6 && !e->sc->conn_v4;
	struct xr_conn c = {
		.domain = DOM, .pd = PD, .state = state,
		.peer_conn = sender ? CONN : PEER_CONN,
		.rx_token = sender ? TX_TOKEN : RX_TOKEN,
		.tx_token = sender ? RX_TOKEN : TX_TOKEN,
		.npeer = 2, .family = cv6 ? 6 : 4,
		.peer_sport_lo = sender ? SPORT_LO_B : SPORT_LO,
		.peer_sport_n = SPORT_N,
		.flags = sender ? 0 : e->sc->conn_flags,
	};

	if (sender)
		set_addrs(c.peer_addr, cv6 ? local6 : local4, cv6);
	else
		set_addrs(c.peer_addr, cv6 ? peer6 : peer4, cv6);
	return xw_conn_add(e->w, id, &c);
}

/* Control address ca (enum caddr) as xr_ctrl_open stores it in struct
 * xr_domain.ctrl_addr: 16 bytes, IPv4 as ::ffff:a.b.c.d, all zero for the
 * wildcard. */
static void ctrl_addr_of(int v6, uint8_t ca, uint8_t out[16])
{
	static const uint8_t lo4[4] = { 127, 0, 0, 1 };
	static const uint8_t lo6[16] = { [15] = 1 };
	const uint8_t *a4 = NULL;

	memset(out, 0, 16);
	switch (ca) {
	case CA_PLANE0:
	case CA_PLANE1:
		if (v6)
			memcpy(out, local6[ca - CA_PLANE0].ip, 16);
		else
			a4 = local4[ca - CA_PLANE0].ip;
		break;
	case CA_LO:
		if (v6)
			memcpy(out, lo6, 16);
		else
			a4 = lo4;
		break;
	case CA_LO_X:
		if (v6)
			a4 = lo4;
		else
			memcpy(out, lo6, 16);
		break;
	default: /* CA_ANY */
		break;
	}
	if (a4) {
		out[10] = out[11] = 0xff;
		memcpy(out + 12, a4, 4);
	}
}

/* A control socket bound to port on the control address ca. */
static int ctrl_socket(int v6, uint16_t port, uint8_t ca)
{
	uint8_t a[16];

	ctrl_addr_of(v6, ca, a);
	return xw_ctrl_socket(a, port);
}

/* Our plane addresses (local4 / local6) on a veth in the private netns,
 * so that control sockets bind to real addresses (no IP_FREEBIND). */
static int netns_addrs(void)
{
	char cmd[1024], a[2][2][INET6_ADDRSTRLEN];
	int i;

	for (i = 0; i < 2; i++) {
		inet_ntop(AF_INET, local4[i].ip, a[0][i], sizeof(a[0][i]));
		inet_ntop(AF_INET6, local6[i].ip, a[1][i], sizeof(a[1][i]));
	}
	snprintf(cmd, sizeof(cmd),
		 "set -e; "
		 "ip link add xrt0 type veth peer name xrt1; "
		 "ip link set xrt0 up; ip link set xrt1 up; "
		 "ip addr add %s/24 dev xrt0; ip addr add %s/24 dev xrt0; "
		 "ip -6 addr add %s/64 dev xrt0 nodad; "
		 "ip -6 addr add %s/64 dev xrt0 nodad",
		 a[0][0], a[0][1], a[1][0], a[1][1]);
	if (system(cmd) != 0) {
		print_error("cannot configure the private netns: %s\n", cmd);
		return -EIO;
	}
	return 0;
}

/* Rewrite DOM's xr_domains entry (which clears alive_until_ns). */
static int set_dom(struct env *e, uint16_t ctrl_port, uint8_t ca)
{
	struct xr_domain d = { .mem_bytes = (uint64_t)DOM_PAGES * XR_PAGE_SIZE,
			       .owner_pid = (uint32_t)getpid(),
			       .ctrl_port = ctrl_port, .evq_share = 1u << 30 };

	ctrl_addr_of(e->v6, ca, d.ctrl_addr);
	return xw_dom_register(e->w, DOM, &d);
}

static void env_down(struct env *e)
{
	uint32_t conns[3] = { CONN, CONN_INIT, PEER_CONN };
	int i;

	if (!e || !e->w)
		return;
	for (i = 0; i < 2; i++)
		xw_dom_free(e->w, &e->dom[i], 1);
	if (e->ctrl_sock >= 0)
		close(e->ctrl_sock);
	xw_netns_leave(&e->old_ns);
	for (i = 0; i < MR_N; i++) {
		/* the receives K_POSTRQ may have posted under these MSNs */
		struct xr_rq_key k = { .conn = CONN, .stream = RQ_STREAM,
				       .slot = (uint16_t)(mrs[i].key % XR_RQ_SLOTS) };

		bpf_map_delete_elem(e->w->rq, &k);
		bpf_map_delete_elem(e->w->mrs, &mrs[i].key);
	}
	xr_rqrecall_close(e->rqr);
	for (i = 0; i < 3; i++) {
		struct xr_evb b = { 0 };

		bpf_map_delete_elem(e->w->conns, &conns[i]);
		/* K_RQDONE's guard, and the records counted */
		if (e->w->evb >= 0)
			bpf_map_update_elem(e->w->evb, &conns[i], &b, BPF_ANY);
	}
	free(e);
}

static struct env *env_up(struct xw *w, const struct scen *sc, int v6,
			  uint32_t S, uint32_t C, uint16_t cfg_flags)
{
	struct env *e = calloc(1, sizeof(*e));
	int i;

	if (!e)
		return NULL;
	e->w = w;
	e->sc = sc;
	e->v6 = v6;
	e->S = S;
	e->C = C;
	e->dom[0].mem_fd = e->dom[1].mem_fd = -1;
	e->dom[0].evq_fd = e->dom[1].evq_fd = -1;
	e->ctrl_sock = -1;
	e->old_ns = -1;
	if (sc->ctrl) {
		if (xw_netns_enter(&e->old_ns) || netns_addrs())
			goto fail;
		/* a port nobody is bound to */
		e->ctrl_port = xw_free_port();
		if (!e->ctrl_port)
			goto fail;
	}
	if (xw_set_cfg(w, cfg_flags, 0) || make_domain(e, 0, DOM, DOM_PAGES) ||
	    make_domain(e, 1, DOM2, DOM2_PAGES))
		goto fail;
	for (i = 0; i < MR_N; i++) {
		if (mrs[i].dom_idx < 0)
			continue;
		if (xw_mr_add(w, mrs[i].key, &mrs[i].mr))
			goto fail;
	}
	if (make_conn(e, CONN, XR_CONN_RTS, 0) ||
	    make_conn(e, CONN_INIT, XR_CONN_INIT, 0) ||
	    make_conn(e, PEER_CONN, XR_CONN_RTS, 1) ||
	    xw_rx_reset(w, CONN, S, C) || xw_rx_reset(w, CONN_INIT, S, C))
		goto fail;
	drain_events(e);
	return e;
fail:
	print_error("set-up failed: %s\n", strerror(errno));
	env_down(e);
	return NULL;
}

/* A test: one scenario in one family from one start. */
struct tcase {
	struct xw *w;
	const struct scen *sc;
	int v6;
	uint32_t S, C;
	char name[64];
};

/* ---- reading state --------------------------------------------------------- */

static void stats_read(struct xw *w, uint64_t *out)
{
	assert_int_equal(xw_stats(w, out), 0);
}

static void rx_read(struct env *e, uint32_t id, struct xr_rx_state *rx)
{
	memset(rx, 0, sizeof(*rx));
	assert_int_equal(bpf_map_lookup_elem(e->w->rx, &id, rx), 0);
}

#endif /* XR_TEST_XDP_ENV_H */
