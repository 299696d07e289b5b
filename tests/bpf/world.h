/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The world the runners of tests/bpf (bpf_xdp_table, bpf_xdp_fuzz,
 * bpf_txbuild) run the XDP program in, set up as libxroce sets it up, so
 * that each runner only says what it puts there:
 *   - the program: the built-in object (xroce.skel.h) or another build of
 *     it from a file, loaded, with the fds of its maps by name;
 *   - domains: a memory map (mmapable array of 4 KiB pages, also an inner
 *     map of xr_mem), mmapped and filled with a pattern, with a shadow copy
 *     the runner updates with what the program may write; an event ring
 *     (xr_evq) read through libbpf's ring buffer; a record in xr_domains;
 *   - memory regions, connections and their receive state (every path at
 *     one PSN, the CSN window at one CSN, message slots empty);
 *   - the counters, summed over CPUs;
 *   - a private network namespace (liveness checks look up sockets in the
 *     caller's namespace; it dies with the process) and control sockets
 *     bound as the library binds its own.
 */
#ifndef XR_TEST_WORLD_H
#define XR_TEST_WORLD_H

#include <stddef.h>
#include <stdint.h>
#include <bpf/libbpf.h>
#include "contract/abi.h"

struct xroce;

struct xw {
	struct xroce *skel;       /* the built-in object, or NULL */
	struct bpf_object *obj;   /* the loaded object */
	int prog_fd;              /* xroce_xdp */
	int ncpu;
	/* map fds, by the names of include/contract/ */
	int cfg, domains, mem, evq, mrs, conns, rx, msgs, stats, rq, reads, txq;
	int ifs;                  /* -1: a build without xr_ifs */
	int evb;                  /* xr_evb */
	unsigned long verified;   /* "processed N insns" (xw_load with a log) */
	double load_s;            /* how long loading took */
};

/* Load the program: obj_path NULL for the built-in object.  With log set,
 * the verifier's log is read for its instruction count (built-in only). */
int xw_load(struct xw *w, const char *obj_path, int log);
void xw_unload(struct xw *w);

int xw_set_cfg(const struct xw *w, uint16_t flags, uint32_t capacity);
/* Every counter of xr_stats summed over the CPUs. */
int xw_stats(const struct xw *w, uint64_t out[XR_STAT_MAX]);

struct xw_dom {
	uint32_t id;
	int mem_fd, evq_fd;       /* -1: none */
	uint8_t *mem;             /* mmapped memory */
	uint8_t *shadow;          /* what it must hold */
	size_t mem_len;
	struct ring_buffer *rb;
};

typedef uint8_t (*xw_pattern_fn)(size_t i, unsigned dom);

/* Domain id's memory: pages pages filled with pattern (and its shadow),
 * in xr_mem. */
int xw_dom_mem(const struct xw *w, struct xw_dom *d, uint32_t id,
	       uint32_t pages, xw_pattern_fn pattern);
/* Domain id's event ring (XR_EVQ_BYTES) in xr_evq, read with on_event. */
int xw_dom_evq(const struct xw *w, struct xw_dom *d, uint32_t id,
	       ring_buffer_sample_fn on_event, void *ctx);
int xw_dom_register(const struct xw *w, uint32_t id,
		    const struct xr_domain *rec);
/* Free what xw_dom_mem / xw_dom_evq made; with unlink, also remove the
 * domain's entries from xr_mem, xr_evq and xr_domains. */
void xw_dom_free(const struct xw *w, struct xw_dom *d, int unlink);

int xw_mr_add(const struct xw *w, uint32_t key, const struct xr_mr *mr);
int xw_conn_add(const struct xw *w, uint32_t id, const struct xr_conn *c);
/* Connection id's receive state: every path expecting psn, the CSN window
 * at csn, its message slots empty. */
int xw_rx_reset(const struct xw *w, uint32_t id, uint32_t psn, uint32_t csn);

/* How many of len bytes differ; *first the first that does. */
size_t xw_mem_diff(const uint8_t *a, const uint8_t *b, size_t len,
		   size_t *first);

/* Enter a private network namespace with the loopback up; *old_ns is the
 * namespace to return to with xw_netns_leave (-1 after a failure). */
int xw_netns_enter(int *old_ns);
void xw_netns_leave(int *old_ns);

/* A UDP socket made as the library makes its control socket (AF_INET6,
 * dual stack) bound to addr (16 bytes, IPv4 as ::ffff:a.b.c.d) and port
 * (0: any); -1 on failure. */
int xw_ctrl_socket(const uint8_t addr[16], uint16_t port);
uint16_t xw_sock_port(int fd);
/* A UDP port nobody is bound to (bound to 0, noted, closed). */
uint16_t xw_free_port(void);

#endif /* XR_TEST_WORLD_H */
