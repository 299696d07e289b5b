// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Tests of user/xsk.c on real sockets: root only (skipped otherwise).
 *
 * Each test builds its own pair of network namespaces with unshare() and
 * keeps them alive only through file descriptors held by this process, so
 * the namespaces, and the veth pairs inside them, disappear when the
 * process ends, however it ends (failure, Ctrl-C, SIGKILL): nothing to
 * clean up, nothing to collide with another run.
 *
 *   side A (ns_a): xr<pid>a0 [a1]   AF_XDP socket transmits here
 *   side B (ns_b): xr<pid>b0 [b1]   AF_PACKET socket (or XDP) receives
 *
 * The UMEM is what libxroce uses: a BPF_F_MMAPABLE array map of 4 KiB
 * values, mmapped.
 *
 *   build/tests/test_xsk                  the tests
 *   build/tests/test_xsk --bench [secs]   copy-mode transmit rate of
 *                                         1400-byte frames to an XDP_DROP
 *                                         peer (build without sanitizers
 *                                         for meaningful numbers)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "csum.h"
#include "xsk.h"
#include "contract/wire.h"

#define TEST_ETHERTYPE 0x88b5 /* IEEE local experimental */
#define MAX_PAIRS 2

/* ---- namespaces and veths -------------------------------------------- */

struct env {
	int orig, ns_a, ns_b;
	int npairs;
	char a_name[MAX_PAIRS][IFNAMSIZ], b_name[MAX_PAIRS][IFNAMSIZ];
	int a_if[MAX_PAIRS], b_if[MAX_PAIRS];
	uint8_t a_mac[MAX_PAIRS][6], b_mac[MAX_PAIRS][6];
};

static int enter_ns(int fd)
{
	return setns(fd, CLONE_NEWNET);
}

/* Run a shell command inside a namespace; returns its exit status. */
static int sh(const struct env *e, int ns, const char *fmt, ...)
{
	char cmd[512];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (enter_ns(ns))
		return -1;
	rc = system(cmd);
	enter_ns(e->orig);
	return rc;
}

static int new_ns(int orig)
{
	int fd;

	if (unshare(CLONE_NEWNET))
		return -1;
	fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	enter_ns(orig);
	return fd;
}

static int if_mac(const char *name, uint8_t mac[6])
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	rc = ioctl(fd, SIOCGIFHWADDR, &ifr);
	close(fd);
	if (!rc)
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	return rc;
}

static void env_close(struct env *e)
{
	if (e->orig >= 0)
		enter_ns(e->orig);
	if (e->ns_a >= 0)
		close(e->ns_a);
	if (e->ns_b >= 0)
		close(e->ns_b);
	if (e->orig >= 0)
		close(e->orig);
	e->orig = e->ns_a = e->ns_b = -1;
}

/* npairs veth pairs from A to B, up, tx checksum offload off. */
static int env_open(struct env *e, int npairs)
{
	memset(e, 0, sizeof(*e));
	e->ns_a = e->ns_b = -1;
	e->npairs = npairs;
	e->orig = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (e->orig < 0)
		return -1;
	e->ns_a = new_ns(e->orig);
	e->ns_b = new_ns(e->orig);
	if (e->ns_a < 0 || e->ns_b < 0)
		goto fail;
	for (int i = 0; i < npairs; i++) {
		snprintf(e->a_name[i], IFNAMSIZ, "xr%da%d", (int)getpid(), i);
		snprintf(e->b_name[i], IFNAMSIZ, "xr%db%d", (int)getpid(), i);
		if (sh(e, e->ns_a,
		       "ip link add %s type veth peer name %s netns /proc/%d/fd/%d"
		       " && ip link set %s up && ethtool -K %s tx off >/dev/null",
		       e->a_name[i], e->b_name[i], (int)getpid(), e->ns_b,
		       e->a_name[i], e->a_name[i]) ||
		    sh(e, e->ns_b, "ip link set %s up && ethtool -K %s tx off >/dev/null",
		       e->b_name[i], e->b_name[i]))
			goto fail;
		enter_ns(e->ns_a);
		e->a_if[i] = (int)if_nametoindex(e->a_name[i]);
		if_mac(e->a_name[i], e->a_mac[i]);
		enter_ns(e->ns_b);
		e->b_if[i] = (int)if_nametoindex(e->b_name[i]);
		if_mac(e->b_name[i], e->b_mac[i]);
		enter_ns(e->orig);
		if (!e->a_if[i] || !e->b_if[i])
			goto fail;
	}
	return 0;
fail:
	env_close(e);
	return -1;
}

/* ---- UMEM: an mmapped BPF_F_MMAPABLE array of 4 KiB values ------------ */

