/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What both fuzzers share: the detached device they drive (one per
 * process), a reader of the fuzz input, the peer's side of connection
 * set-up, a log of every frame the library transmitted, a ledger of work
 * requests and receives with the checks on their completions, and the
 * invariants of a queue pair.
 */
#ifndef XR_FUZZ_HARNESS_H
#define XR_FUZZ_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "complete.h"
#include "cq.h"
#include "ctrl.h"
#include "device.h"
#include "engine.h"
#include "events.h"
#include "mr.h"
#include "plane.h"
#include "progress.h"
#include "qp.h"
#include "sender.h"
#include "testhooks.h"
#include "sim.h"

/* ---- the fuzz input -------------------------------------------------- */
struct rd {
	const uint8_t *p;
	size_t n;
};

static inline bool rd_more(const struct rd *r)
{
	return r->n > 0;
}

static inline uint8_t rd_u8(struct rd *r)
{
	if (!r->n)
		return 0;
	r->n--;
	return *r->p++;
}

static inline uint16_t rd_u16(struct rd *r)
{
	return (uint16_t)(rd_u8(r) | rd_u8(r) << 8);
}

static inline uint32_t rd_u32(struct rd *r)
{
	return (uint32_t)rd_u16(r) | (uint32_t)rd_u16(r) << 16;
}

static inline uint64_t rd_u64(struct rd *r)
{
	return (uint64_t)rd_u32(r) | (uint64_t)rd_u32(r) << 32;
}

/* Copy up to n bytes (zeros once the input is exhausted). */
void rd_bytes(struct rd *r, void *out, size_t n);

/* ---- the device -------------------------------------------------------- */
#define H_PLANES 2
#define H_LOCAL_BYTES (1u << 20)   /* source of sends, target of READs */
#define H_RREAD_BYTES (256u << 10) /* what peers may READ */
#define H_RECV_BYTES (64u << 10)   /* one posted receive */
#define H_CQE 8192

struct h_dev {
	struct xroce_device *dev;
	struct xroce_pd *pd;
	struct xroce_cq *scq, *rcq;
	struct xroce_cq *scq_small, *rcq_small; /* 16 entries: overflow */
	struct xroce_mr *local, *rread;
	uint8_t *local_buf, *rread_buf;
	struct xr_maps no_maps;            /* swapped in while "detached" */
	struct xr_plane planes[XROCE_MAX_PLANES]; /* as opened: all frames free */
	bool maps_detached;
};

extern struct h_dev H;

/* Once per process.  Aborts on failure (the harness cannot run). */
void h_init(void);
void h_maps_detach(bool detach);
/* A fresh input: the device as it was opened (planes with every frame
 * free and nothing cached, no queued or answered connection request). */
void h_dev_reset(void);
/* Delete every entry of the device's hash maps; returns how many there
 * were (0 = nothing left behind by the input). */
unsigned h_maps_wipe(void);

/* ---- the peer ---------------------------------------------------------- */
#define H_PEER_CONN 0x00c0ffeeu
#define H_PEER_TOKEN 0x5ec2e7706b3e11a1ull
#define H_PEER_PORT 4794

void h_peer_addr(struct sockaddr_in6 *sa, int host);
/* A CONNECT as a peer at h_peer_addr(host) would send it. */
/* The cookie the device expects from `from` for m (a CONNECT). */
void h_cookie(struct xr_ctrl_msg *m, const struct sockaddr_in6 *from);
void h_connect_msg(struct xr_ctrl_msg *m, uint64_t nonce, uint32_t init_psn,
		   uint32_t init_csn, int nplanes);
/* Accept qp (INIT) from that peer through the control socket, as
 * xroce_accept does for a real one.  Returns xroce_accept's result. */
int h_accept_from_peer(struct xroce_qp *qp, uint64_t nonce, uint32_t peer_psn,
		       uint32_t peer_csn);

/* ---- transmitted frames ------------------------------------------------ */
#define H_TXLOG 65536 /* PSNs remembered per path */

struct h_tx {
	uint32_t csn, msg_id, msg_off, ts;
	uint8_t opcode, valid;
};

