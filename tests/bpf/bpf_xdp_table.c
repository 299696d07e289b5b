// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Table-driven tests of the XDP program xroce_xdp (bpf/xroce.bpf.c), run on
 * crafted frames through bpf_prog_test_run_opts, in the manner of katran's
 * golden-packet tables and the kernel's selftests/bpf.  This file is the
 * engine; the rows are in xdp_rows.h, frames are built in frames.h.
 *
 * The program is loaded once.  A scenario is a list of steps run in order
 * against one freshly set-up world (two domains with mmapped memory and
 * event rings, memory regions, a connection, its receive state, and the
 * sender's side of the same connection for the replies fed back).  Each
 * step is one frame (or an action: bind/close a control socket, rewrite a
 * domain's liveness settings, wait, fill the event ring) and says what must
 * come of it:
 *   - the verdict (XDP_TX / XDP_DROP / XDP_PASS);
 *   - for XDP_TX, the reply, taken apart byte by byte: MACs, addresses and
 *     ports swapped, lengths, IPv4 header and UDP checksums (checked with an
 *     independent RFC 1071 sum, tests/bpf/frames.h), type, flags, reason,
 *     dst_conn, token, cack, ack_psn, ts_echo, SACK words, counters, csn_cum,
 *     nak_csn; for XDP_PASS, the frame byte-for-byte untouched;
 *   - the receive window of the packet's path afterwards (read from xr_rx),
 *     or, for a packet that must not touch it, the whole receive state
 *     unchanged;
 *   - memory: a shadow copy of every domain's memory is kept; a step that
 *     places writes its payload into the shadow at the position the test
 *     computes from the region table, and after every step each domain's
 *     whole mmapped memory must equal its shadow byte for byte;
 *   - the delta of every xr_stats counter (summed over CPUs); counters a row
 *     does not name must not move;
 *   - the ring-buffer events (RECV, ACK/NAK, PROBE_REPLY), exactly.
 * PSNs and CSNs in the tables are relative to the scenario's start, so most
 * scenarios run four times: IPv4 and IPv6, from PSN 1000 / CSN 5000 and from
 * PSN 0xfffffffe / CSN 0xfffffffc (32-bit wrap-around, and the CSN ring's
 * index wrap).  The liveness scenario runs in a private network namespace
 * (unshare) with our plane addresses configured, so that its control
 * sockets bind to real addresses.
 *
 * Also: a checksum sweep over every payload length 1..1600 (and a few near
 * the largest frame) with a good and a corrupted checksum, and figures the
 * team wants printed: the verifier's processed-instruction count and the
 * cost per packet of the data path and of the ACK path.
 *
 *   sudo build/tests/bpf_xdp_table          (skips unless root)
 *   XR_TEST_FILTER=sack build/tests/bpf_xdp_table   run matching tests only
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "contract/abi.h"
#include "xroce.skel.h"
#include "frames.h"
#include "xdp_rows.h"

/* ---- the program, loaded once ------------------------------------------ */

struct suite {
	struct xroce *skel;
	int prog_fd;
	int ncpu;
	unsigned long verified;  /* "processed N insns" */
	double load_s;
};

/* ---- one scenario's world ---------------------------------------------- */

#define MAX_EV 512

struct env;

struct rbctx {
	struct env *e;
	int dom_idx;
};

struct env {
	struct suite *su;
	const struct scen *sc;
	int v6;
	uint32_t S, C;            /* start PSN / CSN */
	int mem_fd[2], evq_fd[2];
	uint8_t *mem[2], *shadow[2];
	size_t mem_len[2];
	struct ring_buffer *rb[2];
	struct rbctx rbc[2];
	struct xr_evt ev[MAX_EV];
	int ev_dom[MAX_EV];
	int nev, bad_ev;
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
	/* reporting */
	const char *where;
	int stepno, errs;
};

#define ERR(e, ...)                                                          \
	do {                                                                 \
		print_error("%s v%d start %u step %d (%s): ", (e)->sc->name,  \
			    (e)->v6 ? 6 : 4, (e)->S, (e)->stepno, (e)->where); \
		print_error(__VA_ARGS__);                                    \
		print_error("\n");                                           \
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

	if (size != sizeof(struct xr_evt))
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
	ring_buffer__consume(e->rb[0]);
	ring_buffer__consume(e->rb[1]);
}

static uint8_t mem_pattern(size_t i, unsigned dom)
{
	return (uint8_t)(i * 37 + (i >> 8) * 11 + dom * 5 + 0x5a);
}

static uint8_t payload_byte(uint8_t seed, size_t j)
{
	return (uint8_t)(seed * 0x9d + j * 7 + (j >> 7) * 13 + 1);
}

static int make_domain(struct env *e, int i, uint32_t dom, uint32_t pages)
{
	struct xroce *s = e->su->skel;
	LIBBPF_OPTS(bpf_map_create_opts, mo,
		    .map_flags = BPF_F_MMAPABLE | BPF_F_INNER_MAP);
	/* No fair-share limit in this world (t_evq fills the ring from one
	 * connection): tests/bpf/bpf_keyed.c tests the shares. */
	struct xr_domain d = { .mem_bytes = (uint64_t)pages * XR_PAGE_SIZE,
			       .owner_pid = (uint32_t)getpid(),
			       .ctrl_port = i == 0 ? e->ctrl_port : 0,
			       .evq_share = 1u << 30 };
	size_t j;

	e->mem_len[i] = (size_t)pages * XR_PAGE_SIZE;
	e->mem_fd[i] = bpf_map_create(BPF_MAP_TYPE_ARRAY, "xrt_mem", 4,
				      XR_PAGE_SIZE, pages, &mo);
	if (e->mem_fd[i] < 0)
		return -errno;
	e->mem[i] = mmap(NULL, e->mem_len[i], PROT_READ | PROT_WRITE,
			 MAP_SHARED, e->mem_fd[i], 0);
	if (e->mem[i] == MAP_FAILED) {
		e->mem[i] = NULL;
		return -errno;
	}
	e->shadow[i] = malloc(e->mem_len[i]);
	if (!e->shadow[i])
		return -ENOMEM;
	for (j = 0; j < e->mem_len[i]; j++)
		e->mem[i][j] = mem_pattern(j, dom);
	memcpy(e->shadow[i], e->mem[i], e->mem_len[i]);

	e->evq_fd[i] = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "xrt_evq", 0, 0,
				      XR_EVQ_BYTES, NULL);
	if (e->evq_fd[i] < 0)
		return -errno;
	e->rbc[i].e = e;
	e->rbc[i].dom_idx = i;
	e->rb[i] = ring_buffer__new(e->evq_fd[i], on_event, &e->rbc[i], NULL);
	if (!e->rb[i])
		return -errno;
	if (bpf_map_update_elem(bpf_map__fd(s->maps.xr_mem), &dom, &e->mem_fd[i],
				BPF_ANY) ||
	    bpf_map_update_elem(bpf_map__fd(s->maps.xr_evq), &dom, &e->evq_fd[i],
				BPF_ANY) ||
	    bpf_map_update_elem(bpf_map__fd(s->maps.xr_domains), &dom, &d,
				BPF_ANY))
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
	struct xroce *s = e->su->skel;
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
	return bpf_map_update_elem(bpf_map__fd(s->maps.xr_conns), &id, &c,
				   BPF_ANY) ? -errno : 0;
}

static int reset_rx(struct env *e, uint32_t id)
{
	struct xroce *s = e->su->skel;
	struct xr_rx_state rx;
	uint64_t zero = 0;
	uint32_t i, k;

	memset(&rx, 0, sizeof(rx));
	rx.csn_next = e->C;
	for (i = 0; i < XR_MAX_PATHS; i++)
		rx.path[i].cack = e->S;
	if (bpf_map_update_elem(bpf_map__fd(s->maps.xr_rx), &id, &rx, BPF_ANY))
		return -errno;
	for (i = 0; i < XR_MSG_SLOTS; i++) {
		k = id * XR_MSG_SLOTS + i;
		if (bpf_map_update_elem(bpf_map__fd(s->maps.xr_msgs), &k, &zero,
					BPF_ANY))
			return -errno;
	}
	return 0;
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

/* A UDP socket bound to port (0 = any) on the control address ca, made the
 * way xr_ctrl_open makes the owner's: AF_INET6, dual stack, an IPv4
 * address in its IPv4-mapped form. */
static int ctrl_socket(int v6, uint16_t port, uint8_t ca)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6,
				   .sin6_port = htons(port) };
	int fd = socket(AF_INET6, SOCK_DGRAM, 0), off = 0;

	if (fd < 0)
		return -1;
	setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
	ctrl_addr_of(v6, ca, a6.sin6_addr.s6_addr);
	if (bind(fd, (struct sockaddr *)&a6, sizeof(a6))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Enter a private network namespace with our plane addresses (local4 /
 * local6) configured on a veth and the loopback up, so that control
 * sockets bind to real addresses.  bpf_prog_test_run looks sockets up in
 * the caller's namespace, and the namespace dies with the process (nothing
 * to clean up after a crash); *old_ns is the namespace to return to. */
static int netns_enter(int *old_ns)
{
	char cmd[1024], a[2][2][INET6_ADDRSTRLEN];
	int i;

	for (i = 0; i < 2; i++) {
		inet_ntop(AF_INET, local4[i].ip, a[0][i], sizeof(a[0][i]));
		inet_ntop(AF_INET6, local6[i].ip, a[1][i], sizeof(a[1][i]));
	}
	snprintf(cmd, sizeof(cmd),
		 "set -e; ip link set lo up; "
		 "ip link add xrt0 type veth peer name xrt1; "
		 "ip link set xrt0 up; ip link set xrt1 up; "
		 "ip addr add %s/24 dev xrt0; ip addr add %s/24 dev xrt0; "
		 "ip -6 addr add %s/64 dev xrt0 nodad; "
		 "ip -6 addr add %s/64 dev xrt0 nodad",
		 a[0][0], a[0][1], a[1][0], a[1][1]);
	*old_ns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (*old_ns < 0)
		return -errno;
	if (unshare(CLONE_NEWNET)) {
		close(*old_ns);
		*old_ns = -1;
		return -errno;
	}
	if (system(cmd) != 0) {
		print_error("cannot configure the private netns: %s\n", cmd);
		return -EIO;
	}
	return 0;
}

static void netns_leave(int *old_ns)
{
	if (*old_ns < 0)
		return;
	if (setns(*old_ns, CLONE_NEWNET))
		print_error("cannot return to the original netns: %s\n",
			    strerror(errno));
	close(*old_ns);
	*old_ns = -1;
}

/* Rewrite DOM's xr_domains entry (which clears alive_until_ns). */
static int set_dom(struct env *e, uint16_t ctrl_port, uint8_t ca)
{
	struct xr_domain d = { .mem_bytes = (uint64_t)DOM_PAGES * XR_PAGE_SIZE,
			       .owner_pid = (uint32_t)getpid(),
			       .ctrl_port = ctrl_port, .evq_share = 1u << 30 };
	uint32_t dom = DOM;

	ctrl_addr_of(e->v6, ca, d.ctrl_addr);
	return bpf_map_update_elem(bpf_map__fd(e->su->skel->maps.xr_domains),
				   &dom, &d, BPF_ANY) ? -errno : 0;
}

static uint16_t sock_port(int fd)
{
	struct sockaddr_in6 a;
	socklen_t l = sizeof(a);

	if (getsockname(fd, (struct sockaddr *)&a, &l))
		return 0;
	/* sin_port and sin6_port sit at the same offset */
	return ntohs(a.sin6_port);
}

static void env_down(struct env *e)
{
	struct xroce *s;
	uint32_t doms[2] = { DOM, DOM2 }, conns[3] = { CONN, CONN_INIT,
							PEER_CONN };
	int i;

	if (!e || !e->su)
		return;
	s = e->su->skel;
	for (i = 0; i < 2; i++) {
		bpf_map_delete_elem(bpf_map__fd(s->maps.xr_mem), &doms[i]);
		bpf_map_delete_elem(bpf_map__fd(s->maps.xr_evq), &doms[i]);
		bpf_map_delete_elem(bpf_map__fd(s->maps.xr_domains), &doms[i]);
		if (e->rb[i])
			ring_buffer__free(e->rb[i]);
		if (e->mem[i])
			munmap(e->mem[i], e->mem_len[i]);
		free(e->shadow[i]);
		if (e->mem_fd[i] > 0)
			close(e->mem_fd[i]);
		if (e->evq_fd[i] > 0)
			close(e->evq_fd[i]);
	}
	if (e->ctrl_sock >= 0)
		close(e->ctrl_sock);
	netns_leave(&e->old_ns);
	for (i = 0; i < MR_N; i++)
		bpf_map_delete_elem(bpf_map__fd(s->maps.xr_mrs), &mrs[i].key);
	for (i = 0; i < 3; i++)
		bpf_map_delete_elem(bpf_map__fd(s->maps.xr_conns), &conns[i]);
	free(e);
}

static struct env *env_up(struct suite *su, const struct scen *sc, int v6,
			  uint32_t S, uint32_t C, uint16_t cfg_flags)
{
	struct xr_cfg cfg = { .udp_port = PORT, .flags = cfg_flags };
	struct env *e = calloc(1, sizeof(*e));
	uint32_t zero = 0;
	int i;

	if (!e)
		return NULL;
	e->su = su;
	e->sc = sc;
	e->v6 = v6;
	e->S = S;
	e->C = C;
	e->mem_fd[0] = e->mem_fd[1] = e->evq_fd[0] = e->evq_fd[1] = -1;
	e->ctrl_sock = -1;
	e->old_ns = -1;
	if (sc->ctrl) {
		/* a port nobody is bound to: bind to 0, note, close */
		int fd;

		if (netns_enter(&e->old_ns))
			goto fail;
		fd = ctrl_socket(v6, 0, CA_ANY);

		if (fd < 0)
			goto fail;
		e->ctrl_port = sock_port(fd);
		close(fd);
	}
	if (bpf_map_update_elem(bpf_map__fd(su->skel->maps.xr_cfg), &zero, &cfg,
				BPF_ANY) ||
	    make_domain(e, 0, DOM, DOM_PAGES) ||
	    make_domain(e, 1, DOM2, DOM2_PAGES))
		goto fail;
	for (i = 0; i < MR_N; i++) {
		if (mrs[i].dom_idx < 0)
			continue;
		if (bpf_map_update_elem(bpf_map__fd(su->skel->maps.xr_mrs),
					&mrs[i].key, &mrs[i].mr, BPF_ANY))
			goto fail;
	}
	if (make_conn(e, CONN, XR_CONN_RTS, 0) ||
	    make_conn(e, CONN_INIT, XR_CONN_INIT, 0) ||
	    make_conn(e, PEER_CONN, XR_CONN_RTS, 1) || reset_rx(e, CONN) ||
	    reset_rx(e, CONN_INIT))
		goto fail;
	drain_events(e);
	return e;
fail:
	print_error("set-up failed: %s\n", strerror(errno));
	env_down(e);
	return NULL;
}

/* ---- reading state --------------------------------------------------------- */

static void stats_read(struct suite *su, uint64_t *out)
{
	int fd = bpf_map__fd(su->skel->maps.xr_stats);
	uint64_t *v = calloc((size_t)su->ncpu, sizeof(*v));
	uint32_t k;
	int c;

	assert_non_null(v);
	for (k = 0; k < XR_STAT_MAX; k++) {
		out[k] = 0;
		assert_int_equal(bpf_map_lookup_elem(fd, &k, v), 0);
		for (c = 0; c < su->ncpu; c++)
			out[k] += v[c];
	}
	free(v);
}

static void rx_read(struct env *e, uint32_t id, struct xr_rx_state *rx)
{
	memset(rx, 0, sizeof(*rx));
	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(e->su->skel->maps.xr_rx),
					     &id, rx),
			 0);
}

