// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Transmit-engine benchmark: raw packet rate and CPU cost of the ways a
 * sender can put xroce data frames on a veth, measured side by side in one
 * run (run it through tests/bench/txengine.sh, which builds it, makes the
 * namespaces and cleans up):
 *
 *   a    AF_XDP copy mode (user/xsk.c), prebuilt frames pushed as they are
 *   a2   AF_XDP copy mode, each frame built by user/pktbuild.c first (header
 *        + payload copied from the memory map with its checksum): what
 *        libxroce's send_packet() does today
 *   b    BPF_PROG_TEST_RUN, BPF_F_TEST_XDP_LIVE_FRAMES, repeat = batch: one
 *        prebuilt frame (data_in) sent by XDP_TX (txe_fixed)
 *   c    the same test run, but txe_build builds every frame from a
 *        descriptor userspace wrote into an mmapped ring: template, xroce
 *        header, payload copied from the memory map, both checksums
 *
 * The receiving veth runs txe_rx (count, verify the checksums of a sample,
 * drop).  Rates count frames that reached it.  CPU cost = this thread's CPU
 * time (the veth peer's NAPI runs in softirq on this CPU, inline, and is
 * charged to it: no IRQ time accounting here) + every ksoftirqd's.
 *
 * Before the rates, a correctness pass: the receiver passes frames to an
 * AF_PACKET socket and each frame txe_build made is compared byte for byte
 * with what xr_build_frame() (libxroce) builds for the same descriptor.
 *
 *   txengine --obj O --ns-a NS --if-a IF --ns-b NS --if-b IF [options]
 *   options: --secs S --rounds R --sizes 64,1400 --batches 256,1024
 *            --kbatch N --variants a,a2,b,c --cpu N --redirect
 *            --xsk-budget N --sample-mask M --prog-stats --verify-only
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "csum.h"
#include "pktbuild.h"
#include "xsk.h"
#include "txengine.h"

#define APP_BASE ((uint64_t)TXE_TX_FRAMES * TXE_PAGE_SIZE)
#define APP_BYTES ((uint64_t)TXE_APP_PAGES * TXE_PAGE_SIZE)
#define MAX_LIST 8
#define MAX_ROUNDS 32
#define WARMUP_S 0.3

enum kind { K_A, K_A2, K_B, K_C, K_N };
static const char *kind_name[K_N] = { "a", "a2", "b", "c" };
static const char *kind_desc[K_N] = {
	"AF_XDP copy, prebuilt frames",
	"AF_XDP copy, built per packet (libxroce today)",
	"test_run LIVE_FRAMES, one prebuilt frame",
	"test_run LIVE_FRAMES, BPF builds each frame",
};

struct opts {
	const char *obj, *ns_a, *ns_b, *if_a, *if_b;
	double secs;
	int rounds;
	int cpu;
	uint32_t sizes[MAX_LIST];
	int nsizes;
	uint32_t batches[MAX_LIST];
	int nbatches;
	uint32_t kbatch;
	bool want[K_N];
	uint32_t action;
	uint32_t xsk_budget;
	uint32_t sample_mask;
	bool prog_stats;
	bool verify_only;
	bool mixed_len;
	uint32_t xsk_burst;
	const char *park;  /* "IF0,IF1": down veth ends the senders park on */
};

struct world {
	int ns_a, ns_b;
	int a_if, b_if;
	uint8_t a_mac[6], b_mac[6];
	struct bpf_object *obj;
	int p_fixed, p_build, p_rx;
	int m_rxcfg, m_rxst, m_cfg;
	uint8_t *mem;
	struct txe_desc *ring;
	struct txe_ctl *ctl;
	size_t mem_len, ring_len, ctl_len;
	struct xr_tmpl tmpl;
	int stats_fd;
	int rx_attached;
	int park_if[2];
	pid_t ksoft[256];
	int nksoft;
	uint32_t psn;     /* next PSN, across all runs */
	uint64_t app_off; /* next payload offset in the app area */
};

/* ---- small helpers ---------------------------------------------------- */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int parse_list(const char *s, uint32_t *out, int max)
{
	int n = 0;
	char *end;

	while (*s && n < max) {
		unsigned long v = strtoul(s, &end, 0);

		if (end == s)
			return -1;
		out[n++] = (uint32_t)v;
		s = *end == ',' ? end + 1 : end;
	}
	return n;
}

static int enter_ns(int fd)
{
	return setns(fd, CLONE_NEWNET) ? -errno : 0;
}

static int open_ns(const char *name)
{
	char p[256];

	snprintf(p, sizeof(p), "/var/run/netns/%s", name);
	return open(p, O_RDONLY | O_CLOEXEC);
}

static int if_mac(const char *name, uint8_t mac[6])
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc;

	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	rc = ioctl(fd, SIOCGIFHWADDR, &ifr) ? -errno : 0;
	close(fd);
	if (!rc)
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	return rc;
}

/* Every ksoftirqd thread: softirq work deferred there is part of the cost. */
static void find_ksoftirqd(struct world *w)
{
	DIR *d = opendir("/proc");
	struct dirent *e;

	w->nksoft = 0;
	if (!d)
		return;
	while ((e = readdir(d)) && w->nksoft < (int)(sizeof(w->ksoft) / sizeof(w->ksoft[0]))) {
		char p[300], comm[64] = "";
		FILE *f;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(p, sizeof(p), "/proc/%s/comm", e->d_name);
		f = fopen(p, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) && !strncmp(comm, "ksoftirqd/", 10))
			w->ksoft[w->nksoft++] = (pid_t)atoi(e->d_name);
		fclose(f);
	}
	closedir(d);
}

