// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ofi_func: the xroce provider's FI_EP_MSG endpoints end to end, through
 * libfabric's public API only (plus include/xroce/fi_xroce.h for device
 * memory, the memory a peer can reach with any libxroce).
 *
 *   ofi_func server PORT          ofi_func client HOST PORT
 *
 * The client, in order (the server checks its side of each):
 *   0  connects to a port nobody listens on: FI_ETIMEDOUT on its EQ
 *      (run with FI_XROCE_CM_TIMEOUT_MS small);
 *   1  connects with CM data "reject me": FI_ECONNREFUSED with the data
 *      the server's fi_reject gave;
 *   2  connects with "hello": FI_CONNECTED with the server's CM data (the
 *      address, key and size of its device-memory buffer);
 *   A  fi_sendv of 3 entries into a receive of 3 differently cut entries;
 *   C  fi_write of 64 KiB into the server's buffer, then a message: the
 *      server finds the bytes there;
 *   D  fi_writedata: lands and consumes a posted receive (FI_RX_CQ_DATA):
 *      the server's completion has FI_REMOTE_CQ_DATA and the data;
 *   E  fi_read and fi_readv of the server's pattern (answered by its
 *      progress thread while it waits);
 *   F  fi_senddata; G  fi_inject of 64 and 4000 bytes (no completion);
 *   H  two messages the server waits for with fi_trywait + poll() on the
 *      CQ's file descriptor, and with fi_cq_sread;
 *   K  an RMA naming a key of memory libxroce cannot reach: -FI_EINVAL at
 *      once; a WRITE with a wrong key: an error completion (FI_EACCES),
 *      then FI_SHUTDOWN on both sides (the connection is in error);
 *   T  on a second connection, 1000 bytes into a 100-byte receive: xroce
 *      refuses the message at the receiver (it never lands), the send fails
 *      with FI_EREMOTEIO, and the receive stays posted until the
 *      connection ends (then FI_ECANCELED), as docs/OFI.md says.
 */
#include <poll.h>
#include <stdint.h>
#include <unistd.h>

#include "ofi_common.h"
#include "xroce/fi_xroce.h"

#define DEVLEN (1u << 20)
#define HOSTLEN (1u << 20)

struct rbuf {
	uint64_t addr, key;
	uint32_t len;
} __attribute__((packed));

struct side {
	struct fi_info *info;
	struct fid_fabric *fab;
	struct fid_domain *dom;
	struct fid_eq *eq;
	struct fid_pep *pep;
	struct fid_cq *txcq, *rxcq;
	struct fid_ep *ep;
	struct fid_mr *host_mr, *dev_mr;
	struct fi_xroce_mem_ops *mem;
	uint8_t *host, *dev;
	struct fi_context ctx[32];
};

static uint8_t pat(size_t i, int which)
{
	return (uint8_t)(i * 7 + (i >> 8) + (size_t)which * 31 + 1);
}

static int fill_check(const uint8_t *p, size_t len, int which, const char *what)
{
	size_t i;

	for (i = 0; i < len; i++)
		CHECK(p[i] == pat(i, which), "%s: byte %zu is %#x, expected %#x", what,
		      i, p[i], pat(i, which));
	return 0;
}

static void fill(uint8_t *p, size_t len, int which)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = pat(i, which);
}

static int open_domain(struct side *s, struct fi_info *info)
{
	static uint8_t host[HOSTLEN];
	struct fi_cq_attr ca = { .format = FI_CQ_FORMAT_DATA, .wait_obj = FI_WAIT_FD,
				 .size = 256 };

	EXPECT(fi_domain(s->fab, info, &s->dom, NULL), 0, "fi_domain");
	EXPECT(fi_open_ops(&s->dom->fid, FI_XROCE_MEM_OPS, 0, (void **)&s->mem, NULL),
	       0, "fi_open_ops(FI_XROCE_MEM_OPS)");
	s->dev = s->mem->alloc(s->dom, DEVLEN);
	s->host = host;
	CHECK(s->dev && s->host, "no memory");
	EXPECT(fi_mr_reg(s->dom, s->dev, DEVLEN, FI_SEND | FI_RECV | FI_READ |
			 FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0,
			 &s->dev_mr, NULL), 0, "fi_mr_reg(device memory)");
	EXPECT(fi_mr_reg(s->dom, s->host, HOSTLEN, FI_SEND | FI_RECV | FI_READ |
			 FI_WRITE, 0, 0, 0, &s->host_mr, NULL), 0, "fi_mr_reg(host)");
	EXPECT(fi_cq_open(s->dom, &ca, &s->txcq, NULL), 0, "fi_cq_open");
	EXPECT(fi_cq_open(s->dom, &ca, &s->rxcq, NULL), 0, "fi_cq_open");
	return 0;
}