/* ---- building frames ------------------------------------------------------- */

/* What the test put into a frame, for checking what came out. */
struct built {
	uint32_t psn, csn, ts, msg_id, msg_len, msg_off, imm, plen, seq;
	uint64_t raddr, pos;
	uint16_t stream;
	uint8_t opcode, path, seed, tclass;
	int dom_idx;            /* domain the region belongs to, -1 none */
	size_t payload_off;     /* of the payload in the frame */
};

static size_t xhdr_len(uint8_t kind)
{
	switch (kind) {
	case K_ACK:
	case K_NAK:
		return sizeof(struct xr_ack_hdr);
	case K_PROBE:
	case K_PROBE_REPLY:
		return sizeof(struct xr_probe_hdr);
	default:
		return sizeof(struct xr_data_hdr);
	}
}

/* Turn an IPv6 frame into a first fragment (fragment header inserted). */
static size_t make_frag6(uint8_t *f, size_t n)
{
	uint8_t tmp[FR_MAX];
	size_t l4 = FR_ETH + FR_IP6;

	memcpy(tmp, f, n);
	memcpy(f + l4 + 8, tmp + l4, n - l4);
	f[l4] = 17;       /* next header: UDP */
	f[l4 + 1] = 0;
	fr_put16(f + l4 + 2, 0x0001); /* offset 0, M */
	fr_put32(f + l4 + 4, 0xabcdef01);
	f[FR_ETH + 6] = 44;
	fr_put16(f + FR_ETH + 4, fr_get16(f + FR_ETH + 4) + 8);
	return n + 8;
}

