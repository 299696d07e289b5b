/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Entry points for tests and fuzzers only (tests/fuzz/): a device that
 * lives without a network, and the control-message input path.  Not part
 * of the public API and not installed.
 *
 * A detached device has everything a device opened on an interface has,
 * except the interface: planes with made-up addresses and MACs, its own
 * BPF maps of the layouts in abi.h that no XDP program uses (so creating
 * QPs, registering regions and posting receives and READs work through the
 * public API, and their map updates really happen), an event ring that no
 * program writes, telemetry, the heap.  The control socket is fd -1 and
 * nothing is bound: sends fail with EBADF, receives find nothing.
 *
 * Each plane tries to open its transmit socket exactly as a real device
 * does (xr_xsk_create on ifindex 0, the device's memory as UMEM).  With the
 * library's AF_XDP code that fails (-ENODEV) and so does the open: a
 * detached device needs a transmit engine linked in its place (the fuzzers
 * link tests/fuzz/xsk_loop.c, which hands frames to the test).
 *
 * Needs CAP_BPF (the maps).  Close it with xroce_close_device.
 */
#ifndef XR_USER_TESTHOOKS_H
#define XR_USER_TESTHOOKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>

#include "xroce/xroce.h"
#include "contract/wire.h"

struct xr_test_dev_attr {
	int nplanes;             /* 1..XROCE_MAX_PLANES */
	size_t mem_size;         /* heap bytes (rounded to 4 KiB); 0 = 4 MiB */
	uint32_t max_conns;      /* connection ids 1..max_conns-1; 0 = 64 */
	uint16_t data_port;      /* 0 = XR_DEFAULT_UDP_PORT */
	int plane_mtu;           /* 0 = 1500 */
	xroce_log_fn log_fn;     /* NULL = stderr at log_level */
	void *log_arg;
	enum xroce_log_level log_level;
};

/* Plane i has IPv4 10.99.i.1, IPv6 fd99:i::1 and MAC 02:00:00:00:99:i. */
int xr_test_device_open(const struct xr_test_dev_attr *attr,
			struct xroce_device **out);

/* Feed one datagram to the control-message handling, as if it had been
 * received on the control socket from `from` (any length, any content).
 * Same checks and code as the socket path (xr_ctrl_handle_msg). */
int xr_test_ctrl_input(struct xroce_device *dev, const void *buf, size_t len,
		       const struct sockaddr_in6 *from);

/* The same while a connect to want_to waits for the answer carrying
 * want_nonce: returns 1 (and fills *answer) if this datagram is it. */
int xr_test_ctrl_answer(struct xroce_device *dev, const void *buf, size_t len,
			const struct sockaddr_in6 *from, uint64_t want_nonce,
			const struct sockaddr_in6 *want_to,
			struct xr_ctrl_msg *answer);

/* Swap the device's BPF map fds with *other.  With *other filled by
 * xr_test_maps_none the device has no maps (every map call fails with
 * EBADF: exercises the library's handling of failing map operations on
 * live objects); swapping again gives them back. */
struct xr_maps;
void xr_test_maps_none(struct xr_maps *m);
void xr_test_device_swap_maps(struct xroce_device *dev, struct xr_maps *other);

#endif /* XR_USER_TESTHOOKS_H */