static int open_ep(struct side *s, struct fi_info *info)
{
	EXPECT(fi_endpoint(s->dom, info, &s->ep, NULL), 0, "fi_endpoint");
	EXPECT(fi_ep_bind(s->ep, &s->eq->fid, 0), 0, "bind eq");
	EXPECT(fi_ep_bind(s->ep, &s->txcq->fid, FI_TRANSMIT), 0, "bind tx cq");
	EXPECT(fi_ep_bind(s->ep, &s->rxcq->fid, FI_RECV), 0, "bind rx cq");
	EXPECT(fi_enable(s->ep), 0, "fi_enable");
	return 0;
}

static int post_recv(struct side *s, size_t off, size_t len, int k)
{
	EXPECT(fi_recv(s->ep, s->host + off, len, fi_mr_desc(s->host_mr), 0,
		       &s->ctx[k]), 0, "fi_recv");
	return 0;
}

static const char *ev_name(uint32_t ev)
{
	switch (ev) {
	case FI_CONNREQ: return "FI_CONNREQ";
	case FI_CONNECTED: return "FI_CONNECTED";
	case FI_SHUTDOWN: return "FI_SHUTDOWN";
	case 0: return "error";
	default: return "other";
	}
}

static int wait_event(struct side *s, uint32_t want, fid_t fid, void *buf,
		      size_t len)
{
	/* Room for any CM event, so an unexpected one is named, not refused
	 * as too long for the caller's buffer. */
	uint8_t any[sizeof(struct fi_eq_cm_entry) + 64] = { 0 };
	struct fi_eq_err_entry err = { 0 };
	uint32_t ev = 0;

	if (eq_next(s->eq, &ev, any, sizeof(any), &err))
		return 1;
	CHECK(ev == want, "EQ event %s (err %s), expected %s", ev_name(ev),
	      ev ? "-" : fi_strerror(err.err), ev_name(want));
	CHECK(!fid || ((struct fi_eq_cm_entry *)any)->fid == fid, "event for another fid");
	memcpy(buf, any, len < sizeof(any) ? len : sizeof(any));
	return 0;
}

/* ---- server ------------------------------------------------------------ */
static int accept_next(struct side *s, const char *want_data, int first)
{
	uint8_t buf[sizeof(struct fi_eq_cm_entry) + 64];
	struct fi_eq_cm_entry *cm = (void *)buf;

	if (wait_event(s, FI_CONNREQ, &s->pep->fid, buf, sizeof(buf)))
		return 1;
	CHECK(!memcmp(cm->data, want_data, strlen(want_data)), "CM data");
	CHECK(cm->info->dest_addr, "FI_CONNREQ without the peer's address");
	if (first && open_domain(s, cm->info))
		return 1;
	if (open_ep(s, cm->info))
		return 1;
	fi_freeinfo(cm->info);
	return 0;
}

