/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The protocol of `xroce send` -> `xroce recv`, all on one xroce
 * connection:
 *
 *   CONNECT private data  struct xf_hello: total length, seed, file?, and
 *                         the sender's credit MR
 *   ACCEPT private data   struct xf_welcome: the receiver's buffer
 *                         (address, rkey, half size)
 *
 * The receiver's buffer has two halves and a trailer.  Chunk k (one half's
 * worth) is written into half k%2 as WRITEs, the last one
 * WRITE_WITH_IMM(CHUNK|k): its completion at the receiver means the whole
 * chunk has landed (xroce delivers receive completions in message order).
 * The receiver checks it and returns the half with a zero-length
 * WRITE_WITH_IMM(CREDIT|k) into the sender's credit MR.  At the end the
 * sender writes struct xf_trailer {length, hash} to the trailer with
 * WRITE_WITH_IMM(DONE); the receiver answers RESULT|ok.
 */
#ifndef XR_LOADER_XFER_PROTO_H
#define XR_LOADER_XFER_PROTO_H

#include <stdint.h>

#define XF_MAGIC 0x58525846u /* "XRXF" */

/* Immediate data: a type in the top 4 bits, an argument below. */
#define XF_CHUNK (1u << 28)
#define XF_CREDIT (2u << 28)
#define XF_DONE (3u << 28)
#define XF_RESULT (4u << 28)
#define XF_TYPE(imm) ((imm) & 0xf0000000u)
#define XF_ARG(imm) ((imm) & 0x0fffffffu)

/* Bytes after the receiver's two halves that hold struct xf_trailer. */
#define XF_TRAILER 64

/* Zero-length receives posted for the peer's WRITE_WITH_IMMs (one per
 * message expected), kept topped up. */
#define XF_RECVS 64

struct xf_hello {            /* sender -> receiver, CONNECT private data */
	uint32_t magic;
	uint32_t flags;          /* XF_F_FILE */
	uint64_t total;
	uint64_t seed;
	uint64_t credit_addr;
	uint32_t credit_rkey;
	uint32_t rsvd;
};
#define XF_F_FILE 1

struct xf_welcome {          /* receiver -> sender, ACCEPT private data */
	uint32_t magic;
	uint32_t rkey;
	uint64_t addr;
	uint64_t half;
};

struct xf_trailer {
	uint64_t total;
	uint64_t hash;
};

#endif /* XR_LOADER_XFER_PROTO_H */