/* Build the frame of step st (repetition r) into f; returns its length. */
static size_t build(struct env *e, const struct step *st, int idx, int r,
		    uint8_t *f, struct built *b)
{
	const struct fr_ep *peers = e->v6 ? peer6 : peer4;
	const struct fr_ep *locals = e->v6 ? local6 : local4;
	struct fr_ep src, dst;
	uint8_t body[FR_MAX];
	size_t blen = xhdr_len(st->kind), n, l4, j;
	uint32_t conn = st->conn ? st->conn : CONN;
	uint64_t token = st->bad_token ? RX_TOKEN ^ 1 : RX_TOKEN;
	const struct mrdef *m = &mrs[st->rk];

	memset(b, 0, sizeof(*b));
	src = peers[st->src ? st->src : st->plane];
	dst = locals[st->plane];
	if (st->kind == K_ACK || st->kind == K_NAK ||
	    st->kind == K_PROBE_REPLY) {
		/* replies: from the peer's data port to our entropy port */
		src.port = PORT;
		dst.port = (uint16_t)(SPORT_LO_B + (st->path & 15));
	} else {
		src.port = (uint16_t)(SPORT_LO + (st->path & 15));
		dst.port = PORT;
	}
	if (st->sport)
		src.port = st->sport;
	if (st->dport)
		dst.port = st->dport;
	b->path = st->path;
	b->tclass = DSCP | st->ecn;
	b->psn = e->S + st->psn + (uint32_t)r;
	b->csn = e->C + st->csn + (uint32_t)r;
	b->ts = 0x7e570000u + (uint32_t)idx * 0x100 + (uint32_t)r;
	b->seed = (uint8_t)((st->seed ? st->seed : idx + 1) + r);
	b->plen = st->plen;
	b->msg_id = st->msg_id;
	b->msg_len = st->msg_len;
	b->msg_off = st->msg_off + (uint32_t)r * st->plen;
	b->imm = st->imm ? st->imm : 0xc0de0000u ^ st->msg_id;
	b->stream = 7;
	b->opcode = st->op ? (uint8_t)st->op : XR_OP_WRITE;
	b->raddr = st->abs ? st->raddr
			   : m->mr.iova + st->roff + (uint64_t)r * st->plen;
	b->dom_idx = m->dom_idx;
	b->pos = m->mr.mem_off + (b->raddr - m->mr.iova);
	b->seq = st->seq;

	if (st->kind == K_LOOP) {
		memcpy(f, e->last_out, e->last_outn);
		return e->last_outn;
	}
	if (st->kind == K_TCP)
		return fr_tcp_syn(f, e->v6, &src, &dst);
	if (st->kind == K_ARP)
		return fr_arp(f, &peer4[0], &local4[0]);

	memset(body, 0, sizeof(body));
	switch (st->kind) {
	case K_ACK:
	case K_NAK:
		body[0] = XR_VER_TYPE(st->kind == K_ACK ? XR_T_ACK : XR_T_NAK);
		body[1] = st->a.flags;
		body[2] = st->a.reason;
		body[3] = st->path;
		fr_put32(body + 4, conn);
		fr_put64(body + 8, token);
		fr_put32(body + 16, st->a.cack);
		fr_put32(body + 20, st->a.ack_psn);
		fr_put32(body + 24, st->a.ts_echo);
		fr_put32(body + 28, st->a.rate);
		for (j = 0; j < 4; j++)
			fr_put64(body + 32 + 8 * j, st->a.sack[j]);
		fr_put32(body + 64, st->a.ce);
		fr_put32(body + 68, st->a.rx);
		fr_put32(body + 72, st->a.csn_cum);
		fr_put32(body + 76, st->a.nak_csn);
		break;
	case K_PROBE:
	case K_PROBE_REPLY:
		body[0] = XR_VER_TYPE(st->kind == K_PROBE ? XR_T_PROBE
							  : XR_T_PROBE_REPLY);
		body[3] = st->path;
		fr_put32(body + 4, conn);
		fr_put64(body + 8, token);
		fr_put32(body + 16, st->seq);
		fr_put32(body + 20, b->ts);
		fr_put32(body + 24, st->a.rate);
		break;
	default: /* data */
		body[0] = XR_VER_TYPE(XR_T_DATA);
		body[1] = st->flags;
		body[2] = b->opcode;
		body[3] = st->path;
		fr_put32(body + 4, conn);
		fr_put64(body + 8, token);
		fr_put32(body + 16, b->psn);
		fr_put32(body + 20, e->S + st->base);
		fr_put32(body + 24, b->csn);
		fr_put32(body + 28, b->ts);
		fr_put64(body + 32, b->raddr);
		fr_put32(body + 40, m->key);
		fr_put32(body + 44, b->msg_id);
		fr_put32(body + 48, b->msg_len);
		fr_put32(body + 52, b->msg_off);
		fr_put32(body + 56, b->imm);
		fr_put16(body + 60, b->stream);
		for (j = 0; j < st->plen; j++)
			body[blen + j] = payload_byte(b->seed, j);
		blen += st->plen;
		break;
	}
	if (st->vt)
		body[0] = (uint8_t)st->vt;

	n = fr_udp(f, e->v6, &src, &dst, b->tclass, body, blen);
	l4 = n - FR_UDP - blen;
	b->payload_off = l4 + FR_UDP + xhdr_len(st->kind);

	if (st->kind == K_FRAG) {
		if (!e->v6) {
			fr_put16(f + FR_ETH + 6, 0x2000); /* MF, offset 0 */
			fr_put16(f + FR_ETH + 10, 0);
			fr_put16(f + FR_ETH + 10,
				 (uint16_t)~fr_sum(f + FR_ETH, FR_IP4, 0));
		} else {
			n = make_frag6(f, n);
		}
	}
	if (st->corrupt)
		f[b->payload_off + st->corrupt - 1] ^= 0x01;
	if (st->csum == CS_FLIP)
		f[l4 + 6] ^= 0x01;
	else if (st->csum == CS_ZERO)
		fr_put16(f + l4 + 6, 0);
	if (st->udp_len_delta)
		fr_put16(f + l4 + 4,
			 (uint16_t)(fr_get16(f + l4 + 4) + st->udp_len_delta));
	if (st->junk) {
		memset(f + n, 0xee, (size_t)st->junk);
		n += (size_t)st->junk;
	}
	switch (st->trunc) {
	case TR_ETH:
		n = FR_ETH;
		break;
	case TR_IP:
		n = FR_ETH + 10;
		break;
	case TR_UDP_HALF:
		n = l4 + 4;
		break;
	case TR_UDP:
		n = l4 + FR_UDP;
		break;
	case TR_X1:
		n = l4 + FR_UDP + 1;
		break;
	case TR_HDR_M1:
		n = l4 + FR_UDP + xhdr_len(st->kind) - 1;
		break;
	case TR_PAYLOAD:
		n = b->payload_off + st->plen / 2;
		break;
	}
	return n;
}