struct h_txlog {
	struct xroce_qp *qp;               /* frames of this QP are logged */
	uint32_t init_psn;
	uint32_t sent_next[XR_MAX_PATHS];  /* PSN after the highest sent */
	uint32_t claim_next[XR_MAX_PATHS]; /* PSNs before it were claimed */
	bool overflow;                     /* too many PSNs: claims unknown */
	struct h_tx *tx[XR_MAX_PATHS];     /* H_TXLOG each */
	uint32_t used[XR_MAX_PATHS];       /* entries [0, used) may be set */
	uint64_t frames, data_frames, probes, retx_frames;
	uint32_t probe_seq[XR_MAX_PATHS];  /* last probe seq sent per path */
};

extern struct h_txlog TX;

void h_txlog_reset(struct xroce_qp *qp);
/* Checks every frame (size, headers) and logs the QP's data packets. */
void h_on_tx(void *arg, const struct xr_xsk *xsk, const uint8_t *f, uint32_t len);
const struct h_tx *h_tx_at(int path, uint32_t psn);

/* ---- work requests and receives ------------------------------------- */
#define H_MAX_WR 512
#define H_MAX_RWR 512
#define H_STREAMS 4

enum { HW_WRITE, HW_WRITE_IMM, HW_SEND, HW_SEND_IMM, HW_READ, HW_NKIND };

struct h_wr {
	uint64_t wr_id;
	uint8_t kind;                      /* HW_* */
	uint8_t signaled;
	uint16_t stream;
	uint32_t len;
	uint32_t msg_id, npkts, read_id;
	uint64_t seq;                      /* posting order */
	bool resp_seen;                    /* READ: its answer was reported */
	bool sent;                         /* a packet of it was transmitted */
	bool nak_fatal;                    /* a refusal reached it in flight */
	int ncomp;
	uint8_t claimed[64];               /* packets acknowledged (bits) */
};

struct h_rwr {
	uint64_t wr_id;
	uint16_t stream;
	int ncomp;
};

struct h_ledger {
	struct xroce_qp *qp;               /* NULL once destroyed */
	struct xroce_cq *scq, *rcq;        /* the QP's */
	bool cq_small;                     /* completions may be dropped at
					    * destroy (CQ full): at most once */
	uint32_t conn_id, seg_max;         /* of the QP, kept past its end */
	unsigned int qp_flags;
	bool check_claims;                 /* ACK claims are tracked */
	struct h_wr wr[H_MAX_WR];
	uint32_t nwr;
	struct h_rwr rwr[H_MAX_RWR];
	uint32_t nrwr;
	uint64_t last_seq[XROCE_MAX_STREAMS]; /* last completion's seq + 1 */
	uint32_t rnext[H_STREAMS];         /* next receive to complete */
	uint32_t recv_evts[H_STREAMS];     /* receive-consuming RECV events */
	uint32_t recv_done[H_STREAMS];     /* successful receive completions */
	uint64_t ok, errors, flushed, rok;
};

extern struct h_ledger L;

void h_ledger_reset(struct xroce_qp *qp, bool check_claims);
/* The QP is about to be destroyed: keep what the checks need. */
void h_ledger_qp_gone(void);
/* Post one work request of kind, len bytes (from the local region, or
 * into it for a READ) in nsge pieces (1..XROCE_MAX_SGE) or inline, on
 * stream; 0 or xroce_post_send's error. */
int h_post(int kind, uint32_t len, uint16_t stream, bool signaled, uint32_t off,
	   int nsge, bool inl);
int h_post_recv(uint16_t stream);
/* Look at an event record just before the library gets it: claims of
 * acknowledgement, READ answers, refusals. */
void h_pre_event(void *arg, const void *data, size_t len);
/* Look at a control datagram just before the library reads it: an
 * authentic CLOSE's claim of what arrived (fuzz_ctrl). */
void h_pre_ctrl(const void *buf, size_t len, const struct sockaddr_in6 *from,
		socklen_t alen);
/* Poll both CQs dry and check every completion. */
void h_poll_check(void);
/* After the QP is gone: every request and receive completed as it must. */
void h_ledger_final(void);

/* ---- invariants --------------------------------------------------------- */
void h_check_qp(const struct xroce_qp *qp);
/* Frames: none lost by the library (after its QPs are gone and the
 * engine has completed everything). */
void h_check_frames(void);

#endif /* XR_FUZZ_HARNESS_H */
