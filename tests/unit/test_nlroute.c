// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Tests of user/nlroute.c: root only (skipped otherwise).
 *
 * Two network namespaces made with unshare() and held only by this
 * process's file descriptors, so they vanish with the process however it
 * ends.  The resolver runs in namespace A: the test thread setns()es into
 * A around each call (rtnetlink and the trigger datagram use the calling
 * thread's namespace) and back.
 *
 *   A: a0 10.77.0.1/24 fd77::1/64  ==veth==  B: b0 10.77.0.2/24 fd77::2/64
 *   A: a1 10.66.0.1/24 fd66::1/64  ==veth==  B: b1 10.66.0.2/24 fd66::2/64
 *   A routes: 10.88.0.0/24 via 10.77.0.2 mtu 1300, fd88::/64 via fd77::2,
 *             fd89::/64 via B's link-local address on a0,
 *             unreachable 10.99.0.0/24 and fd99::/64,
 *             blackhole 10.98.0.0/24, prohibit 10.97.0.0/24
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
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "nlroute.h"

struct env {
	int orig, ns_a, ns_b;
	int a_if[2];
	char a_name[2][IFNAMSIZ], b_name[2][IFNAMSIZ];
	uint8_t a_mac[2][6], b_mac[2][6];
	uint8_t b_ll[16]; /* b0's IPv6 link-local address */
};

static struct env E;

static int enter_ns(int fd)
{
	return setns(fd, CLONE_NEWNET);
}

static int sh(int ns, const char *fmt, ...)
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
	enter_ns(E.orig);
	return rc;
}

/* First line of a command's output, run in a namespace. */
static int sh_read(int ns, char *out, size_t len, const char *fmt, ...)
{
	char cmd[512];
	va_list ap;
	FILE *f;
	int rc = -1;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	out[0] = '\0';
	if (enter_ns(ns))
		return -1;
	f = popen(cmd, "r");
	if (f) {
		if (fgets(out, (int)len, f))
			out[strcspn(out, "\n")] = '\0';
		rc = pclose(f);
	}
	enter_ns(E.orig);
	return rc;
}

static int new_ns(void)
{
	int fd;

	if (unshare(CLONE_NEWNET))
		return -1;
	fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	enter_ns(E.orig);
	return fd;
}

/* The MAC `ip link` reports for an interface of a namespace. */
static int ip_link_mac(int ns, const char *ifname, uint8_t mac[6])
{
	char line[256];

	if (sh_read(ns, line, sizeof(line),
		    "ip -o link show dev %s | sed -n 's/.*link\\/ether \\([0-9a-f:]*\\).*/\\1/p'",
		    ifname) || strlen(line) != 17)
		return -1;
	return sscanf(line, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &mac[0], &mac[1],
		      &mac[2], &mac[3], &mac[4], &mac[5]) == 6 ? 0 : -1;
}