/* ---- checking ---------------------------------------------------------------- */

/* The reply must be the input turned around: Ethernet, IP, UDP. */
static void check_turnaround(struct env *e, const uint8_t *in,
			     const uint8_t *out, uint32_t outn, size_t body_len,
			     struct fr_view *v)
{
	size_t l3 = e->v6 ? FR_IP6 : FR_IP4;
	const uint8_t *ip = out + FR_ETH;
	const uint8_t *iip = in + FR_ETH;
	uint8_t tc_in = fr_tclass(in, e->v6);

	if (fr_decode(out, outn, v)) {
		ERR(e, "reply is not an Ethernet/IP/UDP frame");
		return;
	}
	EQ(e, "reply is IPv6", v->v6, e->v6);
	EQ(e, "reply length", outn, FR_ETH + l3 + FR_UDP + body_len);
	if (memcmp(out, in + 6, 6) || memcmp(out + 6, in, 6))
		ERR(e, "MACs not swapped");
	EQ(e, "ethertype", fr_get16(out + 12), fr_get16(in + 12));
	EQ(e, "traffic class (DSCP kept, ECN cleared)", fr_tclass(out, e->v6),
	   tc_in & ~3);
	if (!e->v6) {
		EQ(e, "ip version/ihl", ip[0], 0x45);
		EQ(e, "ip tot_len", fr_get16(ip + 2), FR_IP4 + FR_UDP + body_len);
		EQ(e, "ip frag_off (DF)", fr_get16(ip + 6), 0x4000);
		EQ(e, "ip ttl", ip[8], 64);
		EQ(e, "ip protocol", ip[9], 17);
		if (memcmp(ip + 12, iip + 16, 4) || memcmp(ip + 16, iip + 12, 4))
			ERR(e, "IPv4 addresses not swapped");
		if (!fr_ip4_csum_ok(out))
			ERR(e, "IPv4 header checksum wrong (%#x)",
			    fr_get16(ip + 10));
	} else {
		EQ(e, "ip6 version", ip[0] >> 4, 6);
		EQ(e, "ip6 flow label", fr_get32(ip) & 0xfffff, 0x5a5a5);
		EQ(e, "ip6 payload_len", fr_get16(ip + 4), FR_UDP + body_len);
		EQ(e, "ip6 next header", ip[6], 17);
		EQ(e, "ip6 hop limit", ip[7], 64);
		if (memcmp(ip + 8, iip + 24, 16) || memcmp(ip + 24, iip + 8, 16))
			ERR(e, "IPv6 addresses not swapped");
	}
	EQ(e, "udp source", fr_get16(out + v->l4), fr_get16(in + v->l4 + 2));
	EQ(e, "udp dest", fr_get16(out + v->l4 + 2), fr_get16(in + v->l4));
	EQ(e, "udp len", fr_get16(out + v->l4 + 4), FR_UDP + body_len);
	if (!fr_udp_csum_ok(out, v))
		ERR(e, "UDP checksum wrong (%#x)", fr_get16(out + v->l4 + 6));
}

static void check_ack(struct env *e, const struct step *st,
		      const struct built *b, const uint8_t *in,
		      const uint8_t *out, uint32_t outn, int values)
{
	struct fr_view v;
	const uint8_t *a;
	int j;

	check_turnaround(e, in, out, outn, sizeof(struct xr_ack_hdr), &v);
	if (e->errs && v.len == 0)
		return;
	if (outn < v.body + sizeof(struct xr_ack_hdr))
		return;
	a = out + v.body;
	EQ(e, "ver_type", a[0], XR_VER_TYPE(st->rt));
	EQ(e, "path", a[3], b->path);
	EQ(e, "dst_conn", fr_get32(a + 4), PEER_CONN);
	EQ(e, "token", fr_get64(a + 8), TX_TOKEN);
	EQ(e, "ack_psn", fr_get32(a + 20), b->psn);
	EQ(e, "ts_echo", fr_get32(a + 24), b->ts);
	EQ(e, "rate_hint", fr_get32(a + 28), 0);
	EQ(e, "nak_csn", fr_get32(a + 76), st->rreason ? b->csn : 0);
	if (!values)
		return;
	EQ(e, "flags", a[1], st->rfl);
	EQ(e, "reason", a[2], st->rreason);
	EQ(e, "cack", fr_get32(a + 16), e->S + st->w.cack);
	for (j = 0; j < 4; j++) {
		char what[16];

		snprintf(what, sizeof(what), "sack[%d]", j);
		EQ(e, what, fr_get64(a + 32 + 8 * j), st->w.sack[j]);
	}
	EQ(e, "ce_pkts", fr_get32(a + 64), st->w.ce);
	EQ(e, "rx_pkts", fr_get32(a + 68), st->w.rx);
	EQ(e, "csn_cum", fr_get32(a + 72), e->C + st->w.csn);
}

