/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The world a fuzzed libxroce runs in: everything the library asks of the
 * operating system, simulated so that one input always does the same thing
 * and nothing leaves the process.  Linked with -Wl,--wrap=SYMBOL (build.sh)
 * so the library's own calls reach these instead of the real ones:
 *
 *   xr_now_ns            a virtual clock (sim.now), advanced by the harness
 *                        and by waits on the control socket
 *   xr_random64          a seeded PRNG (connection ids, entropy, nonces)
 *   xr_nl_resolve        a route to anything: next-hop MAC, sim.route_mtu;
 *                        fails with sim.route_err when that is set
 *   ring_buffer__new / __consume / __free
 *                        the XDP event ring: sim_evt_push() queues records,
 *                        the library's own callback (progress.c on_event)
 *                        receives them when the library consumes the ring
 *   recvfrom / sendto / sendmsg / poll on fd -1 (the detached device's
 *                        control socket): datagrams queued with
 *                        sim_ctrl_push() are received, sent ones (sendmsg:
 *                        one iovec, the control message ignored) are
 *                        recorded in sim.sent
 *
 * Frames the library transmits come from xsk_loop.c (the AF_XDP socket's
 * replacement), which calls sim.on_tx for each.
 */
#ifndef XR_FUZZ_SIM_H
#define XR_FUZZ_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <netinet/in.h>
#include <sys/socket.h>

struct xr_xsk;

#define SIM_MAX_EVTS 512
#define SIM_MAX_CTRL 64
#define SIM_MAX_SENT 256
#define SIM_DGRAM_MAX 512

struct sim_dgram {
	struct sockaddr_in6 addr;
	socklen_t alen;
	size_t len;
	uint8_t buf[SIM_DGRAM_MAX];
};

struct sim_evt {
	size_t len;
	uint8_t *data;          /* malloc'd exactly len bytes: ASan sees overreads */
};

struct sim {
	uint64_t now;
	uint64_t rng;
	int route_mtu;
	int route_err;          /* negative errno, or 0 */
	/* event ring */
	int (*evt_cb)(void *ctx, void *data, size_t len);
	void *evt_ctx;
	struct sim_evt evts[SIM_MAX_EVTS];
	uint32_t nevts;
	uint64_t evts_delivered;
	/* Called with each record just before the library's callback. */
	void (*pre_evt)(void *arg, const void *data, size_t len);
	void *pre_evt_arg;
	/* control socket */
	struct sim_dgram rx[SIM_MAX_CTRL];
	uint32_t rx_head, rx_tail;
	struct sim_dgram sent[SIM_MAX_SENT];
	uint32_t nsent;
	uint64_t sent_total;
	/* frames handed to the transmit engine */
	void (*on_tx)(void *arg, const struct xr_xsk *xsk, const uint8_t *frame,
		      uint32_t len);
	void *on_tx_arg;
};

extern struct sim sim;

/* Fresh world: clock at now, PRNG seeded, queues empty. */
void sim_reset(uint64_t now, uint64_t seed);
uint64_t sim_rand(void);
/* Queue an event record for the library's next ring consumption; false
 * if the queue is full. */
bool sim_evt_push(const void *data, size_t len);
void sim_evt_clear(void);
/* Queue a datagram on the control socket. */
bool sim_ctrl_push(const void *buf, size_t len, const struct sockaddr_in6 *from,
		   socklen_t alen);
uint32_t sim_ctrl_queued(void);

/* A failed check: print and abort (the fuzzer records the input). */
#define SIM_CHECK(cond, ...)                                                  \
	do {                                                                  \
		if (!(cond)) {                                                \
			fprintf(stderr, "INVARIANT %s:%d: %s: ", __FILE__,   \
				__LINE__, #cond);                             \
			fprintf(stderr, __VA_ARGS__);                         \
			fputc('\n', stderr);                                  \
			abort();                                              \
		}                                                             \
	} while (0)

#endif /* XR_FUZZ_SIM_H */
