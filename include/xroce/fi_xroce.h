/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Extensions of libfabric's "xroce" provider (libxroce-fi.so).
 *
 * Device memory: memory in the xroce device's memory map, which libxroce
 * registers in place for any access (local and remote), whatever
 * libxroce's version.  A libxroce that registers any memory of the
 * process (see xroce_reg_mr) makes this unnecessary; with one that does
 * not, it is the only memory a peer can reach with fi_read / fi_write
 * (other registrations then get keys no RMA accepts).
 *
 *   struct fi_xroce_mem_ops *ops;
 *   fi_open_ops(&domain->fid, FI_XROCE_MEM_OPS, 0, (void **)&ops, NULL);
 *   void *buf = ops->alloc(domain, len);          NULL if none is left
 *   fi_mr_reg(domain, buf, len, FI_REMOTE_WRITE | ..., ...);
 *   ...
 *   ops->free(domain, buf);                       after closing its regions
 */
#ifndef XROCE_FI_XROCE_H
#define XROCE_FI_XROCE_H

#include <stddef.h>
#include <rdma/fi_domain.h>

#define FI_XROCE_MEM_OPS "xroce_mem_ops_v1"

struct fi_xroce_mem_ops {
	size_t size;               /* sizeof(struct fi_xroce_mem_ops) */
	/* len bytes of the domain's device memory, 4 KiB aligned. */
	void *(*alloc)(struct fid_domain *domain, size_t len);
	/* 0, or -FI_EINVAL if buf did not come from alloc. */
	int (*free)(struct fid_domain *domain, void *buf);
};

#endif /* XROCE_FI_XROCE_H */