struct umem {
	int map_fd;
	uint8_t *area;
	size_t len;
};

static int umem_open(struct umem *u, uint32_t frames)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_MMAPABLE);

	u->len = (size_t)frames * XR_XSK_FRAME_SIZE;
	u->map_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "xr_test_umem", 4,
				   XR_XSK_FRAME_SIZE, frames, &o);
	if (u->map_fd < 0)
		return -1;
	u->area = mmap(NULL, u->len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       u->map_fd, 0);
	if (u->area == MAP_FAILED) {
		close(u->map_fd);
		return -1;
	}
	return 0;
}

static void umem_close(struct umem *u)
{
	munmap(u->area, u->len);
	close(u->map_fd);
}

/* ---- frames ----------------------------------------------------------- */

static uint8_t pattern(uint32_t seq, uint32_t tag, uint32_t i)
{
	return (uint8_t)(seq * 7 + i * 13 + tag * 101 + (i >> 8));
}

/* Ethernet header + seq + tag, then the pattern up to len bytes. */
static void make_frame(uint8_t *f, uint32_t len, const uint8_t dst[6],
		       const uint8_t src[6], uint32_t seq, uint32_t tag)
{
	uint16_t et = htons(TEST_ETHERTYPE);
	uint32_t s = htonl(seq), t = htonl(tag);

	memcpy(f, dst, 6);
	memcpy(f + 6, src, 6);
	memcpy(f + 12, &et, 2);
	memcpy(f + 14, &s, 4);
	memcpy(f + 18, &t, 4);
	for (uint32_t i = 22; i < len; i++)
		f[i] = pattern(seq, tag, i);
}

/* Checks a received frame; returns its seq, or -1 if malformed. */
static long check_frame(const uint8_t *f, uint32_t len, uint32_t tag,
			uint32_t (*len_of)(uint32_t))
{
	uint32_t s, t;

	if (len < 22)
		return -1;
	memcpy(&s, f + 14, 4);
	memcpy(&t, f + 18, 4);
	s = ntohl(s);
	t = ntohl(t);
	if (t != tag || len != len_of(s))
		return -1;
	for (uint32_t i = 22; i < len; i++)
		if (f[i] != pattern(s, tag, i))
			return -1;
	return s;
}

static int rx_socket(const struct env *e, int pair)
{
	struct sockaddr_ll sll;
	int buf = 16 << 20, fd;

	enter_ns(e->ns_b);
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(TEST_ETHERTYPE));
	enter_ns(e->orig);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf));
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(TEST_ETHERTYPE);
	sll.sll_ifindex = e->b_if[pair];
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Receive frames until n good ones arrived or 2 s of silence; bitmap
 * marks which seqs were seen; returns the number of good frames, or -1 on
 * a malformed or duplicate frame. */
static int rx_collect(int fd, uint32_t tag, uint32_t n, uint8_t *seen,
		      uint32_t (*len_of)(uint32_t))
{
	static uint8_t buf[65536];
	uint32_t got = 0;

	while (got < n) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t r;
		long s;

		if (poll(&p, 1, 2000) <= 0)
			break;
		r = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (r < 0)
			continue;
		s = check_frame(buf, (uint32_t)r, tag, len_of);
		if (s < 0 || (uint32_t)s >= n || seen[s])
			return -1;
		seen[s] = 1;
		got++;
	}
	return (int)got;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Reap until 'want' completions were collected (addresses appended to
 * addrs) or 2 s passed; returns how many. */