static int setup(void **state)
{
	int pid = (int)getpid();
	char line[256];

	(void)state;
	memset(&E, 0, sizeof(E));
	E.orig = E.ns_a = E.ns_b = -1;
	if (geteuid() != 0)
		return 0; /* the tests skip */
	E.orig = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	E.ns_a = new_ns();
	E.ns_b = new_ns();
	if (E.orig < 0 || E.ns_a < 0 || E.ns_b < 0)
		return -1;
	/* No duplicate address detection: addresses usable at once. */
	for (int ns = 0; ns < 2; ns++)
		if (sh(ns ? E.ns_b : E.ns_a, "ip link set lo up && sysctl -qw "
		       "net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0"))
			return -1;
	for (int i = 0; i < 2; i++) {
		const char *net4 = i ? "10.66.0" : "10.77.0";
		const char *net6 = i ? "fd66" : "fd77";

		snprintf(E.a_name[i], IFNAMSIZ, "xn%da%d", pid, i);
		snprintf(E.b_name[i], IFNAMSIZ, "xn%db%d", pid, i);
		if (sh(E.ns_a, "ip link add %s mtu 1400 type veth peer name %s netns /proc/%d/fd/%d"
		       " && ip addr add %s.1/24 dev %s && ip addr add %s::1/64 dev %s nodad"
		       " && ip link set %s up",
		       E.a_name[i], E.b_name[i], pid, E.ns_b, net4, E.a_name[i],
		       net6, E.a_name[i], E.a_name[i]) ||
		    sh(E.ns_b, "ip link set %s mtu 1400 && ip addr add %s.2/24 dev %s"
		       " && ip addr add %s::2/64 dev %s nodad && ip link set %s up",
		       E.b_name[i], net4, E.b_name[i], net6, E.b_name[i], E.b_name[i]))
			return -1;
		if (ip_link_mac(E.ns_a, E.a_name[i], E.a_mac[i]) ||
		    ip_link_mac(E.ns_b, E.b_name[i], E.b_mac[i]))
			return -1;
		enter_ns(E.ns_a);
		E.a_if[i] = (int)if_nametoindex(E.a_name[i]);
		enter_ns(E.orig);
		if (!E.a_if[i])
			return -1;
	}
	if (sh_read(E.ns_b, line, sizeof(line),
		    "ip -6 -o addr show dev %s scope link | sed -n 's/.*inet6 \\([0-9a-f:]*\\)\\/.*/\\1/p'",
		    E.b_name[0]) || inet_pton(AF_INET6, line, E.b_ll) != 1)
		return -1;
	if (sh(E.ns_a, "ip route add 10.88.0.0/24 via 10.77.0.2 dev %s mtu 1300"
	       " && ip -6 route add fd88::/64 via fd77::2 dev %s"
	       " && ip -6 route add fd89::/64 via %s dev %s"
	       " && ip route add unreachable 10.99.0.0/24"
	       " && ip -6 route add unreachable fd99::/64"
	       " && ip route add blackhole 10.98.0.0/24"
	       " && ip route add prohibit 10.97.0.0/24",
	       E.a_name[0], E.a_name[0], line, E.a_name[0]))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	/* Closing the last references destroys the namespaces and veths. */
	if (E.orig >= 0)
		enter_ns(E.orig);
	if (E.ns_a >= 0)
		close(E.ns_a);
	if (E.ns_b >= 0)
		close(E.ns_b);
	if (E.orig >= 0)
		close(E.orig);
	return 0;
}

#define NEED_ROOT()                                                   \
	do {                                                          \
		if (geteuid() != 0) {                                 \
			print_message("not root: skipped\n");         \
			skip();                                       \
		}                                                     \
	} while (0)

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Resolve from namespace A; elapsed time in *ms. */
static int resolve_in_a(int ifindex, int family, const char *dst, int timeout_ms,
			struct xr_nexthop *nh, char *msg, size_t msglen, double *ms)
{
	uint8_t addr[16];
	double t;
	int rc;

	assert_int_equal(inet_pton(family, dst, addr), 1);
	assert_int_equal(enter_ns(E.ns_a), 0);
	t = now_ms();
	rc = xr_nl_resolve(ifindex, family, addr, timeout_ms, nh, msg, msglen);
	if (ms)
		*ms = now_ms() - t;
	enter_ns(E.orig);
	return rc;
}

static void assert_addr(int family, const uint8_t *got, const char *want)
{
	uint8_t w[16];

	assert_int_equal(inet_pton(family, want, w), 1);
	assert_memory_equal(got, w, family == AF_INET ? 4 : 16);
}

/* ---- tests ----------------------------------------------------------- */

static void test_link_info(void **state)
{
	struct xr_link_info li;
	char msg[160];

	(void)state;
	NEED_ROOT();
	enter_ns(E.ns_a);
	assert_int_equal(xr_nl_link(E.a_if[0], &li, msg, sizeof(msg)), 0);
	assert_int_equal(xr_nl_link(999999, &li, msg, sizeof(msg)), -ENODEV);
	print_message("bad ifindex: %s\n", msg);
	assert_int_equal(xr_nl_link(E.a_if[0], &li, NULL, 0), 0);
	enter_ns(E.orig);
	assert_string_equal(li.name, E.a_name[0]);
	assert_memory_equal(li.mac, E.a_mac[0], 6);
	assert_int_equal(li.mtu, 1400);
	assert_true(li.up);
	/* Loopback has no Ethernet address to send from. */
	enter_ns(E.ns_a);
	assert_int_equal(xr_nl_link(1, &li, msg, sizeof(msg)), -EOPNOTSUPP);
	enter_ns(E.orig);
}