static uint64_t ksoftirqd_ns(const struct world *w)
{
	uint64_t sum = 0;

	for (int i = 0; i < w->nksoft; i++) {
		char p[64];
		unsigned long long run = 0;
		FILE *f;

		snprintf(p, sizeof(p), "/proc/%d/schedstat", (int)w->ksoft[i]);
		f = fopen(p, "r");
		if (!f)
			continue;
		if (fscanf(f, "%llu", &run) == 1)
			sum += run;
		fclose(f);
	}
	return sum;
}

static int rx_stats(const struct world *w, struct txe_rxst *out)
{
	int ncpu = libbpf_num_possible_cpus();
	struct txe_rxst *v;
	uint32_t k = 0;

	if (ncpu <= 0)
		return -EINVAL;
	v = calloc((size_t)ncpu, sizeof(*v));
	if (!v)
		return -ENOMEM;
	memset(out, 0, sizeof(*out));
	if (bpf_map_lookup_elem(w->m_rxst, &k, v)) {
		free(v);
		return -errno;
	}
	for (int i = 0; i < ncpu; i++) {
		out->pkts += v[i].pkts;
		out->bytes += v[i].bytes;
		out->checked += v[i].checked;
		out->bad_ip += v[i].bad_ip;
		out->bad_udp += v[i].bad_udp;
		out->other += v[i].other;
	}
	free(v);
	return 0;
}

static int set_rx(const struct world *w, uint32_t pass, uint32_t mask)
{
	struct txe_rxcfg c = { .pass = pass, .sample_mask = mask };
	uint32_t k = 0;

	return bpf_map_update_elem(w->m_rxcfg, &k, &c, 0) ? -errno : 0;
}

static void prog_run_stats(int fd, uint64_t *ns, uint64_t *cnt)
{
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);

	memset(&info, 0, sizeof(info));
	*ns = *cnt = 0;
	if (!bpf_obj_get_info_by_fd(fd, &info, &len)) {
		*ns = info.run_time_ns;
		*cnt = info.run_cnt;
	}
}

/* ---- frames ----------------------------------------------------------- */

/* The xroce data header of packet psn: a WRITE segment of a 1 MiB
 * message, as send_packet() fills it. */
static void fill_hdr(struct xr_data_hdr *h, uint32_t psn, uint64_t off)
{
	memset(h, 0, sizeof(*h));
	h->ver_type = XR_VER_TYPE(XR_T_DATA);
	h->flags = (psn & 1) ? XR_DF_AR : 0;
	h->opcode = XR_OP_WRITE;
	h->path = (uint8_t)(psn & 7);
	h->dst_conn = htonl(7);
	h->token = htobe64(0x1122334455667788ull);
	h->psn = htonl(psn);
	h->psn_base = htonl(psn - 64);
	h->csn = htonl(psn * 3);
	h->ts = htonl(psn * 1000);
	h->raddr = htobe64(0x7f0000000000ull + off);
	h->rkey = htonl(0x4242);
	h->msg_id = htonl(psn >> 10);
	h->msg_len = htonl(1u << 20);
	h->msg_off = htonl((uint32_t)off);
	h->stream = htons(1);
	h->ssn = htons((uint16_t)(psn >> 10));
}

/* Next payload position in the app area: consecutive, as the segments of
 * a long message are, so pieces cross 4 KiB pages as they would. */
static uint64_t next_off(struct world *w, uint32_t len)
{
	uint64_t off;

	if (w->app_off + len > APP_BYTES)
		w->app_off = 0;
	off = w->app_off;
	w->app_off += len;
	return off;
}

static size_t build_ref(const struct world *w, uint8_t *buf, uint32_t psn,
			uint64_t off, uint32_t len)
{
	struct xr_data_hdr h;

	fill_hdr(&h, psn, off);
	return xr_build_frame(buf, &w->tmpl, &h, sizeof(h), w->mem + APP_BASE + off, len);
}

/* ---- one test run ----------------------------------------------------- */

static int test_run(const struct world *w, int prog, const void *frame,
		    uint32_t flen, uint32_t repeat, uint32_t kbatch)
{
	struct xdp_md md = {
		.data = 0,
		.data_end = flen,
		.ingress_ifindex = (uint32_t)w->a_if,
		.rx_queue_index = 0,
	};
	LIBBPF_OPTS(bpf_test_run_opts, o,
		    .data_in = frame,
		    .data_size_in = flen,
		    .ctx_in = &md,
		    .ctx_size_in = sizeof(md),
		    .repeat = repeat,
		    .flags = BPF_F_TEST_XDP_LIVE_FRAMES,
		    .batch_size = kbatch);
	int rc;

	do {
		rc = bpf_prog_test_run_opts(prog, &o);
	} while (rc && errno == EINTR);
	return rc ? -errno : 0;
}

/* Post n descriptors into the ring (no syscall) and publish them. */
static void post_descs(struct world *w, uint32_t n, uint32_t len)
{
	uint64_t head = w->ctl->head;

	for (uint32_t i = 0; i < n; i++) {
		struct txe_desc *d = &w->ring[(head + i) & (TXE_RING_SIZE - 1)];
		uint64_t off = next_off(w, len);

		d->mem_off = APP_BASE + off;
		d->len = len;
		d->tmpl = 0;
		fill_hdr(&d->hdr, w->psn++, off);
	}
	__atomic_store_n(&w->ctl->head, head + n, __ATOMIC_RELEASE);
}