static uint32_t reap_all(struct xr_xsk *x, uint64_t *addrs, uint32_t want)
{
	uint32_t got = 0;
	double end = now_s() + 2.0;

	while (got < want && now_s() < end) {
		int n = xr_xsk_reap(x, addrs + got, (int)(want - got));

		if (n == 0) {
			xr_xsk_tx_kick(x);
			usleep(1000);
		}
		got += (uint32_t)n;
	}
	return got;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static struct xr_xsk *xsk_on(const struct env *e, int pair, struct umem *u,
			     const struct xr_xsk_opts *o, int *err)
{
	struct xr_xsk *x = NULL;

	enter_ns(e->ns_a);
	*err = xr_xsk_create(&x, e->a_if[pair], 0, u->area, u->len, o);
	enter_ns(e->orig);
	return x;
}

#define NEED_ROOT()                                                       \
	do {                                                              \
		if (geteuid() != 0) {                                     \
			print_message("not root: skipped\n");             \
			skip();                                           \
		}                                                         \
	} while (0)

/* ---- tests ----------------------------------------------------------- */

static uint32_t len_single(uint32_t seq)
{
	/* 60..1514 bytes, varied. */
	return 60 + (seq * 97) % (1514 - 60 + 1);
}

/* N frames pushed in bursts, each checked byte for byte at the receiver;
 * every frame address comes back exactly once through completions. */
static void test_tx_copy_mode(void **state)
{
	enum { N = 300, FRAMES = 512 };
	struct env e;
	struct umem u;
	struct xr_xsk *x;
	struct xr_xsk_stats st;
	uint8_t seen[N] = { 0 };
	uint64_t done[N];
	int err, rfd;

	(void)state;
	NEED_ROOT();
	assert_int_equal(env_open(&e, 1), 0);
	assert_int_equal(umem_open(&u, FRAMES), 0);
	x = xsk_on(&e, 0, &u, NULL, &err);
	assert_int_equal(err, 0);
	assert_non_null(x);
	/* veth has no zero copy: the fallback must have happened. */
	assert_false(xr_xsk_zerocopy(x));
	print_message("mode: %s, multi-buffer: %s\n",
		      xr_xsk_zerocopy(x) ? "zero copy" : "copy",
		      xr_xsk_sg(x) ? "yes" : "no");
	rfd = rx_socket(&e, 0);
	assert_true(rfd >= 0);

	for (uint32_t s = 0; s < N; s++) {
		uint64_t addr = (uint64_t)s * XR_XSK_FRAME_SIZE;

		make_frame(u.area + addr, len_single(s), e.b_mac[0], e.a_mac[0], s, 1);
		assert_int_equal(xr_xsk_tx_push(x, addr, len_single(s)), 0);
		if (s % 50 == 49) /* bursts, as the library will send */
			xr_xsk_tx_kick(x);
	}
	assert_int_equal(xr_xsk_outstanding(x), N);
	xr_xsk_tx_kick(x);
	assert_int_equal(rx_collect(rfd, 1, N, seen, len_single), N);

	assert_int_equal(reap_all(x, done, N), N);
	assert_int_equal(xr_xsk_outstanding(x), 0);
	qsort(done, N, sizeof(done[0]), cmp_u64);
	for (uint32_t s = 0; s < N; s++)
		assert_int_equal(done[s], (uint64_t)s * XR_XSK_FRAME_SIZE);

	assert_int_equal(xr_xsk_get_stats(x, &st), 0);
	assert_int_equal(st.tx_pkts, N);
	assert_int_equal(st.completed, N);
	assert_int_equal(st.tx_invalid, 0);
	assert_true(st.kicks >= 1);
	close(rfd);
	xr_xsk_destroy(x);
	umem_close(&u);
	env_close(&e);
}

static uint32_t len_plane(uint32_t seq)
{
	return 1000 + seq % 400;
}

/* Two planes: two interfaces, two sockets, two different UMEMs in one
 * process, used interleaved. */
static void test_two_planes(void **state)
{
	enum { N = 200, FRAMES = 256 };
	struct env e;
	struct umem u[2];
	struct xr_xsk *x[2];
	uint8_t seen[2][N];
	uint64_t done[N];
	int err, rfd[2];

	(void)state;
	NEED_ROOT();
	memset(seen, 0, sizeof(seen));
	assert_int_equal(env_open(&e, 2), 0);
	for (int p = 0; p < 2; p++) {
		assert_int_equal(umem_open(&u[p], FRAMES), 0);
		x[p] = xsk_on(&e, p, &u[p], NULL, &err);
		assert_int_equal(err, 0);
		rfd[p] = rx_socket(&e, p);
		assert_true(rfd[p] >= 0);
	}
	assert_ptr_not_equal(u[0].area, u[1].area);

	for (uint32_t s = 0; s < N; s++) {
		for (int p = 0; p < 2; p++) {
			uint64_t addr = (uint64_t)(s % FRAMES) * XR_XSK_FRAME_SIZE;

			make_frame(u[p].area + addr, len_plane(s), e.b_mac[p],
				   e.a_mac[p], s, 10 + (uint32_t)p);
			assert_int_equal(xr_xsk_tx_push(x[p], addr, len_plane(s)), 0);
		}
	}
	for (int p = 0; p < 2; p++)
		xr_xsk_tx_kick(x[p]);
	for (int p = 0; p < 2; p++) {
		/* Each receiver sees only its plane's frames (tag checked). */
		assert_int_equal(rx_collect(rfd[p], 10 + (uint32_t)p, N, seen[p], len_plane), N);
		assert_int_equal(reap_all(x[p], done, N), N);
		close(rfd[p]);
		xr_xsk_destroy(x[p]);
		umem_close(&u[p]);
	}
	env_close(&e);
}

/* Multi-buffer payload layout: payload of seq s starts at this offset of
 * the payload area, so some packets cross a frame boundary. */
static uint32_t mb_pay_len(uint32_t seq)
{
	return 200 + (seq * 131) % 1200;
}

static uint32_t mb_len(uint32_t seq)
{
	return 22 + mb_pay_len(seq);
}

/* Header frame + payload in place, as 2 or 3 descriptors; the receiver
 * must see one packet with the bytes in order. */
static void test_multibuffer(void **state)
{
	enum { N = 200, HDR_FRAMES = 256, PAY_FRAMES = 128, FRAMES = HDR_FRAMES + PAY_FRAMES };
	struct env e;
	struct umem u;
	struct xr_xsk *x;
	struct xr_xsk_stats st;
	uint8_t seen[N] = { 0 };
	uint8_t tmp[2048];
	static uint64_t done[3 * N];
	uint32_t descs = 0, crossing = 0;
	int err, rfd;

	(void)state;
	NEED_ROOT();
	assert_int_equal(env_open(&e, 1), 0);
	assert_int_equal(umem_open(&u, FRAMES), 0);
	x = xsk_on(&e, 0, &u, NULL, &err);
	assert_int_equal(err, 0);
	if (!xr_xsk_sg(x)) {
		xr_xsk_destroy(x);
		umem_close(&u);
		env_close(&e);
		print_message("kernel without AF_XDP multi-buffer: skipped\n");
		skip();
	}
	rfd = rx_socket(&e, 0);
	assert_true(rfd >= 0);

	for (uint32_t s = 0; s < N; s++) {
		uint64_t hdr = (uint64_t)s * XR_XSK_FRAME_SIZE;
		uint64_t pay = (uint64_t)HDR_FRAMES * XR_XSK_FRAME_SIZE +
			       ((uint64_t)s * 2333) % ((PAY_FRAMES - 1) * XR_XSK_FRAME_SIZE);
		uint32_t pl = mb_pay_len(s);

		/* Build the whole frame, then split it: 22 header bytes in the
		 * header frame, the rest in the payload area. */
		make_frame(tmp, mb_len(s), e.b_mac[0], e.a_mac[0], s, 3);
		memcpy(u.area + hdr, tmp, 22);
		memcpy(u.area + pay, tmp + 22, pl);
		if (pay / XR_XSK_FRAME_SIZE != (pay + pl - 1) / XR_XSK_FRAME_SIZE)
			crossing++;
		if (xr_xsk_tx_free_slots(x) < 3) {
			xr_xsk_tx_kick(x);
			descs += (uint32_t)reap_all(x, done + descs, xr_xsk_outstanding(x));
		}
		assert_int_equal(xr_xsk_tx_push_hdr_payload(x, hdr, 22, pay, pl), 0);
	}
	assert_true(crossing > 10); /* the 3-descriptor case was exercised */
	xr_xsk_tx_kick(x);
	assert_int_equal(rx_collect(rfd, 3, N, seen, mb_len), N);
	descs += reap_all(x, done + descs, xr_xsk_outstanding(x));
	assert_int_equal(descs, N * 2 + crossing);
	assert_int_equal(xr_xsk_get_stats(x, &st), 0);
	assert_int_equal(st.tx_descs, descs);
	assert_int_equal(st.tx_invalid, 0);

	/* Without multi-buffer, several descriptors are refused up front. */
	struct xr_xsk_opts o = { .no_sg = true };
	struct xr_xsk *y;
	struct umem u2;
	struct xr_xsk_seg segs[2] = { { 0, 22 }, { 4096, 100 } };

	close(rfd);
	xr_xsk_destroy(x);
	assert_int_equal(umem_open(&u2, 4), 0);
	y = xsk_on(&e, 0, &u2, &o, &err);
	assert_int_equal(err, 0);
	assert_false(xr_xsk_sg(y));
	assert_int_equal(xr_xsk_tx_push_sg(y, segs, 2), -EOPNOTSUPP);
	xr_xsk_destroy(y);
	umem_close(&u2);
	umem_close(&u);
	env_close(&e);
}

static void test_errors(void **state)
{
	struct env e;
	struct umem u;
	struct xr_xsk *x = NULL, *y = NULL;
	struct xr_xsk_opts small = { .tx_size = 8 };
	int err;

	(void)state;
	NEED_ROOT();
	assert_int_equal(env_open(&e, 1), 0);
	assert_int_equal(umem_open(&u, 16), 0);

	enter_ns(e.ns_a);
	/* No such interface in this namespace. */
	assert_int_equal(xr_xsk_create(&x, 999999, 0, u.area, u.len, NULL), -ENODEV);
	/* UMEM not page aligned, or not whole frames. */
	assert_int_equal(xr_xsk_create(&x, e.a_if[0], 0, u.area + 64,
				       u.len - 4096, NULL), -EINVAL);
	assert_int_equal(xr_xsk_create(&x, e.a_if[0], 0, u.area, u.len - 100,
				       NULL), -EINVAL);
	/* Ring size not a power of two. */
	struct xr_xsk_opts bad = { .tx_size = 1000 };
	assert_int_equal(xr_xsk_create(&x, e.a_if[0], 0, u.area, u.len, &bad), -EINVAL);
	/* A queue the device does not have. */
	err = xr_xsk_create(&x, e.a_if[0], 7, u.area, u.len, NULL);
	assert_true(err < 0);
	assert_null(x);
	/* Forcing zero copy on veth fails instead of falling back. */
	struct xr_xsk_opts zc = { .mode = XR_XSK_MODE_ZEROCOPY };
	err = xr_xsk_create(&x, e.a_if[0], 0, u.area, u.len, &zc);
	assert_true(err < 0);
	print_message("zero copy on veth: %s\n", strerror(-err));

	/* One UMEM-owning socket per (interface, queue). */
	assert_int_equal(xr_xsk_create(&x, e.a_if[0], 0, u.area, u.len, &small), 0);
	assert_int_equal(xr_xsk_create(&y, e.a_if[0], 0, u.area, u.len, NULL), -EBUSY);
	enter_ns(e.orig);

	/* Descriptors outside the UMEM or across a frame are refused. */
	assert_int_equal(xr_xsk_tx_push(x, u.len, 60), -EINVAL);
	assert_int_equal(xr_xsk_tx_push(x, 4000, 200), -EINVAL);
	assert_int_equal(xr_xsk_tx_push(x, 0, 0), -EINVAL);
	/* A full ring says so, and kicking + reaping makes room again. */
	make_frame(u.area, 60, e.b_mac[0], e.a_mac[0], 0, 9);
	for (int i = 0; i < 8; i++)
		assert_int_equal(xr_xsk_tx_push(x, 0, 60), 0);
	assert_int_equal(xr_xsk_tx_free_slots(x), 0);
	assert_int_equal(xr_xsk_tx_push(x, 0, 60), -ENOSPC);
	assert_int_equal(xr_xsk_tx_kick(x), 0);
	uint64_t done[8];
	assert_int_equal(reap_all(x, done, 8), 8);
	assert_int_equal(xr_xsk_tx_free_slots(x), 8);
	struct xr_xsk_stats st;
	assert_int_equal(xr_xsk_get_stats(x, &st), 0);
	assert_int_equal(st.ring_full, 1);

	/* A queue with RX but no TX: bind accepts it, the kernel then sends
	 * nothing; the kick must say so rather than "try again". */
	{
		struct umem u3;
		struct xr_xsk *z = NULL;

		assert_int_equal(sh(&e, e.ns_a, "ip link add xq%d numtxqueues 1 "
				    "numrxqueues 4 type veth peer name xq%dp && "
				    "ip link set xq%d up && ip link set xq%dp up",
				    (int)getpid(), (int)getpid(), (int)getpid(),
				    (int)getpid()), 0);
		char qname[IFNAMSIZ];
		snprintf(qname, sizeof(qname), "xq%d", (int)getpid());
		assert_int_equal(umem_open(&u3, 4), 0);
		enter_ns(e.ns_a);
		assert_int_equal(xr_xsk_create(&z, (int)if_nametoindex(qname), 2,
					       u3.area, u3.len, NULL), 0);
		enter_ns(e.orig);
		memset(u3.area, 0xff, 60);
		assert_int_equal(xr_xsk_tx_push(z, 0, 60), 0);
		assert_int_equal(xr_xsk_tx_kick(z), -ENXIO);
		xr_xsk_destroy(z);
		umem_close(&u3);
	}

	/* Interface down: the kick reports it. */
	assert_int_equal(sh(&e, e.ns_a, "ip link set %s down", e.a_name[0]), 0);
	assert_int_equal(xr_xsk_tx_push(x, 0, 60), 0);
	assert_int_equal(xr_xsk_tx_kick(x), -ENETDOWN);
	xr_xsk_destroy(x);
	umem_close(&u);
	env_close(&e);
}

/* ---- XDP counter on the receiving side ------------------------------- */

#define INSN(c, d, s, o, i)                                               \
	((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s),  \
			    .off = (o), .imm = (i) })