static void check_direct(int family, const char *dst, const char *src)
{
	struct xr_nexthop nh;
	char msg[160];
	double ms;

	assert_int_equal(resolve_in_a(E.a_if[0], family, dst, 1000, &nh, msg,
				      sizeof(msg), &ms), 0);
	print_message("%s resolved in %.1f ms\n", dst, ms);
	assert_int_equal(nh.ifindex, E.a_if[0]);
	assert_int_equal(nh.family, family);
	assert_int_equal(nh.gw_family, family);
	assert_false(nh.via_gateway);
	assert_addr(family, nh.dst_addr, dst);
	assert_addr(family, nh.src_addr, src);
	assert_addr(family, nh.gw_addr, dst);
	assert_memory_equal(nh.src_mac, E.a_mac[0], 6);
	assert_memory_equal(nh.dst_mac, E.b_mac[0], 6);
	assert_int_equal(nh.mtu, 1400);
	/* Second time: the neighbour entry is there, no waiting. */
	assert_int_equal(resolve_in_a(E.a_if[0], family, dst, 1000, &nh, msg,
				      sizeof(msg), &ms), 0);
	assert_true(ms < 50);
}

/* A directly connected peer whose MAC is not known yet. */
static void test_direct_ipv4(void **state)
{
	(void)state;
	NEED_ROOT();
	check_direct(AF_INET, "10.77.0.2", "10.77.0.1");
}

static void test_direct_ipv6(void **state)
{
	(void)state;
	NEED_ROOT();
	check_direct(AF_INET6, "fd77::2", "fd77::1");
}

static void test_gateway_ipv4(void **state)
{
	struct xr_nexthop nh;
	char msg[160];

	(void)state;
	NEED_ROOT();
	assert_int_equal(resolve_in_a(E.a_if[0], AF_INET, "10.88.0.5", 1000, &nh,
				      msg, sizeof(msg), NULL), 0);
	assert_true(nh.via_gateway);
	assert_addr(AF_INET, nh.dst_addr, "10.88.0.5");
	assert_addr(AF_INET, nh.src_addr, "10.77.0.1");
	assert_addr(AF_INET, nh.gw_addr, "10.77.0.2");
	assert_memory_equal(nh.dst_mac, E.b_mac[0], 6);
	assert_int_equal(nh.mtu, 1300); /* the route's MTU is smaller */
}

static void test_gateway_ipv6(void **state)
{
	struct xr_nexthop nh;
	char msg[160];

	(void)state;
	NEED_ROOT();
	assert_int_equal(resolve_in_a(E.a_if[0], AF_INET6, "fd88::5", 1000, &nh,
				      msg, sizeof(msg), NULL), 0);
	assert_true(nh.via_gateway);
	assert_addr(AF_INET6, nh.src_addr, "fd77::1");
	assert_addr(AF_INET6, nh.gw_addr, "fd77::2");
	assert_memory_equal(nh.dst_mac, E.b_mac[0], 6);
	assert_int_equal(nh.mtu, 1400);

	/* Link-local gateway, the usual IPv6 case. */
	assert_int_equal(resolve_in_a(E.a_if[0], AF_INET6, "fd89::7", 1000, &nh,
				      msg, sizeof(msg), NULL), 0);
	assert_true(nh.via_gateway);
	assert_memory_equal(nh.gw_addr, E.b_ll, 16);
	assert_memory_equal(nh.dst_mac, E.b_mac[0], 6);
}

/* The route is looked up for the given interface, not the best one. */
static void test_interface_honoured(void **state)
{
	struct xr_nexthop nh;
	char msg[160];

	(void)state;
	NEED_ROOT();
	assert_int_equal(resolve_in_a(E.a_if[1], AF_INET, "10.66.0.2", 1000, &nh,
				      msg, sizeof(msg), NULL), 0);
	assert_memory_equal(nh.src_mac, E.a_mac[1], 6);
	assert_memory_equal(nh.dst_mac, E.b_mac[1], 6);
	assert_addr(AF_INET, nh.src_addr, "10.66.0.1");
	/* 10.66.0.0/24 and fd66::/64 are only reachable through a1.  (Through
	 * a0 a plain IPv4 lookup would say "on-link", and B, which owns
	 * 10.66.0.2, would even answer ARP for it on b0.) */
	double ms;
	int rc = resolve_in_a(E.a_if[0], AF_INET, "10.66.0.2", 300, &nh, msg,
			      sizeof(msg), &ms);
	print_message("10.66.0.2 via a0: %d (%s)\n", rc, msg);
	assert_int_equal(rc, -ENETUNREACH);
	assert_non_null(strstr(msg, "leaves through"));
	assert_true(ms < 100);
	rc = resolve_in_a(E.a_if[0], AF_INET6, "fd66::2", 300, &nh, msg,
			  sizeof(msg), NULL);
	print_message("fd66::2 via a0: %d (%s)\n", rc, msg);
	assert_int_equal(rc, -ENETUNREACH);
}