/* ---- measurement ------------------------------------------------------ */

struct snap {
	double t;
	uint64_t cpu, soft, sent;
	uint64_t prog_ns, prog_cnt, rxprog_ns, rxprog_cnt;
	struct txe_rxst rx;
};

struct meas {
	double secs;
	uint64_t sent, rx, cpu_ns, soft_ns;
	uint64_t prog_ns, prog_cnt, rxprog_ns, rxprog_cnt;
	uint64_t checked, bad, ebusy;
	uint32_t flen;
};

static void take(const struct world *w, int prog, uint64_t sent, struct snap *s)
{
	s->t = now_s();
	s->cpu = thread_cpu_ns();
	s->soft = ksoftirqd_ns(w);
	s->sent = sent;
	rx_stats(w, &s->rx);
	s->prog_ns = s->prog_cnt = s->rxprog_ns = s->rxprog_cnt = 0;
	if (w->stats_fd >= 0) {
		if (prog >= 0)
			prog_run_stats(prog, &s->prog_ns, &s->prog_cnt);
		prog_run_stats(w->p_rx, &s->rxprog_ns, &s->rxprog_cnt);
	}
}

static void diff(const struct snap *a, const struct snap *b, struct meas *m)
{
	m->secs = b->t - a->t;
	m->sent = b->sent - a->sent;
	m->rx = b->rx.pkts - a->rx.pkts;
	m->cpu_ns = b->cpu - a->cpu;
	m->soft_ns = b->soft - a->soft;
	m->prog_ns = b->prog_ns - a->prog_ns;
	m->prog_cnt = b->prog_cnt - a->prog_cnt;
	m->rxprog_ns = b->rxprog_ns - a->rxprog_ns;
	m->rxprog_cnt = b->rxprog_cnt - a->rxprog_cnt;
	m->checked = b->rx.checked - a->rx.checked;
	m->bad = (b->rx.bad_ip - a->rx.bad_ip) + (b->rx.bad_udp - a->rx.bad_udp);
}

/* a / a2: AF_XDP copy mode. */
static int run_xsk(struct world *w, const struct opts *o, enum kind k,
		   uint32_t len, struct meas *m)
{
	struct xr_xsk_opts xo = { .mode = XR_XSK_MODE_COPY, .no_sg = true,
				  .tx_budget = o->xsk_budget };
	uint32_t flen = TXE_HDRS_LEN + len, nfree = TXE_TX_FRAMES;
	static uint64_t free_q[TXE_TX_FRAMES], done[TXE_TX_FRAMES];
	uint64_t completed = 0;
	struct xr_xsk_stats st;
	struct xr_xsk *x;
	struct snap s0, s1;
	double warm, t;
	bool started = false;
	int err;

	err = xr_xsk_create(&x, w->a_if, 0, w->mem, w->mem_len, &xo);
	if (err) {
		fprintf(stderr, "xsk: %s\n", strerror(-err));
		return err;
	}
	for (uint32_t i = 0; i < TXE_TX_FRAMES; i++) {
		free_q[i] = (uint64_t)i * XR_XSK_FRAME_SIZE;
		if (k == K_A)
			build_ref(w, w->mem + free_q[i], w->psn++, next_off(w, len), len);
	}
	warm = now_s() + WARMUP_S;
	for (;;) {
		int n;

		t = now_s();
		if (!started && t >= warm) {
			take(w, -1, completed, &s0);
			started = true;
		}
		if (started && t - s0.t >= o->secs)
			break;
		n = xr_xsk_reap(x, done, TXE_TX_FRAMES);
		for (int i = 0; i < n; i++)
			free_q[nfree++] = done[i];
		completed += (uint64_t)n;
		for (uint32_t b = 0; b < o->xsk_burst && nfree; b++) {
			uint64_t a = free_q[nfree - 1];

			if (k == K_A2) {
				struct xr_data_hdr h;
				uint64_t off = next_off(w, len);

				fill_hdr(&h, w->psn++, off);
				xr_build_frame(w->mem + a, &w->tmpl, &h, sizeof(h),
					       w->mem + APP_BASE + off, len);
			}
			if (xr_xsk_tx_push(x, a, flen))
				break;
			nfree--;
		}
		err = xr_xsk_tx_kick(x);
		if (err && err != -EAGAIN) {
			fprintf(stderr, "kick: %s\n", strerror(-err));
			break;
		}
	}
	take(w, -1, completed, &s1);
	diff(&s0, &s1, m);
	xr_xsk_get_stats(x, &st);
	m->ebusy = st.ebusy;
	m->flen = flen;
	xr_xsk_destroy(x);
	return err && err != -EAGAIN ? err : 0;
}