/* count[0] += 1; return XDP_DROP (or XDP_PASS).  Hand-assembled so the
 * test needs no BPF object file. */
static int load_counter_prog(int map_fd, int verdict)
{
	struct bpf_insn insns[] = {
		INSN(BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, -4, 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0),
		INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -4),
		INSN(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0, map_fd),
		INSN(0, 0, 0, 0, 0),
		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem),
		INSN(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 2, 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_1, 0, 0, 1),
		INSN(BPF_STX | BPF_ATOMIC | BPF_DW, BPF_REG_0, BPF_REG_1, 0, BPF_ADD),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, verdict),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};

	return bpf_prog_load(BPF_PROG_TYPE_XDP, "xr_test_count", "GPL", insns,
			     sizeof(insns) / sizeof(insns[0]), NULL);
}

static uint64_t counter_read(int map_fd)
{
	uint32_t k = 0;
	uint64_t v = 0;

	bpf_map_lookup_elem(map_fd, &k, &v);
	return v;
}

struct counter {
	int map_fd, prog_fd;
};

static int counter_attach(const struct env *e, struct counter *c, int verdict)
{
	int rc;

	c->map_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "xr_test_cnt", 4, 8, 1, NULL);
	if (c->map_fd < 0)
		return -1;
	c->prog_fd = load_counter_prog(c->map_fd, verdict);
	if (c->prog_fd < 0)
		return -1;
	enter_ns(e->ns_b);
	rc = bpf_xdp_attach(e->b_if[0], c->prog_fd, XDP_FLAGS_DRV_MODE, NULL);
	enter_ns(e->orig);
	return rc;
}