static void test_unreachable(void **state)
{
	struct xr_nexthop nh;
	char msg[160];
	double ms;
	int rc;

	(void)state;
	NEED_ROOT();
	/* Routes that refuse: an answer at once. */
	static const struct {
		int family;
		const char *dst;
	} refused[] = {
		{ AF_INET, "10.99.0.1" },  /* unreachable */
		{ AF_INET6, "fd99::1" },   /* unreachable */
		{ AF_INET, "10.98.0.1" },  /* blackhole */
		{ AF_INET, "10.97.0.1" },  /* prohibit */
	};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		rc = resolve_in_a(E.a_if[0], refused[i].family, refused[i].dst,
				  1000, &nh, msg, sizeof(msg), &ms);
		print_message("%s: %d (%s) in %.1f ms\n", refused[i].dst, rc, msg, ms);
		assert_int_equal(rc, -ENETUNREACH);
		assert_true(ms < 100);
		assert_true(strlen(msg) > 0);
	}

	/* On-link but nobody there: bounded wait, then EHOSTUNREACH. */
	rc = resolve_in_a(E.a_if[0], AF_INET, "10.77.0.99", 300, &nh, msg,
			  sizeof(msg), &ms);
	print_message("10.77.0.99: %d (%s) in %.0f ms\n", rc, msg, ms);
	assert_int_equal(rc, -EHOSTUNREACH);
	assert_true(ms >= 290 && ms < 1000);
	assert_non_null(strstr(msg, "10.77.0.99"));
	rc = resolve_in_a(E.a_if[0], AF_INET6, "fd77::99", 300, &nh, msg,
			  sizeof(msg), &ms);
	print_message("fd77::99: %d (%s) in %.0f ms\n", rc, msg, ms);
	assert_int_equal(rc, -EHOSTUNREACH);
	assert_true(ms >= 290 && ms < 1000);

	/* Not waiting at all. */
	rc = resolve_in_a(E.a_if[0], AF_INET, "10.77.0.98", 0, &nh, msg,
			  sizeof(msg), &ms);
	assert_int_equal(rc, -EAGAIN);
	assert_true(ms < 50);
}

static void test_bad_requests(void **state)
{
	struct xr_nexthop nh;
	char msg[160];
	uint8_t a4[4] = { 10, 77, 0, 2 };

	(void)state;
	NEED_ROOT();
	assert_int_equal(resolve_in_a(999999, AF_INET, "10.77.0.2", 100, &nh,
				      msg, sizeof(msg), NULL), -ENODEV);
	/* Our own address. */
	assert_int_equal(resolve_in_a(E.a_if[0], AF_INET, "10.77.0.1", 100, &nh,
				      msg, sizeof(msg), NULL), -EADDRNOTAVAIL);
	print_message("own address: %s\n", msg);
	assert_int_equal(xr_nl_resolve(E.a_if[0], AF_UNSPEC, a4, 100, &nh, NULL, 0),
			 -EINVAL);
	/* Interface down. */
	assert_int_equal(sh(E.ns_a, "ip link set %s down", E.a_name[1]), 0);
	assert_int_equal(resolve_in_a(E.a_if[1], AF_INET, "10.66.0.2", 100, &nh,
				      msg, sizeof(msg), NULL), -ENETDOWN);
	assert_int_equal(sh(E.ns_a, "ip link set %s up", E.a_name[1]), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_link_info),
		cmocka_unit_test(test_direct_ipv4),
		cmocka_unit_test(test_direct_ipv6),
		cmocka_unit_test(test_gateway_ipv4),
		cmocka_unit_test(test_gateway_ipv6),
		cmocka_unit_test(test_interface_honoured),
		cmocka_unit_test(test_unreachable),
		cmocka_unit_test(test_bad_requests),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
