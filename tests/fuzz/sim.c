// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The simulated operating system of the fuzzers: see sim.h. */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "nlroute.h"
#include "sim.h"

struct sim sim;

/* What the harness's ring_buffer__new hands out: never dereferenced. */
static int sim_rb_token;

void sim_evt_clear(void)
{
	uint32_t i;

	for (i = 0; i < sim.nevts; i++)
		free(sim.evts[i].data);
	sim.nevts = 0;
}

void sim_reset(uint64_t now, uint64_t seed)
{
	sim_evt_clear();
	sim.now = now;
	sim.rng = seed;
	sim.route_mtu = 1500;
	sim.route_err = 0;
	sim.rx_head = sim.rx_tail = 0;
	sim.nsent = 0;
	sim.sent_total = 0;
	sim.evts_delivered = 0;
}

/* splitmix64 */
uint64_t sim_rand(void)
{
	uint64_t z = (sim.rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

bool sim_evt_push(const void *data, size_t len)
{
	uint8_t *p;

	if (sim.nevts == SIM_MAX_EVTS)
		return false;
	p = malloc(len ? len : 1);
	if (!p)
		abort();
	memcpy(p, data, len);
	sim.evts[sim.nevts].data = p;
	sim.evts[sim.nevts].len = len;
	sim.nevts++;
	return true;
}

bool sim_ctrl_push(const void *buf, size_t len, const struct sockaddr_in6 *from,
		   socklen_t alen)
{
	struct sim_dgram *d;

	if (sim.rx_tail - sim.rx_head == SIM_MAX_CTRL || len > SIM_DGRAM_MAX)
		return false;
	d = &sim.rx[sim.rx_tail++ % SIM_MAX_CTRL];
	memcpy(d->buf, buf, len);
	d->len = len;
	d->addr = *from;
	d->alen = alen;
	return true;
}

uint32_t sim_ctrl_queued(void)
{
	return sim.rx_tail - sim.rx_head;
}

/* ---- the library's clock, randomness and routes --------------------------- */
uint64_t __wrap_xr_now_ns(void);
uint64_t __wrap_xr_now_ns(void)
{
	return sim.now;
}

uint64_t __wrap_xr_random64(void);
uint64_t __wrap_xr_random64(void)
{
	return sim_rand();
}

int __wrap_xr_nl_resolve(int ifindex, int family, const void *dst_addr,
			 int timeout_ms, struct xr_nexthop *out, char *msg,
			 size_t msglen);
int __wrap_xr_nl_resolve(int ifindex, int family, const void *dst_addr,
			 int timeout_ms, struct xr_nexthop *out, char *msg,
			 size_t msglen)
{
	size_t alen = family == AF_INET ? 4 : 16;

	(void)timeout_ms;
	if (sim.route_err) {
		if (msg && msglen)
			snprintf(msg, msglen, "simulated route failure");
		return sim.route_err;
	}
	memset(out, 0, sizeof(*out));
	out->ifindex = ifindex;
	out->family = family;
	memcpy(out->dst_addr, dst_addr, alen);
	memcpy(out->gw_addr, dst_addr, alen);
	out->gw_family = family;
	out->dst_mac[0] = 0x02;
	out->dst_mac[4] = 0x88;
	out->dst_mac[5] = (uint8_t)ifindex;
	out->mtu = sim.route_mtu;
	return 0;
}

/* ---- the XDP event ring ------------------------------------------------- */
struct ring_buffer *__wrap_ring_buffer__new(int map_fd, ring_buffer_sample_fn cb,
					    void *ctx,
					    const struct ring_buffer_opts *opts);
struct ring_buffer *__wrap_ring_buffer__new(int map_fd, ring_buffer_sample_fn cb,
					    void *ctx,
					    const struct ring_buffer_opts *opts)
{
	(void)map_fd;
	(void)opts;
	sim.evt_cb = cb;
	sim.evt_ctx = ctx;
	return (struct ring_buffer *)&sim_rb_token;
}

int __wrap_ring_buffer__consume(struct ring_buffer *rb);
int __wrap_ring_buffer__consume(struct ring_buffer *rb)
{
	uint32_t i, n;

	SIM_CHECK(rb == (struct ring_buffer *)&sim_rb_token, "unknown ring %p",
		  (void *)rb);
	/* Records queued while the callback runs wait for the next call, as
	 * they would in a real ring consumed up to its producer position. */
	n = sim.nevts;
	for (i = 0; i < n; i++) {
		if (sim.pre_evt)
			sim.pre_evt(sim.pre_evt_arg, sim.evts[i].data, sim.evts[i].len);
		sim.evt_cb(sim.evt_ctx, sim.evts[i].data, sim.evts[i].len);
		sim.evts_delivered++;
	}
	for (i = 0; i < n; i++)
		free(sim.evts[i].data);
	memmove(sim.evts, sim.evts + n, (sim.nevts - n) * sizeof(sim.evts[0]));
	sim.nevts -= n;
	return (int)n;
}

void __wrap_ring_buffer__free(struct ring_buffer *rb);
void __wrap_ring_buffer__free(struct ring_buffer *rb)
{
	(void)rb;
	sim.evt_cb = NULL;
}

/* ---- the control socket (fd -1 on a detached device) -------------------- */
ssize_t __real_recvfrom(int fd, void *buf, size_t len, int flags,
			struct sockaddr *from, socklen_t *flen);
ssize_t __wrap_recvfrom(int fd, void *buf, size_t len, int flags,
			struct sockaddr *from, socklen_t *flen);
ssize_t __wrap_recvfrom(int fd, void *buf, size_t len, int flags,
			struct sockaddr *from, socklen_t *flen)
{
	struct sim_dgram *d;
	size_t n;

	if (fd != -1)
		return __real_recvfrom(fd, buf, len, flags, from, flen);
	if (sim.rx_head == sim.rx_tail) {
		errno = EAGAIN;
		return -1;
	}
	d = &sim.rx[sim.rx_head++ % SIM_MAX_CTRL];
	n = d->len < len ? d->len : len; /* a UDP socket truncates */
	memcpy(buf, d->buf, n);
	if (from && flen) {
		socklen_t c = d->alen < *flen ? d->alen : *flen;

		memcpy(from, &d->addr, c);
		*flen = d->alen;
	}
	return (ssize_t)n;
}

ssize_t __real_sendto(int fd, const void *buf, size_t len, int flags,
		      const struct sockaddr *to, socklen_t tlen);
ssize_t __wrap_sendto(int fd, const void *buf, size_t len, int flags,
		      const struct sockaddr *to, socklen_t tlen);
ssize_t __wrap_sendto(int fd, const void *buf, size_t len, int flags,
		      const struct sockaddr *to, socklen_t tlen)
{
	struct sim_dgram *d;

	if (fd != -1)
		return __real_sendto(fd, buf, len, flags, to, tlen);
	SIM_CHECK(len <= SIM_DGRAM_MAX, "control datagram of %zu bytes", len);
	SIM_CHECK(to && tlen == sizeof(struct sockaddr_in6),
		  "control datagram to an address of %u bytes", (unsigned)tlen);
	sim.sent_total++;
	if (sim.nsent == SIM_MAX_SENT)
		return (ssize_t)len; /* only the first ones are kept */
	d = &sim.sent[sim.nsent++];
	memcpy(d->buf, buf, len);
	d->len = len;
	memcpy(&d->addr, to, sizeof(d->addr));
	d->alen = tlen;
	return (ssize_t)len;
}

ssize_t __real_sendmsg(int fd, const struct msghdr *msg, int flags);
ssize_t __wrap_sendmsg(int fd, const struct msghdr *msg, int flags);
ssize_t __wrap_sendmsg(int fd, const struct msghdr *msg, int flags)
{
	if (fd != -1)
		return __real_sendmsg(fd, msg, flags);
	SIM_CHECK(msg->msg_iovlen == 1, "sendmsg of %zu pieces", msg->msg_iovlen);
	return __wrap_sendto(fd, msg->msg_iov[0].iov_base, msg->msg_iov[0].iov_len,
			     flags, msg->msg_name, msg->msg_namelen);
}

int __real_poll(struct pollfd *fds, nfds_t n, int timeout);
int __wrap_poll(struct pollfd *fds, nfds_t n, int timeout);
int __wrap_poll(struct pollfd *fds, nfds_t n, int timeout)
{
	if (n != 1 || fds[0].fd != -1)
		return __real_poll(fds, n, timeout);
	if (sim.rx_head != sim.rx_tail) {
		fds[0].revents = POLLIN;
		return 1;
	}
	/* Nothing will come: the wait passes in virtual time. */
	fds[0].revents = 0;
	if (timeout > 0)
		sim.now += (uint64_t)timeout * 1000000ull;
	return 0;
}