static void counter_close(struct counter *c)
{
	close(c->prog_fd);
	close(c->map_fd);
}

/* Push many more frames than the rings hold, recycling completions, into
 * an XDP_DROP receiver.  Checks that kick/reap/backpressure never lose
 * track of a frame.  With a qdisc on the sending veth, a full receiver
 * pushes back (EAGAIN) instead of dropping (EBUSY), so every frame must
 * arrive. */
static void run_flood(int qdisc)
{
	enum { N = 20000, FRAMES = 512, LEN = 1400 };
	struct env e;
	struct umem u;
	struct counter c;
	struct xr_xsk *x;
	struct xr_xsk_opts o = { .tx_size = 256 };
	struct xr_xsk_stats st;
	uint64_t free_q[FRAMES], done[FRAMES];
	uint32_t nfree = FRAMES, sent = 0;
	int err;
	double end;

	NEED_ROOT();
	assert_int_equal(env_open(&e, 1), 0);
	if (qdisc)
		assert_int_equal(sh(&e, e.ns_a, "tc qdisc add dev %s root pfifo", e.a_name[0]), 0);
	assert_int_equal(umem_open(&u, FRAMES), 0);
	assert_int_equal(counter_attach(&e, &c, XDP_DROP), 0);
	x = xsk_on(&e, 0, &u, &o, &err);
	assert_int_equal(err, 0);
	for (uint32_t i = 0; i < FRAMES; i++) {
		free_q[i] = (uint64_t)i * XR_XSK_FRAME_SIZE;
		make_frame(u.area + free_q[i], LEN, e.b_mac[0], e.a_mac[0], i, 5);
	}
	end = now_s() + 20;
	while ((sent < N || xr_xsk_outstanding(x)) && now_s() < end) {
		int n = xr_xsk_reap(x, done, FRAMES);

		for (int i = 0; i < n; i++)
			free_q[nfree++] = done[i];
		while (sent < N && nfree && xr_xsk_tx_free_slots(x)) {
			assert_int_equal(xr_xsk_tx_push(x, free_q[--nfree], LEN), 0);
			sent++;
		}
		err = xr_xsk_tx_kick(x);
		assert_true(err == 0 || err == -EAGAIN);
	}
	assert_int_equal(sent, N);
	assert_int_equal(xr_xsk_outstanding(x), 0);
	assert_int_equal(nfree, FRAMES);
	assert_int_equal(xr_xsk_get_stats(x, &st), 0);
	usleep(100000);
	uint64_t rx = counter_read(c.map_fd);
	print_message("%s: %u sent, %llu reached XDP, kicks %llu, EAGAIN %llu, "
		      "EBUSY %llu\n", qdisc ? "pfifo" : "noqueue", (unsigned)N,
		      (unsigned long long)rx, (unsigned long long)st.kicks,
		      (unsigned long long)st.eagain, (unsigned long long)st.ebusy);
	/* Every frame either reached XDP or was reported dropped (EBUSY);
	 * IPv6 autoconfiguration may add a handful of packets. */
	assert_true(rx + st.ebusy >= N);
	assert_true(rx + st.ebusy <= N + 20);
	if (qdisc)
		assert_int_equal(st.ebusy, 0);
	xr_xsk_destroy(x);
	counter_close(&c);
	umem_close(&u);
	env_close(&e);
}