/* b / c: one live-frames test run per batch of `batch` frames. */
static int run_testrun(struct world *w, const struct opts *o, enum kind k,
		       uint32_t len, uint32_t batch, struct meas *m)
{
	static uint8_t frame[1514];
	int prog = k == K_B ? w->p_fixed : w->p_build;
	uint32_t flen;
	uint64_t sent = 0;
	struct snap s0, s1;
	double warm, t;
	bool started = false;
	int err = 0;

	if (k == K_B) {
		flen = (uint32_t)build_ref(w, frame, w->psn++, next_off(w, len), len);
	} else {
		/* The program sizes each frame to its descriptor
		 * (bpf_xdp_adjust_tail, one helper call) unless it already has
		 * data_in's length: an engine gives data_in the length most of
		 * a batch has (full-size segments of a long message), here all
		 * of it.  --mixed-len: always the largest frame, so every
		 * frame is trimmed. */
		memset(frame, 0, sizeof(frame));
		flen = o->mixed_len ? sizeof(frame) : TXE_HDRS_LEN + len;
	}
	if (batch > TXE_RING_SIZE)
		batch = TXE_RING_SIZE;
	warm = now_s() + WARMUP_S;
	for (;;) {
		t = now_s();
		if (!started && t >= warm) {
			take(w, prog, sent, &s0);
			started = true;
		}
		if (started && t - s0.t >= o->secs)
			break;
		if (k == K_C)
			post_descs(w, batch, len);
		err = test_run(w, prog, frame, flen, batch, o->kbatch);
		if (err) {
			fprintf(stderr, "test_run: %s\n", strerror(-err));
			break;
		}
		if (k == K_C && w->ctl->tail != w->ctl->head) {
			fprintf(stderr, "ring: tail %llu head %llu after a run\n",
				(unsigned long long)w->ctl->tail,
				(unsigned long long)w->ctl->head);
			err = -EPROTO;
			break;
		}
		sent += batch;
	}
	take(w, prog, sent, &s1);
	diff(&s0, &s1, m);
	m->ebusy = 0;
	m->flen = TXE_HDRS_LEN + len;
	return err;
}

/* ---- correctness: capture and compare byte for byte ------------------- */

static int packet_socket(struct world *w)
{
	struct sockaddr_ll sa;
	int fd, one = 1 << 22, err;

	if ((err = enter_ns(w->ns_b)))
		return err;
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	if (fd >= 0) {
		memset(&sa, 0, sizeof(sa));
		sa.sll_family = AF_PACKET;
		sa.sll_protocol = htons(ETH_P_ALL);
		sa.sll_ifindex = w->b_if;
		setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &one, sizeof(one));
		if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
			close(fd);
			fd = -1;
		}
	}
	err = fd < 0 ? -errno : 0;
	enter_ns(w->ns_a);
	return fd < 0 ? err : fd;
}

/* Read xroce frames (IPv4, UDP to the data port) until `want` arrived or
 * 1 s passed.  Returns how many were stored in frames/lens. */
static int capture(int fd, uint8_t (*frames)[2048], uint32_t *lens, int want)
{
	double end = now_s() + 1.0;
	int got = 0;

	while (got < want && now_s() < end) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, 50) <= 0)
			continue;
		n = recv(fd, frames[got], sizeof(frames[got]), MSG_DONTWAIT);
		if (n < TXE_HDRS_LEN)
			continue;
		if (frames[got][12] != 0x08 || frames[got][13] != 0x00 ||
		    frames[got][23] != IPPROTO_UDP ||
		    frames[got][36] != (XR_DEFAULT_UDP_PORT >> 8) ||
		    frames[got][37] != (XR_DEFAULT_UDP_PORT & 0xff))
			continue;
		lens[got++] = (uint32_t)n;
	}
	return got;
}

static uint32_t frame_psn(const uint8_t *f)
{
	uint32_t v;

	memcpy(&v, f + TXE_TMPL_LEN + 16, 4);
	return ntohl(v);
}

/* Descriptors of the check: every interesting length, offsets at page
 * starts, odd offsets, pieces crossing a page, the end of the area. */
static const struct { uint32_t len; uint64_t off; } vcases[] = {
	{ 0, 0 }, { 1, 1 }, { 2, 4095 }, { 3, 4094 }, { 4, 17 }, { 5, 4093 },
	{ 7, 8191 }, { 63, 4096 }, { 64, 4064 }, { 65, 4063 }, { 127, 5 },
	{ 255, 4000 }, { 256, 3840 }, { 511, 3841 }, { 1023, 3333 },
	{ 1024, 4096 * 3 }, { 1293, 4096 * 5 - 1 }, { 1294, 4096 * 7 - 647 },
	{ 1399, 4096 * 9 - 1 }, { 1400, 4096 * 11 - 700 }, { 1400, 4096 * 13 + 1 },
	{ 1407, 4096 * 2 - 3 }, { TXE_MAX_PAYLOAD, 4096 * 20 - 1 },
	{ TXE_MAX_PAYLOAD, APP_BYTES - TXE_MAX_PAYLOAD },
	{ 1400, APP_BYTES - 1400 }, { 1, APP_BYTES - 1 },
};
#define NV (int)(sizeof(vcases) / sizeof(vcases[0]))
/* Descriptors the program must refuse (not send): too long, past the
 * memory map. */
static const struct { uint32_t len; uint64_t off; } vbad[] = {
	{ TXE_MAX_PAYLOAD + 1, 0 },
	{ 100, (uint64_t)TXE_MEM_PAGES * TXE_PAGE_SIZE - 50 - APP_BASE },
};
#define NB (int)(sizeof(vbad) / sizeof(vbad[0]))

