/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the engine offers the api layer (user/api/): one function behind
 * each public call, with the same arguments already checked for NULL.
 * Every function here is called with the device lock held (xr_device_lock),
 * except xr_device_open and xr_device_close, which manage it.
 *
 * The engine's rooms, bottom up (each file's header says what it offers):
 *   log        logging, clock, randomness
 *   trace      latency breakdowns: timestamps of each message's steps
 *   acl        which addresses may connect
 *   auth       cookies, control-message MACs, connection keys (libsodium)
 *   asyncev    asynchronous events for the application's handler
 *   cq         completion queue rings and their notification
 *   mr         protection domains, memory regions (published to XDP)
 *   domain     the domain's memory map and event ring in the XDP maps
 *   plane      interfaces, transmit engines, transmit frames
 *   telem      telemetry slots for other processes
 *   rqretire   completed receives out of xr_rq: XDP's guard, batches
 *   stream     streams, posted receives, receive delivery
 *   keys       header-MAC keys of keyed connections, key epochs
 *   qp_state   RTS / error state in the library and in XDP's maps
 *   emit       one packet onto a plane's engine
 *   paths      a connection's paths, set up from the peer's addresses
 *   sender     cutting work into packets, transmission, probes
 *   keepalive  probes of idle connections, failure of silent ones
 *   planewatch a plane losing xroce's program, an MTU going down
 *   acks       ACK/NAK records, timers, congestion events
 *   complete   send completions in stream order
 *   events     the event ring's records, dispatched
 *   evq_wake   whether a record wakes the device (only while it sleeps)
 *   ctrl       control messages (never blocking)
 *   bind       xroce_qp_bind's exchange (its inbox, bindbox, is filled by
 *              events), xroce_qp_to_error
 *   cm         connection set-up without blocking: listening ports,
 *              requests taken and answered, connects started and polled
 *   progress   progress rounds, the progress thread
 *   connect    blocking connect / accept
 *   wait       polling and waiting on completion queues
 *   post       post_send
 *   qp         QP creation, destruction, statistics
 *   anymem     application memory moved into the memory map
 *   regmem     where a region's bytes are (xroce_mem_alloc's or anymem)
 *   discover   interfaces carrying xroce, planes now, honest limits
 *   device     device open / close, device memory
 */
#ifndef XR_ENGINE_ENGINE_H
#define XR_ENGINE_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "xroce/xroce.h"

/* device.c */
int xr_device_open(const struct xroce_device_attr *attr,
		   struct xroce_device **out);
int xr_device_close(struct xroce_device *dev);
void xr_device_lock(struct xroce_device *dev);
void xr_device_unlock(struct xroce_device *dev);
int xr_device_fd(struct xroce_device *dev);
enum xroce_tx_engine xr_device_tx_engine(const struct xroce_device *dev,
					 int plane);
uint16_t xr_device_ctrl_port(const struct xroce_device *dev);
void *xr_mem_alloc(struct xroce_device *dev, size_t len, size_t align);
int xr_mem_free(struct xroce_device *dev, void *addr);
/* The device an object belongs to (to take its lock). */
struct xroce_device *xr_pd_device(const struct xroce_pd *pd);
struct xroce_device *xr_cq_device(const struct xroce_cq *cq);
struct xroce_device *xr_qp_device(const struct xroce_qp *qp);
/* Log a bad argument of a public call (no device to log through). */
int xr_bad_arg(const char *call, const char *what);

/* mr.c, regmem.c */
int xr_pd_alloc(struct xroce_device *dev, struct xroce_pd **out);
int xr_pd_dealloc(struct xroce_pd *pd);
int xr_mr_reg(struct xroce_pd *pd, void *addr, size_t length, int access,
	      struct xroce_mr **out);
int xr_mr_dereg(struct xroce_mr *mr);

/* cq.c, wait.c */
int xr_cq_create(struct xroce_device *dev, int cqe, struct xroce_cq **out);
int xr_cq_destroy(struct xroce_cq *cq);
int xr_cq_set_notify(struct xroce_cq *cq, xroce_cq_notify_fn fn, void *arg);
int xr_cq_req_notify(struct xroce_cq *cq, int solicited_only);
int xr_cq_poll(struct xroce_cq *cq, int n, struct xroce_wc *wc);
int xr_cq_wait(struct xroce_cq *cq, int n, struct xroce_wc *wc, int timeout_ms);

/* qp.c */
int xr_qp_create(struct xroce_pd *pd, const struct xroce_qp_init_attr *attr,
		 struct xroce_qp **out);
int xr_qp_destroy(struct xroce_qp *qp);
uint32_t xr_qp_num(const struct xroce_qp *qp);
enum xroce_qp_state xr_qp_state(const struct xroce_qp *qp);
int xr_qp_stats(const struct xroce_qp *qp, struct xroce_qp_stats *st);
int xr_qp_path_stats(const struct xroce_qp *qp, struct xroce_path_stats *ps,
		     int max_paths);

/* connect.c */
int xr_qp_connect(struct xroce_qp *qp, const char *host, uint16_t port,
		  int timeout_ms);
int xr_qp_accept(struct xroce_qp *qp, int timeout_ms);
int xr_qp_set_private_data(struct xroce_qp *qp, const void *data, size_t len);
int xr_qp_get_private_data(const struct xroce_qp *qp, void *buf, size_t len);

/* cm.c */
int xr_listen(struct xroce_device *dev, const char *addr, uint16_t port);
int xr_unlisten(struct xroce_device *dev, uint16_t port);
int xr_conn_req_get(struct xroce_device *dev, struct xroce_conn_req *req);
int xr_conn_req_accept(struct xroce_qp *qp, const struct xroce_conn_req *req);
int xr_conn_req_reject(struct xroce_device *dev, const struct xroce_conn_req *req,
		       const void *data, size_t len);
int xr_qp_connect_start(struct xroce_qp *qp, const char *host, uint16_t port,
			int timeout_ms);
int xr_qp_connect_poll(struct xroce_qp *qp);

/* post.c, stream.c */
int xr_qp_post_send(struct xroce_qp *qp, struct xroce_send_wr *wr,
		    struct xroce_send_wr **bad_wr);
int xr_qp_post_recv(struct xroce_qp *qp, struct xroce_recv_wr *wr,
		    struct xroce_recv_wr **bad_wr);
int xr_qp_recall_recv(struct xroce_qp *qp, uint16_t stream, uint64_t *wr_id);

/* progress.c */
int xr_progress_once(struct xroce_device *dev);

/* trace.c */
int xr_trace_enable(struct xroce_device *dev, int on);
int xr_trace_take(struct xroce_device *dev, struct xroce_trace_rec *recs,
		  int max);

/* bind.c */
int xr_qp_bind(struct xroce_qp *qp, const struct xroce_qp_peer *peer);
int xr_qp_to_error(struct xroce_qp *qp);

/* asyncev.c */
int xr_set_event_handler(struct xroce_device *dev, xroce_event_fn fn, void *arg);

/* discover.c */
int xr_list_interfaces(char (*names)[16], int max);
int xr_query_plane(const struct xroce_device *dev, int plane,
		   struct xroce_plane_attr *out);
int xr_query_device(const struct xroce_device *dev,
		    struct xroce_device_caps *out);
int xr_device_nplanes(const struct xroce_device *dev);

#endif /* XR_ENGINE_ENGINE_H */