static void test_flood_noqueue(void **state)
{
	(void)state;
	run_flood(0);
}

static void test_flood_qdisc_backpressure(void **state)
{
	(void)state;
	run_flood(1);
}

/* ---- benchmark ------------------------------------------------------- */

enum bench_kind { B_RAW, B_COPY, B_SG };

#define B_HDR (14 + 20 + 8 + 64) /* eth + IPv4 + UDP + xroce data header */
#define B_FRAME 1400
#define B_PAY (B_FRAME - B_HDR)

/* A plausible xroce data frame header; returns the UDP header's partial
 * sum (UDP + xroce headers) so the payload sum can be added. */
static uint32_t bench_header(uint8_t *f, const struct env *e, uint32_t psn)
{
	struct iphdr *ip = (struct iphdr *)(f + 14);
	struct udphdr *udp = (struct udphdr *)(f + 34);
	struct xr_data_hdr *d = (struct xr_data_hdr *)(f + 42);
	uint16_t et = htons(ETH_P_IP);

	memcpy(f, e->b_mac[0], 6);
	memcpy(f + 6, e->a_mac[0], 6);
	memcpy(f + 12, &et, 2);
	memset(ip, 0, sizeof(*ip));
	ip->version = 4;
	ip->ihl = 5;
	ip->ttl = 64;
	ip->protocol = IPPROTO_UDP;
	ip->tot_len = htons(B_FRAME - 14);
	ip->saddr = htonl(0x0a000001);
	ip->daddr = htonl(0x0a000002);
	ip->check = xr_ip4_hdr_csum(ip, 20);
	udp->source = htons(50000);
	udp->dest = htons(XR_DEFAULT_UDP_PORT);
	udp->len = htons(B_FRAME - 34);
	udp->check = 0;
	memset(d, 0, sizeof(*d));
	d->ver_type = XR_VER_TYPE(XR_T_DATA);
	d->opcode = XR_OP_WRITE;
	d->psn = htonl(psn);
	d->msg_len = htonl(B_PAY);
	return xr_csum_add(xr_csum_pseudo4(&ip->saddr, &ip->daddr, IPPROTO_UDP,
					   B_FRAME - 34),
			   xr_csum_partial(udp, 8 + 64, 0));
}