static int verify(struct world *w)
{
	static uint8_t frames[NV + NB + 16][2048], ref[2048], one[1514];
	static uint32_t lens[NV + NB + 16];
	uint32_t psn0 = w->psn, flen;
	struct txe_rxst r0, r1;
	uint64_t bad0 = w->ctl->bad, head;
	int fd, got, ok = 0, fails = 0;

	fd = packet_socket(w);
	if (fd < 0) {
		fprintf(stderr, "AF_PACKET socket: %s\n", strerror(-fd));
		return fd;
	}
	set_rx(w, 1, 0);
	rx_stats(w, &r0);

	/* (c): good descriptors, then bad ones. */
	head = w->ctl->head;
	for (int i = 0; i < NV + NB; i++) {
		struct txe_desc *d = &w->ring[(head + (uint64_t)i) & (TXE_RING_SIZE - 1)];
		uint32_t len = i < NV ? vcases[i].len : vbad[i - NV].len;
		uint64_t off = i < NV ? vcases[i].off : vbad[i - NV].off;

		d->mem_off = APP_BASE + off;
		d->len = len;
		d->tmpl = 0;
		fill_hdr(&d->hdr, psn0 + (uint32_t)i, off);
	}
	w->psn += NV + NB;
	__atomic_store_n(&w->ctl->head, head + NV + NB, __ATOMIC_RELEASE);
	memset(one, 0, sizeof(one));
	if (test_run(w, w->p_build, one, sizeof(one), NV + NB, 0)) {
		fprintf(stderr, "verify: test_run failed\n");
		close(fd);
		return -1;
	}
	got = capture(fd, frames, lens, NV + NB);
	for (int i = 0; i < NV; i++) {
		int j;
		size_t rl = build_ref(w, ref, psn0 + (uint32_t)i, vcases[i].off, vcases[i].len);

		for (j = 0; j < got; j++)
			if (frame_psn(frames[j]) == psn0 + (uint32_t)i)
				break;
		if (j == got) {
			fprintf(stderr, "verify c: frame len %u off %llu missing\n",
				vcases[i].len, (unsigned long long)vcases[i].off);
			fails++;
		} else if (lens[j] != rl || memcmp(frames[j], ref, rl)) {
			fprintf(stderr, "verify c: frame len %u off %llu differs "
				"(got %u bytes, want %zu)\n", vcases[i].len,
				(unsigned long long)vcases[i].off, lens[j], rl);
			fails++;
		} else {
			ok++;
		}
	}
	for (int j = 0; j < got; j++) {
		uint32_t p = frame_psn(frames[j]);

		if (p >= psn0 + NV && p < psn0 + NV + NB) {
			fprintf(stderr, "verify c: a refused descriptor was sent\n");
			fails++;
		}
	}
	if (w->ctl->bad - bad0 != NB) {
		fprintf(stderr, "verify c: %llu descriptors refused, want %d\n",
			(unsigned long long)(w->ctl->bad - bad0), NB);
		fails++;
	}
	printf("check c: %d/%d frames built by BPF equal xr_build_frame() byte for byte;"
	       " %d bad descriptors refused\n", ok, NV, (int)(w->ctl->bad - bad0));

	/* (b): the prebuilt frame arrives unchanged, 8 times. */
	flen = (uint32_t)build_ref(w, one, w->psn++, 1234, 1400);
	if (test_run(w, w->p_fixed, one, flen, 8, 0)) {
		fprintf(stderr, "verify: test_run failed\n");
		close(fd);
		return -1;
	}
	got = capture(fd, frames, lens, 8);
	ok = 0;
	for (int j = 0; j < got; j++)
		ok += lens[j] == flen && !memcmp(frames[j], one, flen);
	if (ok != 8) {
		fprintf(stderr, "verify b: %d/8 frames intact\n", ok);
		fails++;
	}
	printf("check b: %d/8 prebuilt frames arrived intact\n", ok);

	rx_stats(w, &r1);
	printf("check rx: receiver verified %llu checksums, %llu bad\n",
	       (unsigned long long)(r1.checked - r0.checked),
	       (unsigned long long)((r1.bad_ip - r0.bad_ip) + (r1.bad_udp - r0.bad_udp)));
	if (r1.checked - r0.checked < (uint64_t)NV + 8 ||
	    r1.bad_ip != r0.bad_ip || r1.bad_udp != r0.bad_udp)
		fails++;
	close(fd);
	return fails ? -1 : 0;
}

/* ---- setup ------------------------------------------------------------ */

static void *map_mmap(struct bpf_object *obj, const char *name, size_t len, int *fd)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, name);
	void *p;

	if (!m)
		return NULL;
	*fd = bpf_map__fd(m);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
	return p == MAP_FAILED ? NULL : p;
}

static int map_fd(struct bpf_object *obj, const char *name)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, name);

	return m ? bpf_map__fd(m) : -1;
}

static int prog_fd(struct bpf_object *obj, const char *name)
{
	struct bpf_program *p = bpf_object__find_program_by_name(obj, name);

	return p ? bpf_program__fd(p) : -1;
}

/*
 * A test run with repeat > 1 adds its program to the kernel's XDP
 * dispatcher for the run and removes it after, and each change waits for an
 * RCU grace period (milliseconds): that, not the frames, would dominate a
 * batch.  A program the dispatcher already holds only has its use count
 * moved.  So each sending program is attached (native mode) to one end of a
 * veth pair that stays down: it never runs there, it only stays in the
 * dispatcher.
 */
static int park(struct world *w, const char *ifs)
{
	char a[IFNAMSIZ] = "", b[IFNAMSIZ] = "";
	const char *comma = strchr(ifs, ',');
	int progs[2] = { w->p_fixed, w->p_build };

	if (!comma || comma - ifs >= IFNAMSIZ)
		return -1;
	memcpy(a, ifs, (size_t)(comma - ifs));
	snprintf(b, sizeof(b), "%s", comma + 1);
	w->park_if[0] = (int)if_nametoindex(a);
	w->park_if[1] = (int)if_nametoindex(b);
	for (int i = 0; i < 2; i++)
		if (!w->park_if[i] ||
		    bpf_xdp_attach(w->park_if[i], progs[i], XDP_FLAGS_DRV_MODE, NULL)) {
			fprintf(stderr, "cannot park a program on %s\n", i ? b : a);
			w->park_if[i] = 0;
			return -1;
		}
	return 0;
}