static int server_phases(struct side *s)
{
	struct fi_cq_data_entry e;
	int i, fd;
	struct pollfd p;

	/* A: 60 bytes into 30 + 20 + 10 */
	if (cq_ok(s->rxcq, &s->ctx[0], &e))
		return 1;
	CHECK(e.len == 60 && (e.flags & FI_RECV), "A: %zu bytes, flags %#lx", e.len,
	      (unsigned long)e.flags);
	CHECK(!memcmp(s->host, "AAAAAAAAAABBBBBBBBBBBBBBBBBBBBCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC", 60),
	      "A: data");
	/* C: the WRITE landed before the message that follows it */
	if (cq_ok(s->rxcq, &s->ctx[1], &e) || fill_check(s->dev, 65536, 3, "C"))
		return 1;
	/* D */
	if (cq_ok(s->rxcq, &s->ctx[2], &e))
		return 1;
	CHECK((e.flags & FI_REMOTE_CQ_DATA) && (e.flags & FI_REMOTE_WRITE) &&
	      e.data == 0xabcd, "D: flags %#lx data %#lx", (unsigned long)e.flags,
	      (unsigned long)e.data);
	if (fill_check(s->dev + 65536, 4096, 4, "D"))
		return 1;
	/* F, G */
	if (cq_ok(s->rxcq, &s->ctx[3], &e))
		return 1;
	CHECK((e.flags & FI_REMOTE_CQ_DATA) && e.data == 0x1234 && e.len == 100, "F");
	if (cq_ok(s->rxcq, &s->ctx[4], &e) || fill_check(s->host + 8192, 64, 5, "G64") ||
	    cq_ok(s->rxcq, &s->ctx[5], &e) || fill_check(s->host + 16384, 4000, 6, "G4000"))
		return 1;
	/* H: wait on the descriptor, then in fi_cq_sread */
	EXPECT(fi_control(&s->rxcq->fid, FI_GETWAIT, &fd), 0, "FI_GETWAIT");
	for (i = 0; i < 100; i++) {
		struct fid *f = &s->rxcq->fid;

		if (fi_trywait(s->fab, &f, 1) == -FI_EAGAIN)
			break;
		p = (struct pollfd){ .fd = fd, .events = POLLIN };
		CHECK(poll(&p, 1, WAIT_MS) == 1, "H: the CQ's descriptor never woke");
	}
	if (cq_ok(s->rxcq, &s->ctx[6], &e))
		return 1;
	CHECK(fi_cq_sread(s->rxcq, &e, 1, NULL, WAIT_MS) == 1 &&
	      e.op_context == &s->ctx[7], "H: fi_cq_sread");
	return 0;
}

static int server(const char *port)
{
	struct fi_eq_attr ea = { .wait_obj = FI_WAIT_FD };
	struct fi_info *hints = xr_hints();
	struct side s = { 0 };
	struct rbuf rb;
	struct fi_eq_cm_entry cm;
	struct iovec v[3];
	void *d[3];

	prog = "ofi_func server";
	CHECK(hints, "fi_allocinfo");
	EXPECT(fi_getinfo(FI_VERSION(1, 17), NULL, port, FI_SOURCE, hints, &s.info), 0,
	       "fi_getinfo");
	EXPECT(fi_fabric(s.info->fabric_attr, &s.fab, NULL), 0, "fi_fabric");
	EXPECT(fi_eq_open(s.fab, &ea, &s.eq, NULL), 0, "fi_eq_open");
	EXPECT(fi_passive_ep(s.fab, s.info, &s.pep, NULL), 0, "fi_passive_ep");
	EXPECT(fi_pep_bind(s.pep, &s.eq->fid, 0), 0, "fi_pep_bind");
	EXPECT(fi_listen(s.pep), 0, "fi_listen");
	printf("server: listening\n");
	fflush(stdout);
	/* 1: refuse with data */
	{
		uint8_t buf[sizeof(struct fi_eq_cm_entry) + 64];
		struct fi_eq_cm_entry *c = (void *)buf;

		if (wait_event(&s, FI_CONNREQ, &s.pep->fid, buf, sizeof(buf)))
			return 1;
		CHECK(!memcmp(c->data, "reject me", 9), "1: CM data");
		EXPECT(fi_reject(s.pep, c->info->handle, "no thanks", 9), 0, "fi_reject");
		EXPECT(fi_reject(s.pep, c->info->handle, "x", 1), -FI_EINVAL, "rejecting twice");
		fi_freeinfo(c->info);
	}
	/* 2: accept, with receives posted for A..H, in the client's order */
	if (accept_next(&s, "hello", 1))
		return 1;
	v[0] = (struct iovec){ s.host, 30 };
	v[1] = (struct iovec){ s.host + 30, 20 };
	v[2] = (struct iovec){ s.host + 50, 10 };
	d[0] = d[1] = d[2] = fi_mr_desc(s.host_mr);
	EXPECT(fi_recvv(s.ep, v, d, 3, 0, &s.ctx[0]), 0, "fi_recvv");
	if (post_recv(&s, 4096, 64, 1) || post_recv(&s, 4096 + 64, 64, 2) ||
	    post_recv(&s, 4096 + 128, 128, 3) || post_recv(&s, 8192, 64, 4) ||
	    post_recv(&s, 16384, 4096, 5) || post_recv(&s, 24576, 64, 6) ||
	    post_recv(&s, 24576 + 64, 64, 7))
		return 1;
	fill(s.dev + 131072, 131072, 7); /* E reads this */
	rb.addr = (uintptr_t)s.dev;
	rb.key = fi_mr_key(s.dev_mr);
	rb.len = DEVLEN;
	EXPECT(fi_accept(s.ep, &rb, sizeof(rb)), 0, "fi_accept");
	if (wait_event(&s, FI_CONNECTED, &s.ep->fid, &cm, sizeof(cm)) || server_phases(&s))
		return 1;
	printf("server: A C D F G H checked\n");
	fflush(stdout);
	/* K: the client's connection fails; ours is told */
	if (wait_event(&s, FI_SHUTDOWN, &s.ep->fid, &cm, sizeof(cm)))
		return 1;
	EXPECT(fi_close(&s.ep->fid), 0, "fi_close(ep)");
	/* T: a second connection, a receive too short */
	if (accept_next(&s, "again", 0) || post_recv(&s, 0, 100, 8))
		return 1;
	EXPECT(fi_accept(s.ep, NULL, 0), 0, "fi_accept");
	if (wait_event(&s, FI_CONNECTED, &s.ep->fid, &cm, sizeof(cm)) ||
	    wait_event(&s, FI_SHUTDOWN, &s.ep->fid, &cm, sizeof(cm)))
		return 1;
	{
		struct fi_cq_data_entry e;
		struct fi_cq_err_entry err;
		int is_err;

		if (cq_one(s.rxcq, &e, &err, &is_err))
			return 1;
		CHECK(is_err && err.err == FI_ECANCELED && err.op_context == &s.ctx[8],
		      "T: receive completed with %s, expected FI_ECANCELED",
		      is_err ? fi_strerror(err.err) : "success");
	}
	printf("server: K T checked\n");
	EXPECT(fi_close(&s.ep->fid), 0, "fi_close(ep)");
	EXPECT(fi_close(&s.pep->fid), 0, "fi_close(pep)");
	EXPECT(fi_close(&s.dev_mr->fid), 0, "fi_close(mr)");
	EXPECT(fi_close(&s.host_mr->fid), 0, "fi_close(mr)");
	EXPECT(s.mem->free(s.dom, s.dev), 0, "free device memory");
	EXPECT(fi_close(&s.txcq->fid), 0, "fi_close(cq)");
	EXPECT(fi_close(&s.rxcq->fid), 0, "fi_close(cq)");
	EXPECT(fi_close(&s.dom->fid), 0, "fi_close(domain)");
	EXPECT(fi_close(&s.eq->fid), 0, "fi_close(eq)");
	EXPECT(fi_close(&s.fab->fid), 0, "fi_close(fabric)");
	fi_freeinfo(s.info);
	fi_freeinfo(hints);
	printf("server: all phases passed\n");
	return 0;
}

