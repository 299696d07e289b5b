// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "xdptx.h"

int xr_xdptx_open(struct xr_xdptx **out, int txq_fd, uint32_t domain,
		  uint32_t plane, int ifindex, uint32_t prog_id, uint64_t secret,
		  char *why, size_t whylen)
{
	LIBBPF_OPTS(bpf_map_create_opts, mo, .map_flags = BPF_F_MMAPABLE);
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	struct xr_txr_trigger tr;
	struct xr_xdptx *t;
	void *p;
	int rc;

	*out = NULL;
	if (txq_fd < 0) {
		snprintf(why, whylen, "the attached xroce object has no transmit "
			 "rings (re-attach it: `xroce attach --force`)");
		return -EOPNOTSUPP;
	}
	if (bpf_xdp_query(ifindex, 0, &q) || q.drv_prog_id != prog_id) {
		snprintf(why, whylen, "xroce's XDP program is not attached in "
			 "native mode on its own (generic mode, or inside a "
			 "libxdp dispatcher): its test runs would be slow");
		return -EOPNOTSUPP;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	t->ring_fd = t->prog_fd = -1;
	t->txq_fd = txq_fd;
	t->ifindex = ifindex;
	t->key.domain = domain;
	t->key.plane = plane;
	t->prog_fd = bpf_prog_get_fd_by_id(prog_id);
	if (t->prog_fd < 0) {
		rc = -errno;
		snprintf(why, whylen, "cannot open the XDP program: %s", strerror(-rc));
		goto fail;
	}
	t->ring_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "xr_txring", sizeof(__u32),
				    sizeof(struct xr_txr_desc), XR_TXR_RING + 1, &mo);
	if (t->ring_fd < 0) {
		rc = -errno;
		snprintf(why, whylen, "cannot create the transmit ring: %s",
			 strerror(-rc));
		goto fail;
	}
	t->map_len = ((XR_TXR_RING + 1) * sizeof(struct xr_txr_desc) + 4095) & ~(size_t)4095;
	p = mmap(NULL, t->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, t->ring_fd, 0);
	if (p == MAP_FAILED) {
		rc = -errno;
		snprintf(why, whylen, "cannot mmap the transmit ring: %s", strerror(-rc));
		goto fail;
	}
	t->ring = p;
	t->ctl = (struct xr_txr_ctl *)&t->ring[XR_TXR_CTL];
	t->ctl->secret = secret;
	if (bpf_map_update_elem(txq_fd, &t->key, &t->ring_fd, BPF_ANY)) {
		rc = -errno;
		snprintf(why, whylen, "cannot install the transmit ring: %s",
			 strerror(-rc));
		goto fail;
	}
	memset(&tr, 0, sizeof(tr));
	tr.ethertype = htons(XR_TXR_ETHERTYPE);
	tr.magic = htonl(XR_TXR_MAGIC);
	tr.domain = htonl(domain);
	tr.plane = htonl(plane);
	tr.secret = secret;
	memcpy(t->trigger, &tr, sizeof(tr));
	*out = t;
	return 0;
fail:
	xr_xdptx_close(t);
	return rc;
}

void xr_xdptx_close(struct xr_xdptx *t)
{
	if (!t)
		return;
	if (t->ring)
		bpf_map_delete_elem(t->txq_fd, &t->key);
	if (t->ring)
		munmap(t->ring, t->map_len);
	if (t->ring_fd >= 0)
		close(t->ring_fd);
	if (t->prog_fd >= 0)
		close(t->prog_fd);
	free(t);
}

int xr_xdptx_flush(struct xr_xdptx *t)
{
	struct xdp_md md = {
		.data = 0,
		.data_end = XR_TXR_TRIGGER_LEN,
		.ingress_ifindex = (__u32)t->ifindex,
	};
	LIBBPF_OPTS(bpf_test_run_opts, o,
		    .data_in = t->trigger,
		    .data_size_in = XR_TXR_TRIGGER_LEN,
		    .ctx_in = &md,
		    .ctx_size_in = sizeof(md));
	uint32_t n = xr_xdptx_pending(t);
	uint64_t sent0 = t->ctl->sent;
	int rc;

	if (!n)
		return 0;
	o.repeat = n;
	o.flags = BPF_F_TEST_XDP_LIVE_FRAMES;
	do {
		rc = bpf_prog_test_run_opts(t->prog_fd, &o);
	} while (rc && errno == EINTR);
	t->runs++;
	if (rc)
		rc = -errno;
	if (t->ctl->tail != t->ctl->head) {
		/* Not all were taken (the run failed): they are lost. */
		t->lost += t->ctl->head - t->ctl->tail;
		t->ctl->tail = t->ctl->head;
	}
	if (rc) {
		t->run_errors++;
		return rc;
	}
	return (int)(t->ctl->sent - sent0);
}