static void check_probe_reply(struct env *e, const struct built *b,
			      const uint8_t *in, const uint8_t *out,
			      uint32_t outn)
{
	struct fr_view v;
	const uint8_t *p;

	check_turnaround(e, in, out, outn, sizeof(struct xr_probe_hdr), &v);
	if (outn < v.body + sizeof(struct xr_probe_hdr))
		return;
	p = out + v.body;
	EQ(e, "ver_type", p[0], XR_VER_TYPE(XR_T_PROBE_REPLY));
	EQ(e, "flags", p[1], 0);
	EQ(e, "rsvd0", p[2], 0);
	EQ(e, "path", p[3], b->path);
	EQ(e, "dst_conn", fr_get32(p + 4), PEER_CONN);
	EQ(e, "token", fr_get64(p + 8), TX_TOKEN);
	EQ(e, "seq", fr_get32(p + 16), b->seq);
	EQ(e, "ts", fr_get32(p + 20), b->ts);
	EQ(e, "rate_hint", fr_get32(p + 24), 0);
	EQ(e, "rsvd1", fr_get32(p + 28), 0);
}

static void check_events(struct env *e, const struct step *st,
			 const struct built *b, const uint8_t *in, size_t n)
{
	const struct xr_evt *ev = &e->ev[0];
	struct fr_view v;
	const uint8_t *a;
	int j;

	if (e->bad_ev)
		ERR(e, "%d events of the wrong size", e->bad_ev);
	if (st->ev == EV_NONE) {
		if (e->nev)
			ERR(e, "%d unexpected events (first type %u)", e->nev,
			    ev->type);
		return;
	}
	if (e->nev != 1) {
		ERR(e, "%d events, want 1", e->nev);
		if (!e->nev)
			return;
	}
	EQ(e, "event domain", e->ev_dom[0], 0);
	if (!ev->rx_ns)
		ERR(e, "event rx_ns is 0");
	if (st->ev == EV_RECV) {
		const struct mrdef *m = &mrs[st->rk];

		EQ(e, "event type", ev->type, XR_EVT_RECV);
		EQ(e, "event conn", ev->conn, CONN);
		EQ(e, "event path", ev->path, b->path);
		EQ(e, "event flags", ev->flags, 0);
		EQ(e, "recv.msg_id", ev->recv.msg_id, b->msg_id);
		EQ(e, "recv.msg_len", ev->recv.msg_len, b->msg_len);
		EQ(e, "recv.imm", ev->recv.imm, b->imm);
		EQ(e, "recv.stream", ev->recv.stream, b->stream);
		EQ(e, "recv.opcode", ev->recv.opcode, b->opcode);
		EQ(e, "recv.raddr_end", ev->recv.raddr_end,
		   m->mr.iova + st->recv_end);
		EQ(e, "recv.rkey", ev->recv.rkey, m->key);
		return;
	}
	/* ACK / NAK / PROBE_REPLY: the event is the frame's body in host
	 * order; decode the input independently. */
	if (fr_decode(in, n, &v)) {
		ERR(e, "cannot decode the input frame");
		return;
	}
	a = in + v.body;
	EQ(e, "event conn", ev->conn,
	   st->kind == K_LOOP ? PEER_CONN : CONN);
	EQ(e, "event path", ev->path, a[3]);
	if (st->ev == EV_PROBE) {
		EQ(e, "event type", ev->type, XR_EVT_PROBE_REPLY);
		EQ(e, "probe.seq", ev->probe.seq, fr_get32(a + 16));
		EQ(e, "probe.ts", ev->probe.ts, fr_get32(a + 20));
		EQ(e, "probe.rate_hint", ev->probe.rate_hint, fr_get32(a + 24));
		return;
	}
	EQ(e, "event type", ev->type,
	   (a[0] & 0xf) == XR_T_NAK ? XR_EVT_NAK : XR_EVT_ACK);
	EQ(e, "event flags", ev->flags, a[1]);
	EQ(e, "ack.reason", ev->ack.reason, a[2]);
	EQ(e, "ack.cack", ev->ack.cack, fr_get32(a + 16));
	EQ(e, "ack.ack_psn", ev->ack.ack_psn, fr_get32(a + 20));
	EQ(e, "ack.ts_echo", ev->ack.ts_echo, fr_get32(a + 24));
	EQ(e, "ack.rate_hint", ev->ack.rate_hint, fr_get32(a + 28));
	for (j = 0; j < 4; j++)
		EQ(e, "ack.sack[j]", ev->ack.sack[j], fr_get64(a + 32 + 8 * j));
	EQ(e, "ack.ce_pkts", ev->ack.ce_pkts, fr_get32(a + 64));
	EQ(e, "ack.rx_pkts", ev->ack.rx_pkts, fr_get32(a + 68));
	EQ(e, "ack.csn_cum", ev->ack.csn_cum, fr_get32(a + 72));
	EQ(e, "ack.nak_csn", ev->ack.nak_csn, fr_get32(a + 76));
}

static void check_memory(struct env *e)
{
	int i;

	for (i = 0; i < 2; i++) {
		size_t j, first = 0, cnt = 0;

		if (!memcmp(e->mem[i], e->shadow[i], e->mem_len[i]))
			continue;
		for (j = 0; j < e->mem_len[i]; j++) {
			if (e->mem[i][j] != e->shadow[i][j]) {
				if (!cnt)
					first = j;
				cnt++;
			}
		}
		ERR(e, "domain %u memory: %zu bytes differ, first at %#zx "
		       "(%#x, want %#x)", i ? DOM2 : DOM, cnt, first,
		    e->mem[i][first], e->shadow[i][first]);
		/* keep later steps' reports about their own effects */
		memcpy(e->shadow[i], e->mem[i], e->mem_len[i]);
	}
}

static void check_rx(struct env *e, const struct step *st,
		     const struct xr_rx_state *before,
		     const struct xr_rx_state *after, const int64_t *dstat)
{
	uint32_t p = st->path & (XR_MAX_PATHS - 1), i;
	const struct xr_rx_path *pa = &after->path[p], *pb = &before->path[p];
	int j;

	if (!st->w.set) {
		if (memcmp(before, after, sizeof(*before)))
			ERR(e, "receive state changed (cack %#x -> %#x, "
			       "csn_next %#x -> %#x, rx %u -> %u)",
			    pb->cack, pa->cack, before->csn_next,
			    after->csn_next, pb->rx_pkts, pa->rx_pkts);
		return;
	}
	EQ(e, "xr_rx cack", pa->cack, e->S + st->w.cack);
	for (j = 0; j < 4; j++)
		EQ(e, "xr_rx sack[j]", pa->sack[j], st->w.sack[j]);
	EQ(e, "xr_rx rx_pkts", pa->rx_pkts, st->w.rx);
	EQ(e, "xr_rx ce_pkts", pa->ce_pkts, st->w.ce);
	EQ(e, "xr_rx csn_next", after->csn_next, e->C + st->w.csn);
	EQ(e, "xr_rx dup_pkts delta", pa->dup_pkts - pb->dup_pkts,
	   dstat[XR_STAT_RX_DUP]);
	EQ(e, "xr_rx rx_bytes delta", pa->rx_bytes - pb->rx_bytes,
	   dstat[XR_STAT_RX_BYTES]);
	for (i = 0; i < XR_MAX_PATHS; i++) {
		if (i != p && memcmp(&before->path[i], &after->path[i],
				     sizeof(before->path[i])))
			ERR(e, "path %u changed", i);
	}
}