/* ---- client ------------------------------------------------------------ */
static int connect_to(struct side *s, struct fi_info *info, const char *data,
		      uint32_t want, struct rbuf *rb)
{
	uint8_t buf[sizeof(struct fi_eq_cm_entry) + 64] = { 0 };
	struct fi_eq_err_entry err = { 0 };
	uint32_t ev = 0;

	if (open_ep(s, info))
		return 1;
	EXPECT(fi_connect(s->ep, info->dest_addr, data, strlen(data)), 0, "fi_connect");
	if (eq_next(s->eq, &ev, buf, sizeof(buf), &err))
		return 1;
	if (want == FI_CONNECTED) {
		CHECK(ev == FI_CONNECTED, "connect: event %u (%s)", ev,
		      ev ? "" : fi_strerror(err.err));
		if (rb)
			memcpy(rb, ((struct fi_eq_cm_entry *)buf)->data, sizeof(*rb));
		return 0;
	}
	CHECK(ev == 0 && err.err == (int)want && err.fid == &s->ep->fid,
	      "connect: event %u err %s, expected error %s", ev, fi_strerror(err.err),
	      fi_strerror((int)want));
	if (want == FI_ECONNREFUSED)
		CHECK(err.err_data_size == 9 && !memcmp(err.err_data, "no thanks", 9),
		      "reject data (%zu bytes)", err.err_data_size);
	EXPECT(fi_close(&s->ep->fid), 0, "fi_close(ep)");
	return 0;
}

static int wait_tx(struct side *s, int k)
{
	struct fi_cq_data_entry e;

	return cq_ok(s->txcq, &s->ctx[k], &e);
}

