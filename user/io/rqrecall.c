// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "rqrecall.h"
#include "rqrecall.skel.h"

int xr_rqrecall_open(struct xr_rqrecall **out, int rq_fd, char *why,
		     size_t whylen)
{
	struct xr_rqrecall *r;
	int rc;

	*out = NULL;
	r = calloc(1, sizeof(*r));
	if (!r) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	r->skel = rqrecall__open();
	if (!r->skel) {
		rc = -errno;
		snprintf(why, whylen, "cannot open the recall program: %s",
			 strerror(-rc));
		goto fail;
	}
	rc = bpf_map__reuse_fd(r->skel->maps.xr_rq, rq_fd);
	if (rc) {
		snprintf(why, whylen, "cannot use xr_rq for the recall program: %s",
			 strerror(-rc));
		goto fail;
	}
	rc = rqrecall__load(r->skel);
	if (rc) {
		snprintf(why, whylen, "cannot load the recall program "
			 "(BPF_PROG_TYPE_SYSCALL): %s", strerror(-rc));
		goto fail;
	}
	r->prog_fd = bpf_program__fd(r->skel->progs.xr_rq_recall);
	*out = r;
	return 0;
fail:
	xr_rqrecall_close(r);
	return rc;
}

void xr_rqrecall_close(struct xr_rqrecall *r)
{
	if (!r)
		return;
	rqrecall__destroy(r->skel);
	free(r);
}

int xr_rqrecall_run(struct xr_rqrecall *r, const struct xr_rq_key *k,
		    uint32_t msn)
{
	struct xr_rq_recall a = { .key = *k, .msn = msn };
	LIBBPF_OPTS(bpf_test_run_opts, o, .ctx_in = &a, .ctx_size_in = sizeof(a));

	if (bpf_prog_test_run_opts(r->prog_fd, &o))
		return -errno;
	/* A state no one writes: an entry not posted as abi.h says. */
	if (o.retval > XR_RQ_GONE)
		return -EPROTO;
	return (int)o.retval;
}