struct bench_res {
	double mpps, xdp_mpps;
	bool budget_set;
	struct xr_xsk_stats st;
};

static int bench_run(const struct env *e, int counter_map, enum bench_kind kind,
		     const struct xr_xsk_opts *o, double secs, struct bench_res *r)
{
	enum { TXF = 2048, APPF = 64 };
	struct umem u;
	struct xr_xsk *x;
	uint64_t *free_q = malloc(TXF * sizeof(uint64_t));
	uint64_t done[TXF];
	uint32_t nfree = TXF, psn = 0;
	uint64_t pkts_done = 0;
	uint64_t start_done = 0, start_rx;
	uint8_t *app;
	double t0, t1, warm;
	int err;

	if (!free_q || umem_open(&u, TXF + APPF))
		return -1;
	x = xsk_on(e, 0, &u, o, &err);
	if (!x) {
		fprintf(stderr, "xsk: %s\n", strerror(-err));
		return -1;
	}
	if (kind == B_SG && !xr_xsk_sg(x)) {
		xr_xsk_destroy(x);
		umem_close(&u);
		free(free_q);
		return 1;
	}
	app = u.area + (size_t)TXF * XR_XSK_FRAME_SIZE;
	for (size_t i = 0; i < (size_t)APPF * XR_XSK_FRAME_SIZE; i++)
		app[i] = (uint8_t)(i * 31);
	for (uint32_t i = 0; i < TXF; i++) {
		free_q[i] = (uint64_t)i * XR_XSK_FRAME_SIZE;
		if (kind == B_RAW) {
			uint8_t *f = u.area + free_q[i];
			uint32_t s = bench_header(f, e, i);

			s = xr_csum_add(s, xr_csum_copy(f + B_HDR, app, B_PAY, 0));
			((struct udphdr *)(f + 34))->check = xr_csum_udp_final(s);
		}
	}

	warm = now_s() + 0.3;
	t0 = 0;
	start_rx = 0;
	for (;;) {
		double t = now_s();
		int n;

		if (!t0 && t >= warm) {
			start_done = pkts_done;
			start_rx = counter_read(counter_map);
			t0 = t;
		}
		if (t0 && t - t0 >= secs)
			break;
		n = xr_xsk_reap(x, done, TXF);
		/* Only frame (header) addresses count as packets and are
		 * recycled; SG payload descriptors complete too. */
		for (int i = 0; i < n; i++)
			if (done[i] < (uint64_t)TXF * XR_XSK_FRAME_SIZE) {
				free_q[nfree++] = done[i] & ~(uint64_t)(XR_XSK_FRAME_SIZE - 1);
				pkts_done++;
			}
		for (uint32_t burst = 0; burst < 64 && nfree; burst++) {
			uint64_t a = free_q[nfree - 1];
			uint8_t *f = u.area + a;
			/* Payload source moves through the app area; keep it
			 * inside one frame so SG needs two descriptors. */
			uint32_t off = (psn % APPF) * XR_XSK_FRAME_SIZE + (psn * 64) % 2048;

			if (kind == B_RAW) {
				err = xr_xsk_tx_push(x, a, B_FRAME);
			} else if (kind == B_COPY) {
				uint32_t s = bench_header(f, e, psn);

				s = xr_csum_add(s, xr_csum_copy(f + B_HDR, app + off, B_PAY, 0));
				((struct udphdr *)(f + 34))->check = xr_csum_udp_final(s);
				err = xr_xsk_tx_push(x, a, B_FRAME);
			} else {
				uint32_t s = bench_header(f, e, psn);

				s = xr_csum_add(s, xr_csum_partial(app + off, B_PAY, 0));
				((struct udphdr *)(f + 34))->check = xr_csum_udp_final(s);
				err = xr_xsk_tx_push_hdr_payload(x, a, B_HDR,
					(uint64_t)TXF * XR_XSK_FRAME_SIZE + off, B_PAY);
			}
			if (err)
				break;
			nfree--;
			psn++;
		}
		xr_xsk_tx_kick(x);
	}
	t1 = now_s();
	xr_xsk_get_stats(x, &r->st);
	r->mpps = (double)(pkts_done - start_done) / (t1 - t0) / 1e6;
	r->budget_set = xr_xsk_tx_budget_set(x);
	r->xdp_mpps = (double)(counter_read(counter_map) - start_rx) / (t1 - t0) / 1e6;
	xr_xsk_destroy(x);
	umem_close(&u);
	free(free_q);
	return 0;
}