static int client_phases(struct side *s, const struct rbuf *rb)
{
	const char *a = "AAAAAAAAAA", *b = "BBBBBBBBBBBBBBBBBBBB";
	char c[31];
	struct iovec v[3] = { { (void *)a, 10 }, { (void *)b, 20 }, { c, 30 } };
	struct fi_msg_rma m;
	struct fi_rma_iov ri;
	void *d[3] = { NULL, NULL, NULL };

	memset(c, 'C', 30);
	/* A: unregistered entries (no descriptors): bounce buffer */
	EXPECT(fi_sendv(s->ep, v, d, 3, 0, &s->ctx[0]), 0, "fi_sendv");
	if (wait_tx(s, 0))
		return 1;
	/* C */
	fill(s->host, 65536, 3);
	EXPECT(fi_write(s->ep, s->host, 65536, fi_mr_desc(s->host_mr), 0, rb->addr,
			rb->key, &s->ctx[1]), 0, "fi_write");
	if (wait_tx(s, 1))
		return 1;
	EXPECT(fi_inject(s->ep, "written", 8, 0), 0, "fi_inject");
	/* D */
	fill(s->dev, 4096, 4);
	EXPECT(fi_writedata(s->ep, s->dev, 4096, fi_mr_desc(s->dev_mr), 0xabcd, 0,
			    rb->addr + 65536, rb->key, &s->ctx[2]), 0, "fi_writedata");
	if (wait_tx(s, 2))
		return 1;
	/* E */
	memset(s->host, 0, 131072);
	EXPECT(fi_read(s->ep, s->host, 65536, fi_mr_desc(s->host_mr), 0,
		       rb->addr + 131072, rb->key, &s->ctx[3]), 0, "fi_read");
	if (wait_tx(s, 3) || fill_check(s->host, 65536, 7, "E read"))
		return 1;
	v[0] = (struct iovec){ s->dev, 1000 };
	v[1] = (struct iovec){ s->host + 100000, 130072 };
	ri = (struct fi_rma_iov){ rb->addr + 131072, 131072, rb->key };
	m = (struct fi_msg_rma){ .msg_iov = v, .desc = d, .iov_count = 2,
				 .rma_iov = &ri, .rma_iov_count = 1, .context = &s->ctx[4] };
	EXPECT(fi_readmsg(s->ep, &m, FI_COMPLETION), 0, "fi_readmsg");
	if (wait_tx(s, 4) || fill_check(s->dev, 1000, 7, "E readv 1"))
		return 1;
	CHECK(s->host[100000] == pat(1000, 7) && s->host[100000 + 130071] == pat(131071, 7),
	      "E readv 2");
	/* F, G */
	EXPECT(fi_senddata(s->ep, s->host, 100, fi_mr_desc(s->host_mr), 0x1234, 0,
			   &s->ctx[5]), 0, "fi_senddata");
	if (wait_tx(s, 5))
		return 1;
	fill(s->host, 64, 5);
	EXPECT(fi_inject(s->ep, s->host, 64, 0), 0, "fi_inject 64");
	fill(s->host + 8192, 4000, 6);
	EXPECT(fi_inject(s->ep, s->host + 8192, 4000, 0), 0, "fi_inject 4000");
	EXPECT(fi_inject(s->ep, s->host, 4097, 0), -FI_EINVAL, "fi_inject over inject_size");
	/* H: after a pause, so the server is really asleep */
	usleep(300000);
	EXPECT(fi_send(s->ep, "h1", 3, NULL, 0, &s->ctx[6]), 0, "fi_send");
	usleep(300000);
	EXPECT(fi_send(s->ep, "h2", 3, NULL, 0, &s->ctx[7]), 0, "fi_send");
	if (wait_tx(s, 6) || wait_tx(s, 7))
		return 1;
	return 0;
}