static int run_frame(struct suite *su, const uint8_t *in, size_t n,
		     uint8_t *out, uint32_t *outn, uint32_t *ret)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in,
		    .data_size_in = (uint32_t)n, .data_out = out,
		    .data_size_out = FR_MAX, .repeat = 1);
	int err = bpf_prog_test_run_opts(su->prog_fd, &o);

	*outn = o.data_size_out;
	*ret = o.retval;
	return err ? -errno : 0;
}

static const char *verdict_name(uint32_t v)
{
	static const char *const names[] = { "ABORTED", "DROP", "PASS", "TX",
					     "REDIRECT" };

	return v < 5 ? names[v] : "?";
}

static void run_step(struct env *e, const struct step *st, int idx)
{
	static uint8_t in[FR_MAX], out[FR_MAX];
	struct xr_rx_state rx0, rx1, rxi0, rxi1;
	uint64_t s0[XR_STAT_MAX], s1[XR_STAT_MAX];
	int64_t d[XR_STAT_MAX];
	int reps = st->rep ? st->rep : 1, r, k;
	struct built b;
	size_t n = 0;

	e->where = st->what;
	e->stepno = idx;
	e->errs = 0;
	if (st->kind == K_BIND) {
		if (e->ctrl_sock >= 0)
			close(e->ctrl_sock);
		e->ctrl_sock = ctrl_socket(e->v6, e->ctrl_port, st->ca);
		if (e->ctrl_sock < 0)
			ERR(e, "cannot bind port %u: %s", e->ctrl_port,
			    strerror(errno));
		return;
	}
	if (st->kind == K_DOM) {
		if (set_dom(e, st->port0 ? 0 : e->ctrl_port, st->ca))
			ERR(e, "cannot rewrite the domain: %s", strerror(errno));
		return;
	}
	if (st->kind == K_UNBIND) {
		close(e->ctrl_sock);
		e->ctrl_sock = -1;
		return;
	}
	if (st->kind == K_WAIT) {
		usleep(3000);
		return;
	}
	if (st->kind == K_FILL) {
		static const struct step filler = { "filler", .kind = K_ACK,
						    .a = { .cack = 1 } };
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in,
			    .data_out = out, .data_size_out = FR_MAX,
			    .repeat = (uint32_t)st->rep);

		drain_events(e);
		o.data_size_in = (uint32_t)build(e, &filler, idx, 0, in, &b);
		if (bpf_prog_test_run_opts(e->su->prog_fd, &o) ||
		    o.retval != XDP_DROP)
			ERR(e, "filling the ring failed");
		e->fill = st->rep;
		return;
	}
	stats_read(e->su, s0);
	rx_read(e, CONN, &rx0);
	rx_read(e, CONN_INIT, &rxi0);
	if (!e->fill)
		drain_events(e);

	for (r = 0; r < reps; r++) {
		uint32_t outn, ret;
		int err;

		n = build(e, st, idx, r, in, &b);
		err = run_frame(e->su, in, n, out, &outn, &ret);
		if (err) {
			ERR(e, "bpf_prog_test_run: %s", strerror(-err));
			break;
		}
		if (ret != (uint32_t)st->v) {
			ERR(e, "verdict %s, want %s (rep %d)", verdict_name(ret),
			    verdict_name((uint32_t)st->v), r);
			break;
		}
		if (ret == XDP_TX) {
			if (st->rt == XR_T_PROBE_REPLY)
				check_probe_reply(e, &b, in, out, outn);
			else
				check_ack(e, st, &b, in, out, outn,
					  r == reps - 1);
			memcpy(e->last_out, out, outn);
			e->last_outn = outn;
		} else if (ret == XDP_PASS) {
			if (outn != n || memcmp(in, out, n))
				ERR(e, "passed frame was modified");
		}
		if (st->place && b.dom_idx >= 0) {
			size_t j;

			for (j = 0; j < b.plen; j++)
				e->shadow[b.dom_idx][b.pos + j] =
					payload_byte(b.seed, j);
		}
	}

	stats_read(e->su, s1);
	for (k = 0; k < XR_STAT_MAX; k++) {
		d[k] = (int64_t)(s1[k] - s0[k]);
		if (d[k] != st->st[k])
			ERR(e, "stat %d delta %lld, want %lld", k,
			    (long long)d[k], (long long)st->st[k]);
	}
	rx_read(e, CONN, &rx1);
	rx_read(e, CONN_INIT, &rxi1);
	check_rx(e, st, &rx0, &rx1, d);
	if (memcmp(&rxi0, &rxi1, sizeof(rxi0)))
		ERR(e, "receive state of the INIT connection changed");
	check_memory(e);
	drain_events(e);
	if (e->fill) {
		/* the filler events come first; this row adds none */
		EQ(e, "events (filler + own)", e->nev, e->fill);
		e->nev = 0;
		e->fill = 0;
	}
	if (reps == 1)
		check_events(e, st, &b, in, n);
	else if ((st->ev == EV_NONE) != (e->nev == 0))
		ERR(e, "%d events", e->nev);
}

/* ---- the tests ----------------------------------------------------------------- */

struct tcase {
	struct suite *su;
	const struct scen *sc;
	int v6;
	uint32_t S, C;
	char name[64];
};

static void test_scenario(void **state)
{
	struct tcase *tc = *state;
	struct env *e = env_up(tc->su, tc->sc, tc->v6, tc->S, tc->C,
			       XR_CFG_VERIFY_CSUM);
	int errs = 0;
	size_t i;

	assert_non_null(e);
	for (i = 0; i < tc->sc->n; i++) {
		run_step(e, &tc->sc->steps[i], (int)i);
		errs += e->errs;
	}
	env_down(e);
	if (errs)
		fail_msg("%d mismatches in %s", errs, tc->name);
}

/* Every payload length 1..1600 and a few up to the largest payload
 * (8192, a multi-buffer frame past ~3.4 KB: test runs of an xdp.frags
 * program put what exceeds a page's linear room in fragments): a good
 * checksum is accepted and the bytes land; a corrupted one (one bit of the
 * last, first or middle byte) is refused.  Exercises every tail of
 * xr_csum_span and xr_csum_frags and every step of xr_place_piece. */