static int setup(struct world *w, const struct opts *o)
{
	struct txe_tmpl t;
	struct txe_cfg cfg;
	uint32_t k = 0;
	int fd, err;
	uint32_t sa = htonl(0x0a000001), da = htonl(0x0a000002);

	w->ns_a = open_ns(o->ns_a);
	w->ns_b = open_ns(o->ns_b);
	if (w->ns_a < 0 || w->ns_b < 0) {
		fprintf(stderr, "cannot open the namespaces\n");
		return -1;
	}
	w->obj = bpf_object__open_file(o->obj, NULL);
	if (!w->obj || bpf_object__load(w->obj)) {
		fprintf(stderr, "cannot load %s\n", o->obj);
		return -1;
	}
	w->p_fixed = prog_fd(w->obj, "txe_fixed");
	w->p_build = prog_fd(w->obj, "txe_build");
	w->p_rx = prog_fd(w->obj, "txe_rx");
	w->m_rxcfg = map_fd(w->obj, "txe_rxcfg");
	w->m_rxst = map_fd(w->obj, "txe_rxst");
	w->m_cfg = map_fd(w->obj, "txe_cfg");
	w->mem_len = (size_t)TXE_MEM_PAGES * TXE_PAGE_SIZE;
	w->ring_len = (size_t)TXE_RING_SIZE * sizeof(struct txe_desc);
	w->ctl_len = 4096;
	w->mem = map_mmap(w->obj, "txe_mem", w->mem_len, &fd);
	w->ring = map_mmap(w->obj, "txe_ring", w->ring_len, &fd);
	w->ctl = map_mmap(w->obj, "txe_ctl", w->ctl_len, &fd);
	if (w->p_fixed < 0 || w->p_build < 0 || w->p_rx < 0 || w->m_rxcfg < 0 ||
	    w->m_rxst < 0 || w->m_cfg < 0 || !w->mem || !w->ring || !w->ctl) {
		fprintf(stderr, "object lacks a program or map\n");
		return -1;
	}

	/* Receiver side. */
	if ((err = enter_ns(w->ns_b)))
		return err;
	w->b_if = (int)if_nametoindex(o->if_b);
	if (!w->b_if || if_mac(o->if_b, w->b_mac) ||
	    bpf_xdp_attach(w->b_if, w->p_rx, XDP_FLAGS_DRV_MODE, NULL)) {
		fprintf(stderr, "cannot attach the receiver to %s\n", o->if_b);
		return -1;
	}
	w->rx_attached = 1;
	/* Sender side: everything below runs in ns A. */
	if ((err = enter_ns(w->ns_a)))
		return err;
	w->a_if = (int)if_nametoindex(o->if_a);
	if (!w->a_if || if_mac(o->if_a, w->a_mac)) {
		fprintf(stderr, "no interface %s\n", o->if_a);
		return -1;
	}
	if (set_rx(w, 0, o->sample_mask))
		return -1;
	if (o->park && park(w, o->park))
		return -1;

	xr_tmpl_init(&w->tmpl, w->a_mac, w->b_mac, 0, &sa, &da, 50000,
		     XR_DEFAULT_UDP_PORT, 2);
	memset(&t, 0, sizeof(t));
	memcpy(t.hdr, w->tmpl.hdr, TXE_TMPL_LEN);
	if (bpf_map_update_elem(map_fd(w->obj, "txe_tmpl"), &k, &t, 0))
		return -1;
	cfg.action = o->action;
	cfg.ifindex = (uint32_t)w->a_if;
	if (bpf_map_update_elem(w->m_cfg, &k, &cfg, 0))
		return -1;

	/* Application data the payloads come from. */
	for (uint64_t i = 0; i < APP_BYTES; i++)
		w->mem[APP_BASE + i] = (uint8_t)(i * 31 + (i >> 12));
	find_ksoftirqd(w);
	w->stats_fd = o->prog_stats ? bpf_enable_stats(BPF_STATS_RUN_TIME) : -1;
	if (o->prog_stats && w->stats_fd < 0)
		fprintf(stderr, "note: cannot enable BPF run-time stats\n");
	return 0;
}

static void teardown(struct world *w)
{
	if (w->ns_a >= 0 && !enter_ns(w->ns_a))
		for (int i = 0; i < 2; i++)
			if (w->park_if[i])
				bpf_xdp_detach(w->park_if[i], XDP_FLAGS_DRV_MODE, NULL);
	if (w->rx_attached && w->ns_b >= 0 && !enter_ns(w->ns_b))
		bpf_xdp_detach(w->b_if, XDP_FLAGS_DRV_MODE, NULL);
	if (w->stats_fd >= 0)
		close(w->stats_fd);
	if (w->mem)
		munmap(w->mem, w->mem_len);
	if (w->ring)
		munmap(w->ring, w->ring_len);
	if (w->ctl)
		munmap(w->ctl, w->ctl_len);
	bpf_object__close(w->obj);
	if (w->ns_a >= 0)
		close(w->ns_a);
	if (w->ns_b >= 0)
		close(w->ns_b);
}