static int client_bad_key(struct side *s, const struct rbuf *rb)
{
	struct fi_cq_data_entry e;
	struct fi_cq_err_entry err;
	struct fi_eq_cm_entry cm;
	int is_err;

	/* A key of host memory (not reachable with this libxroce, or not a
	 * key of the peer at all): refused before anything is sent. */
	if (fi_mr_key(s->host_mr) > UINT32_MAX)
		EXPECT(fi_read(s->ep, s->host, 8, NULL, 0, rb->addr, fi_mr_key(s->host_mr),
			       &s->ctx[8]), -FI_EINVAL, "fi_read with a host key");
	EXPECT(fi_write(s->ep, s->host, 8, NULL, 0, rb->addr, rb->key ^ 0x5a5a5a5a,
			&s->ctx[9]), 0, "fi_write with a wrong key");
	if (cq_one(s->txcq, &e, &err, &is_err))
		return 1;
	CHECK(is_err && err.err == FI_EACCES && err.op_context == &s->ctx[9],
	      "K: the WRITE completed with %s, expected FI_EACCES",
	      is_err ? fi_strerror(err.err) : "success");
	if (wait_event(s, FI_SHUTDOWN, &s->ep->fid, &cm, sizeof(cm)))
		return 1;
	EXPECT(fi_send(s->ep, "x", 1, NULL, 0, NULL), -FI_ECONNRESET, "fi_send after the error");
	EXPECT(fi_close(&s->ep->fid), 0, "fi_close(ep)");
	return 0;
}

static int client_trunc(struct side *s, struct fi_info *info)
{
	struct fi_cq_data_entry e;
	struct fi_cq_err_entry err;
	int is_err;

	if (connect_to(s, info, "again", FI_CONNECTED, NULL))
		return 1;
	EXPECT(fi_send(s->ep, s->host, 1000, fi_mr_desc(s->host_mr), 0, &s->ctx[10]),
	       0, "fi_send 1000");
	if (cq_one(s->txcq, &e, &err, &is_err))
		return 1;
	CHECK(is_err && err.err == FI_EREMOTEIO && err.op_context == &s->ctx[10],
	      "T: the send completed with %s, expected FI_EREMOTEIO",
	      is_err ? fi_strerror(err.err) : "success");
	EXPECT(fi_close(&s->ep->fid), 0, "fi_close(ep)");
	return 0;
}

static int client(const char *host, const char *port)
{
	struct fi_eq_attr ea = { .wait_obj = FI_WAIT_FD };
	struct fi_info *hints = xr_hints(), *info, *bad;
	struct side s = { 0 };
	struct rbuf rb;
	char other[16];

	prog = "ofi_func client";
	CHECK(hints, "fi_allocinfo");
	EXPECT(fi_getinfo(FI_VERSION(1, 17), host, port, 0, hints, &info), 0, "fi_getinfo");
	CHECK(info->dest_addr, "no destination address");
	snprintf(other, sizeof(other), "%d", atoi(port) + 1);
	EXPECT(fi_getinfo(FI_VERSION(1, 17), host, other, 0, hints, &bad), 0, "fi_getinfo");
	EXPECT(fi_fabric(info->fabric_attr, &s.fab, NULL), 0, "fi_fabric");
	EXPECT(fi_eq_open(s.fab, &ea, &s.eq, NULL), 0, "fi_eq_open");
	if (open_domain(&s, info))
		return 1;
	if (connect_to(&s, bad, "nobody", FI_ETIMEDOUT, NULL) ||
	    connect_to(&s, info, "reject me", FI_ECONNREFUSED, NULL) ||
	    connect_to(&s, info, "hello", FI_CONNECTED, &rb))
		return 1;
	printf("client: 0 1 2 connection set-up checked\n");
	CHECK(rb.len == DEVLEN, "the server's CM data");
	if (client_phases(&s, &rb))
		return 1;
	printf("client: A C E F G H done\n");
	if (client_bad_key(&s, &rb) || client_trunc(&s, info))
		return 1;
	EXPECT(fi_close(&s.dev_mr->fid), 0, "fi_close(mr)");
	EXPECT(fi_close(&s.host_mr->fid), 0, "fi_close(mr)");
	EXPECT(s.mem->free(s.dom, s.dev), 0, "free device memory");
	EXPECT(s.mem->free(s.dom, s.host), -FI_EINVAL, "free of other memory");
	EXPECT(fi_close(&s.txcq->fid), 0, "fi_close(cq)");
	EXPECT(fi_close(&s.rxcq->fid), 0, "fi_close(cq)");
	EXPECT(fi_close(&s.dom->fid), 0, "fi_close(domain)");
	EXPECT(fi_close(&s.eq->fid), 0, "fi_close(eq)");
	EXPECT(fi_close(&s.fab->fid), 0, "fi_close(fabric)");
	fi_freeinfo(info);
	fi_freeinfo(bad);
	fi_freeinfo(hints);
	printf("client: all phases passed\n");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "server"))
		return server(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "client"))
		return client(argv[2], argv[3]);
	fprintf(stderr, "usage: ofi_func server PORT | client HOST PORT\n");
	return 2;
}