static void test_csum_sweep(void **state)
{
	struct tcase *tc = *state;
	static const struct step proto = { "sweep", BIGMSG(1, 0) };
	struct env *e = env_up(tc->su, tc->sc, tc->v6, tc->S, tc->C,
			       XR_CFG_VERIFY_CSUM);
	static uint8_t in[FR_MAX], out[FR_MAX];
	uint32_t plen, k = 0, roff = 0, outn, ret;
	int errs = 0;

	assert_non_null(e);
	for (plen = 1; plen <= 8192;
	     plen = plen < 1600 ? plen + 1 : plen + 97 > 8192 && plen < 8192 ? 8192 : plen + 97) {
		struct step st = proto;
		uint64_t s0[XR_STAT_MAX], s1[XR_STAT_MAX];
		struct built b;
		size_t n, j;
		int bad;

		if (roff + plen > 0x4000)
			roff = (roff + 1) & 0x3f;
		st.plen = plen;
		st.psn = st.csn = k;
		st.roff = roff;
		st.msg_off = roff;
		for (bad = 1; bad >= 0; bad--) {
			e->stepno = (int)plen;
			e->where = bad ? "sweep, corrupted" : "sweep";
			e->errs = 0;
			st.corrupt = bad ? (int)(k % 3 == 0 ? plen
						 : k % 3 == 1 ? 1 : plen / 2 + 1)
					 : 0;
			stats_read(e->su, s0);
			n = build(e, &st, 0, 0, in, &b);
			if (run_frame(e->su, in, n, out, &outn, &ret))
				ERR(e, "test run failed");
			EQ(e, "verdict", ret, XDP_DROP);
			stats_read(e->su, s1);
			if (bad) {
				EQ(e, "DROP_CSUM delta",
				   s1[XR_STAT_DROP_CSUM] - s0[XR_STAT_DROP_CSUM], 1);
			} else {
				EQ(e, "RX_DATA delta",
				   s1[XR_STAT_RX_DATA] - s0[XR_STAT_RX_DATA], 1);
				EQ(e, "RX_BYTES delta",
				   s1[XR_STAT_RX_BYTES] - s0[XR_STAT_RX_BYTES],
				   plen);
				for (j = 0; j < plen; j++)
					e->shadow[0][b.pos + j] =
						payload_byte(b.seed, j);
			}
			check_memory(e);
			drain_events(e);
			errs += e->errs;
		}
		k++;
		roff += plen;
	}
	env_down(e);
	if (errs)
		fail_msg("%d mismatches in the checksum sweep", errs);
}

/* ---- figures ------------------------------------------------------------------- */

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* ns per packet of 'count' in-order 1400-byte data packets, each a new PSN
 * and CSN (bpf_prog_test_run with repeat=1 per packet, the kernel-measured
 * durations summed): a repeated run of one frame would measure duplicates. */
static double time_data(struct env *e, int count, uint8_t flags,
			uint32_t plen, uint32_t want, double *wall_ns)
{
	static uint8_t in[FR_MAX], out[FR_MAX];
	struct step st = { "timing", .flags = flags, BIGMSG(1, 0) };
	uint64_t total = 0;
	double t0, wall = 0;
	int i;

	st.msg_len = 0xffffffffu;
	st.plen = plen;
	for (i = 0; i < count; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in,
			    .data_out = out, .data_size_out = FR_MAX,
			    .repeat = 1);
		struct built b;

		st.psn = st.csn = (uint32_t)i;
		st.roff = (uint32_t)(i % 4) * plen % (0x4000 - plen);
		st.msg_off = (uint32_t)i * plen;
		o.data_size_in = (uint32_t)build(e, &st, 1, 0, in, &b);
		t0 = now_s();
		if (bpf_prog_test_run_opts(e->su->prog_fd, &o) ||
		    o.retval != want) {
			print_error("timing run %d: err %d verdict %u\n", i,
				    errno, o.retval);
			return -1;
		}
		wall += now_s() - t0;
		total += o.duration;
		if ((i & 1023) == 1023)
			drain_events(e);
	}
	*wall_ns = wall * 1e9 / count;
	return (double)total / count;
}

static double time_repeat(struct suite *su, const uint8_t *in, size_t n,
			  uint32_t repeat, uint32_t *verdict)
{
	static uint8_t out[FR_MAX];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in,
		    .data_size_in = (uint32_t)n, .data_out = out,
		    .data_size_out = FR_MAX, .repeat = repeat);

	if (bpf_prog_test_run_opts(su->prog_fd, &o))
		return -1;
	*verdict = o.retval;
	return o.duration;
}

static void test_figures(void **state)
{
	struct tcase *tc = *state;
	static const struct scen sc = { "figures", F4, ST_N, 0, 0, NULL, 0, 0 };
	static const struct step ack_st = { "ack", .kind = K_ACK, .path = 1,
					    .a = { .cack = 5, .ack_psn = 4 } };
	static const struct step arp_st = { "arp", .kind = K_ARP };
	static uint8_t in[FR_MAX];
	uint64_t s0[XR_STAT_MAX], s1[XR_STAT_MAX];
	double drop_ns, ack_ns, nov_ns, w1, w2, w3, ns, arp_rep, arp_one, tot;
	struct env *e;
	struct built b;
	uint32_t verdict = 0;
	size_t n;
	int i;

	printf("[figures] verifier: processed %lu insns; load %.2f s\n",
	       tc->su->verified, tc->su->load_s);

	e = env_up(tc->su, &sc, 0, 1000, 5000, XR_CFG_VERIFY_CSUM);
	assert_non_null(e);
	drop_ns = time_data(e, 100000, 0, 1400, XDP_DROP, &w1);
	env_down(e);
	e = env_up(tc->su, &sc, 0, 1000, 5000, XR_CFG_VERIFY_CSUM);
	assert_non_null(e);
	ack_ns = time_data(e, 100000, XR_DF_AR, 1400, XDP_TX, &w2);
	env_down(e);
	e = env_up(tc->su, &sc, 0, 1000, 5000, 0);
	assert_non_null(e);
	nov_ns = time_data(e, 100000, 0, 1400, XDP_DROP, &w3);
	assert_true(drop_ns > 0 && ack_ns > 0 && nov_ns > 0);
	printf("[figures] in-order 1400 B data, IPv4, new PSN/CSN per packet, "
	       "100000 packets, kernel-timed (syscall round trip):\n"
	       "[figures]   consumed (XDP_DROP), checksum verified: %.0f ns/pkt "
	       "(%.0f)\n"
	       "[figures]   with AR (XDP_TX ACK), checksum verified: %.0f ns/pkt "
	       "(%.0f)\n"
	       "[figures]   consumed, checksum not verified:        %.0f ns/pkt "
	       "(%.0f)\n",
	       drop_ns, w1, ack_ns, w2, nov_ns, w3);

	{
		static const uint32_t sizes[] = { 64, 512, 3000 };
		uint32_t k;

		env_down(e);
		e = env_up(tc->su, &sc, 0, 1000, 5000, XR_CFG_VERIFY_CSUM);
		assert_non_null(e);
		printf("[figures]   consumed, checksum verified, by payload:");
		for (k = 0; k < X(sizes); k++) {
			ns = time_data(e, 20000, 0, sizes[k], XDP_DROP, &w1);
			printf(" %u B %.0f ns;", sizes[k], ns);
			env_down(e);
			e = env_up(tc->su, &sc, 0, 1000, 5000,
				   XR_CFG_VERIFY_CSUM);
			assert_non_null(e);
		}
		printf("\n");
	}

	/* Overhead of one kernel-timed run, from a frame the program passes
	 * at once: repeat=100000 once vs 100000 runs of repeat=1. */
	n = build(e, &arp_st, 0, 0, in, &b);
	arp_rep = time_repeat(tc->su, in, n, 100000, &verdict);
	assert_int_equal(verdict, XDP_PASS);
	tot = 0;
	for (i = 0; i < 100000; i++) {
		static uint8_t out[FR_MAX];
		uint32_t ret;

		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in,
			    .data_size_in = (uint32_t)n, .data_out = out,
			    .data_size_out = FR_MAX, .repeat = 1);
		assert_int_equal(bpf_prog_test_run_opts(tc->su->prog_fd, &o), 0);
		ret = o.retval;
		assert_int_equal(ret, XDP_PASS);
		tot += o.duration;
	}
	arp_one = tot / 100000;
	printf("[figures] ARP (XDP_PASS): repeat=100000 %.0f ns/pkt; "
	       "kernel-timed single runs %.0f ns/pkt (the difference is the "
	       "timing overhead included above)\n", arp_rep, arp_one);

	/* The literal request: repeat=100000 of one data frame.  Only the
	 * first run places; then the frame is a duplicate (a DUP ACK rewrites
	 * it in place) and afterwards an ACK on the sender's port (passed). */
	{
		struct step st = { "rep", BIGMSG(1, 0) };

		st.msg_len = 0xffffffffu;
		st.plen = 1400;
		st.psn = st.csn = 0; /* e is fresh: in order */
		stats_read(tc->su, s0);
		n = build(e, &st, 2, 0, in, &b);
		ns = time_repeat(tc->su, in, n, 100000, &verdict);
		stats_read(tc->su, s1);
		printf("[figures] one 1400 B data frame, repeat=100000: %.0f "
		       "ns/run, last verdict %s; the runs were %llu data "
		       "(%llu of them duplicates), %llu ACKs, %llu passed: "
		       "after the first run the frame is a duplicate, its DUP "
		       "ACK overwrites it, and the rest measure that ACK -- "
		       "not a data-path figure\n", ns, verdict_name(verdict),
		       (unsigned long long)(s1[XR_STAT_RX_DATA] - s0[XR_STAT_RX_DATA]),
		       (unsigned long long)(s1[XR_STAT_RX_DUP] - s0[XR_STAT_RX_DUP]),
		       (unsigned long long)(s1[XR_STAT_RX_ACK] - s0[XR_STAT_RX_ACK] +
					    s1[XR_STAT_DROP_ACK_LOST] -
					    s0[XR_STAT_DROP_ACK_LOST]),
		       (unsigned long long)(s1[XR_STAT_PASS] - s0[XR_STAT_PASS]));
	}
	env_down(e);

	/* ACK frames (sender side): the frame is not changed, but every run
	 * queues an 88-byte event; a 4 MiB ring holds ~43000, so the ring is
	 * drained every 25000 runs. */
	e = env_up(tc->su, &sc, 0, 1000, 5000, XR_CFG_VERIFY_CSUM);
	assert_non_null(e);
	n = build(e, &ack_st, 0, 0, in, &b);
	stats_read(tc->su, s0);
	tot = 0;
	for (i = 0; i < 4; i++) {
		ns = time_repeat(tc->su, in, n, 25000, &verdict);
		assert_true(ns >= 0);
		assert_int_equal(verdict, XDP_DROP);
		tot += ns;
		drain_events(e);
	}
	stats_read(tc->su, s1);
	printf("[figures] ACK frame (IPv4, XDP_DROP + ring event): %.0f ns/pkt "
	       "(repeat=25000 x 4, ring drained between; %llu events, %llu "
	       "lost)\n", tot / 4,
	       (unsigned long long)(s1[XR_STAT_RX_ACK] - s0[XR_STAT_RX_ACK]),
	       (unsigned long long)(s1[XR_STAT_DROP_ACK_LOST] -
				    s0[XR_STAT_DROP_ACK_LOST]));
	assert_int_equal(s1[XR_STAT_RX_ACK] - s0[XR_STAT_RX_ACK], 100000);
	stats_read(tc->su, s0);
	ns = time_repeat(tc->su, in, n, 100000, &verdict);
	stats_read(tc->su, s1);
	printf("[figures] ACK frame, one repeat=100000 run: %.0f ns/pkt "
	       "(%llu events queued, %llu refused by the full ring)\n", ns,
	       (unsigned long long)(s1[XR_STAT_RX_ACK] - s0[XR_STAT_RX_ACK]),
	       (unsigned long long)(s1[XR_STAT_DROP_ACK_LOST] -
				    s0[XR_STAT_DROP_ACK_LOST]));
	env_down(e);
}