/* ---- reporting -------------------------------------------------------- */

struct row {
	enum kind k;
	uint32_t len, batch;
	struct meas m[MAX_ROUNDS];
	int n;
};

static double mpps(const struct meas *m)
{
	return (double)m->rx / m->secs / 1e6;
}

static double ns_per_pkt(const struct meas *m)
{
	return m->rx ? (double)(m->cpu_ns + m->soft_ns) / (double)m->rx : 0;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median, min and max of f over a row's rounds. */
static void stat3(const struct row *r, double (*f)(const struct meas *),
		  double *med, double *lo, double *hi)
{
	double v[MAX_ROUNDS];

	for (int i = 0; i < r->n; i++)
		v[i] = f(&r->m[i]);
	qsort(v, (size_t)r->n, sizeof(v[0]), cmp_dbl);
	*lo = v[0];
	*hi = v[r->n - 1];
	*med = r->n % 2 ? v[r->n / 2] : (v[r->n / 2 - 1] + v[r->n / 2]) / 2;
}

static double sent_mpps(const struct meas *m)
{
	return (double)m->sent / m->secs / 1e6;
}

static double loss_pct(const struct meas *m)
{
	return m->sent > m->rx ? 100.0 * (double)(m->sent - m->rx) / (double)m->sent : 0;
}

static double snd_share(const struct meas *m)
{
	return m->cpu_ns + m->soft_ns ? 100.0 * (double)m->cpu_ns / (double)(m->cpu_ns + m->soft_ns) : 0;
}

static void print_round_line(const struct row *r, const struct meas *m, int round)
{
	double mp = mpps(m);
	char b[12] = "-";

	if (r->batch)
		snprintf(b, sizeof(b), "%u", r->batch);
	printf("  r%-2d %-3s %5u %5u %6s %7.3f %7.2f %8.3f %6.2f %8.0f %7.1f",
	       round, kind_name[r->k], r->len, m->flen, b, mp, mp * m->flen * 8 / 1e3,
	       sent_mpps(m), loss_pct(m), ns_per_pkt(m), snd_share(m));
	if (m->prog_cnt)
		printf("  bpf %4.0f ns", (double)m->prog_ns / (double)m->prog_cnt);
	if (m->rxprog_cnt)
		printf("  rxbpf %4.0f ns", (double)m->rxprog_ns / (double)m->rxprog_cnt);
	if (m->bad)
		printf("  BAD CSUM %llu/%llu", (unsigned long long)m->bad,
		       (unsigned long long)m->checked);
	printf("\n");
}

static void print_summary(struct row *rows, int nrows, int rounds)
{
	printf("\nSummary over %d round(s): median [min..max]; Mpps and Gbit/s count "
	       "frames that reached the peer's XDP;\nCPU = sender thread + ksoftirqd "
	       "per delivered frame (the peer's XDP runs inline on the sender's CPU)\n",
	       rounds);
	printf("%-3s %5s %5s %5s  %-22s %-20s %-18s %6s %s\n", "var", "pay", "frame",
	       "batch", "Mpps", "Gbit/s", "CPU ns/pkt", "loss%", "Mpps/core");
	for (int i = 0; i < nrows; i++) {
		struct row *r = &rows[i];
		double m, lo, hi, c, clo, chi, l, llo, lhi;
		uint32_t fl;
		char b[12];

		if (!r->n)
			continue;
		fl = r->m[0].flen;
		stat3(r, mpps, &m, &lo, &hi);
		stat3(r, ns_per_pkt, &c, &clo, &chi);
		stat3(r, loss_pct, &l, &llo, &lhi);
		snprintf(b, sizeof(b), "%u", r->batch);
		printf("%-3s %5u %5u %5s  %5.2f [%5.2f..%5.2f]  %5.1f [%5.1f..%5.1f]  "
		       "%4.0f [%4.0f..%4.0f]  %5.1f  %5.2f\n",
		       kind_name[r->k], r->len, fl, r->batch ? b : "-", m, lo, hi,
		       m * fl * 8 / 1e3, lo * fl * 8 / 1e3, hi * fl * 8 / 1e3, c, clo,
		       chi, l, c > 0 ? 1e3 / c : 0);
	}
	for (int k = 0; k < K_N; k++)
		printf("  %-3s %s\n", kind_name[k], kind_desc[k]);
}

/* ---- main ------------------------------------------------------------- */

static void usage(void)
{
	fprintf(stderr, "usage: txengine --obj O --ns-a NS --if-a IF --ns-b NS --if-b IF\n"
		"  [--secs S] [--rounds R] [--sizes 64,1400] [--batches 256]\n"
		"  [--kbatch N] [--variants a,a2,b,c] [--cpu N] [--redirect]\n"
		"  [--xsk-budget N] [--xsk-burst N] [--sample-mask M] [--prog-stats]\n"
		"  [--mixed-len] [--verify-only] [--park IF0,IF1]\n");
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	memset(o, 0, sizeof(*o));
	o->secs = 2.0;
	o->rounds = 3;
	o->cpu = -1;
	o->sizes[0] = 64;
	o->sizes[1] = 1400;
	o->nsizes = 2;
	o->batches[0] = 256;
	o->batches[1] = 1024;
	o->nbatches = 2;
	o->xsk_budget = 256;
	o->xsk_burst = 256;
	o->sample_mask = 63;
	for (int k = 0; k < K_N; k++)
		o->want[k] = true;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--prog-stats")) { o->prog_stats = true; continue; }
		if (!strcmp(a, "--verify-only")) { o->verify_only = true; continue; }
		if (!strcmp(a, "--redirect")) { o->action = TXE_ACT_REDIRECT; continue; }
		if (!strcmp(a, "--mixed-len")) { o->mixed_len = true; continue; }
		if (!v)
			return -1;
		i++;
		if (!strcmp(a, "--obj")) o->obj = v;
		else if (!strcmp(a, "--ns-a")) o->ns_a = v;
		else if (!strcmp(a, "--ns-b")) o->ns_b = v;
		else if (!strcmp(a, "--if-a")) o->if_a = v;
		else if (!strcmp(a, "--if-b")) o->if_b = v;
		else if (!strcmp(a, "--park")) o->park = v;
		else if (!strcmp(a, "--secs")) o->secs = atof(v);
		else if (!strcmp(a, "--rounds")) o->rounds = atoi(v);
		else if (!strcmp(a, "--cpu")) o->cpu = atoi(v);
		else if (!strcmp(a, "--kbatch")) o->kbatch = (uint32_t)atoi(v);
		else if (!strcmp(a, "--xsk-budget")) o->xsk_budget = (uint32_t)atoi(v);
		else if (!strcmp(a, "--xsk-burst")) o->xsk_burst = (uint32_t)atoi(v);
		else if (!strcmp(a, "--sample-mask")) o->sample_mask = (uint32_t)strtoul(v, NULL, 0);
		else if (!strcmp(a, "--sizes")) o->nsizes = parse_list(v, o->sizes, MAX_LIST);
		else if (!strcmp(a, "--batches")) o->nbatches = parse_list(v, o->batches, MAX_LIST);
		else if (!strcmp(a, "--variants")) {
			for (int k = 0; k < K_N; k++) {
				char pat[8];
				const char *p = v;

				o->want[k] = false;
				snprintf(pat, sizeof(pat), "%s", kind_name[k]);
				while ((p = strstr(p, pat))) {
					char after = p[strlen(pat)];

					if ((p == v || p[-1] == ',') && (after == ',' || !after)) {
						o->want[k] = true;
						break;
					}
					p++;
				}
			}
		} else
			return -1;
	}
	if (!o->obj || !o->ns_a || !o->ns_b || !o->if_a || !o->if_b ||
	    o->nsizes <= 0 || o->nbatches <= 0 || o->rounds < 1 ||
	    o->rounds > MAX_ROUNDS || o->secs <= 0 || !o->xsk_burst)
		return -1;
	for (int i = 0; i < o->nsizes; i++)
		if (o->sizes[i] > TXE_MAX_PAYLOAD)
			return -1;
	for (int i = 0; i < o->nbatches; i++)
		if (!o->batches[i] || o->batches[i] > TXE_RING_SIZE)
			return -1;
	return 0;
}