static int bench(int argc, char **argv)
{
	static const char *kinds[] = { "raw 1400B frames", "copy payload+csum",
				       "SG hdr+payload" };
	double secs = argc > 2 ? atof(argv[2]) : 3.0;
	struct env e;
	struct counter c;

	if (geteuid() != 0) {
		fprintf(stderr, "--bench needs root\n");
		return 1;
	}
#if defined(__SANITIZE_ADDRESS__)
	printf("note: built with sanitizers, numbers are not representative\n");
#endif
	if (env_open(&e, 1) || counter_attach(&e, &c, XDP_DROP)) {
		fprintf(stderr, "setup failed\n");
		return 1;
	}
	printf("AF_XDP copy-mode TX, %d-byte frames, veth peer runs XDP_DROP; "
	       "%.1f s per line\n", B_FRAME, secs);
	printf("%-20s %-14s %7s %7s %7s %9s %9s %9s\n", "variant", "sender qdisc",
	       "budget", "Mpps", "Gbit/s", "XDP Mpps", "pkt/kick", "EBUSY/s");
	for (int qd = 0; qd < 2; qd++) {
		if (qd && sh(&e, e.ns_a, "tc qdisc add dev %s root pfifo", e.a_name[0]))
			break;
		for (int budget = 0; budget < 2; budget++) {
			for (int k = 0; k < 3; k++) {
				struct xr_xsk_opts o = { .tx_budget = budget ? 256 : 0 };
				struct bench_res r;
				int rc = bench_run(&e, c.map_fd, (enum bench_kind)k, &o, secs, &r);

				if (rc) {
					printf("%-20s %s\n", kinds[k], rc > 0 ? "unsupported" : "failed");
					continue;
				}
				printf("%-20s %-14s %7s %7.3f %7.2f %9.3f %9.1f %9.0f\n",
				       kinds[k], qd ? "pfifo" : "noqueue",
				       budget ? (r.budget_set ? "256" : "32(!)") : "32", r.mpps,
				       r.mpps * B_FRAME * 8 / 1e3, r.xdp_mpps,
				       r.st.kicks ? (double)r.st.tx_pkts / r.st.kicks : 0,
				       r.st.ebusy / (secs + 0.3));
			}
		}
	}
	counter_close(&c);
	env_close(&e);
	return 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tx_copy_mode),
		cmocka_unit_test(test_two_planes),
		cmocka_unit_test(test_multibuffer),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_flood_noqueue),
		cmocka_unit_test(test_flood_qdisc_backpressure),
	};

	if (argc > 1 && strcmp(argv[1], "--bench") == 0)
		return bench(argc, argv);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