/* ---- main ---------------------------------------------------------------------- */

static int load(struct suite *su)
{
	size_t logsz = 16u << 20;
	char *log = calloc(1, logsz), *p;
	double t0 = now_s();
	int err;

	if (!log)
		return -ENOMEM;
	su->skel = xroce__open();
	if (!su->skel) {
		free(log);
		return -errno;
	}
	bpf_program__set_log_buf(su->skel->progs.xroce_xdp, log, logsz);
	bpf_program__set_log_level(su->skel->progs.xroce_xdp, 1);
	err = xroce__load(su->skel);
	su->load_s = now_s() - t0;
	if (err) {
		fprintf(stderr, "load failed: %d\n%.4000s\n", err, log);
		free(log);
		xroce__destroy(su->skel);
		su->skel = NULL;
		return err;
	}
	p = strstr(log, "processed ");
	if (p)
		su->verified = strtoul(p + 10, NULL, 10);
	free(log);
	su->prog_fd = bpf_program__fd(su->skel->progs.xroce_xdp);
	su->ncpu = libbpf_num_possible_cpus();
	return su->ncpu > 0 ? 0 : su->ncpu;
}

int main(void)
{
	static struct suite su;
	static const struct scen sweep = { "csum_sweep", F4 | F6, ST_N, 0, 0,
					   NULL, 0, 0 };
	static const struct scen figs = { "figures", F4, ST_N, 0, 0, NULL, 0, 0 };
	const char *filter = getenv("XR_TEST_FILTER");
	struct CMUnitTest *tests;
	struct tcase *tcs;
	size_t nt = 0, max = X(scens) * 4 + 3, i;
	int fam, st, rc;

	if (geteuid() != 0) {
		printf("bpf_xdp_table: SKIP (needs root for BPF)\n");
		return 0;
	}
	libbpf_set_strict_mode(LIBBPF_STRICT_ALL);
	rc = load(&su);
	if (rc == -EPERM) {
		printf("bpf_xdp_table: SKIP (BPF not permitted)\n");
		return 0;
	}
	if (rc) {
		fprintf(stderr, "bpf_xdp_table: cannot load xroce_xdp: %d\n", rc);
		return 1;
	}
	tests = calloc(max, sizeof(*tests));
	tcs = calloc(max, sizeof(*tcs));
	assert_non_null(tests);
	assert_non_null(tcs);
	for (i = 0; i < X(scens) + 2; i++) {
		const struct scen *sc = i < X(scens) ? &scens[i]
				      : i == X(scens) ? &sweep : &figs;

		for (fam = 0; fam < 2; fam++) {
			if (!(sc->fams & (fam ? F6 : F4)))
				continue;
			for (st = 0; st < 2; st++) {
				struct tcase *tc = &tcs[nt];

				if (!(sc->starts & (st ? ST_W : ST_N)))
					continue;
				tc->su = &su;
				tc->sc = sc;
				tc->v6 = fam;
				tc->S = st ? 0xfffffffeu : 1000;
				tc->C = st ? 0xfffffffcu : 5000;
				snprintf(tc->name, sizeof(tc->name), "%s/v%d/%s",
					 sc->name, fam ? 6 : 4,
					 st ? "wrap" : "psn1000");
				if (filter && !strstr(tc->name, filter))
					continue;
				tests[nt].name = tc->name;
				tests[nt].test_func = sc == &sweep ? test_csum_sweep
						      : sc == &figs ? test_figures
						      : test_scenario;
				tests[nt].initial_state = tc;
				nt++;
			}
		}
	}
	rc = _cmocka_run_group_tests("bpf_xdp_table", tests, nt, NULL, NULL);
	xroce__destroy(su.skel);
	free(tests);
	free(tcs);
	return rc;
}