int main(int argc, char **argv)
{
	static struct row rows[K_N * MAX_LIST * MAX_LIST];
	struct world w;
	struct opts o;
	int nrows = 0, rc = 0;

	if (parse_args(argc, argv, &o)) {
		usage();
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	memset(&w, 0, sizeof(w));
	w.ns_a = w.ns_b = w.stats_fd = -1;
	if (o.cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(o.cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			perror("sched_setaffinity");
	}
	if (setup(&w, &o)) {
		teardown(&w);
		return 1;
	}
	if (verify(&w)) {
		printf("CHECK FAILED\n");
		teardown(&w);
		return 1;
	}
	set_rx(&w, 0, o.sample_mask);
	if (o.verify_only) {
		teardown(&w);
		return 0;
	}

	for (int s = 0; s < o.nsizes; s++)
		for (int k = 0; k < K_N; k++) {
			int nb = (k == K_B || k == K_C) ? o.nbatches : 1;

			if (!o.want[k])
				continue;
			for (int b = 0; b < nb; b++) {
				rows[nrows].k = (enum kind)k;
				rows[nrows].len = o.sizes[s];
				rows[nrows].batch = (k == K_B || k == K_C) ? o.batches[b] : 0;
				nrows++;
			}
		}
	printf("\n%d round(s) of %.1f s per line, %s; receiver checks 1 frame in %u\n",
	       o.rounds, o.secs, o.action == TXE_ACT_REDIRECT ? "bpf_redirect" : "XDP_TX",
	       o.sample_mask + 1);
	printf("  %-3s %-3s %5s %5s %6s %7s %7s %8s %6s %8s %7s\n", "rnd", "var", "pay",
	       "frame", "batch", "Mpps", "Gbit/s", "sentMpps", "loss%", "CPUns/p", "snd%");
	for (int round = 0; round < o.rounds && !rc; round++) {
		for (int i = 0; i < nrows; i++) {
			struct row *r = &rows[i];
			struct meas m;
			int err;

			memset(&m, 0, sizeof(m));
			if (r->k == K_A || r->k == K_A2)
				err = run_xsk(&w, &o, r->k, r->len, &m);
			else
				err = run_testrun(&w, &o, r->k, r->len, r->batch, &m);
			if (err) {
				rc = 1;
				break;
			}
			r->m[r->n++] = m;
			print_round_line(r, &m, round + 1);
			if (m.bad)
				rc = 1;
		}
	}
	print_summary(rows, nrows, o.rounds);
	if (w.ctl->empty)
		printf("note: txe_build found the ring empty %llu times\n",
		       (unsigned long long)w.ctl->empty);
	teardown(&w);
	return rc;
}
