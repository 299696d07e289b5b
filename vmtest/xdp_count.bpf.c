// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * xdp_count.bpf.c: a second, unrelated XDP program for
 * vmtest/test_multiprog.sh: counts every frame it sees and passes it on.
 * Loaded by xdp-loader next to xroce in libxdp's multi-program dispatcher.
 *
 * Kept out of bpf/ (the Makefile builds every BPF source there into the product)
 * and compiled by the test itself.  libxdp needs the program's BTF (-g);
 * its run priority comes from `xdp-loader load --prio`, so the object has
 * no .xdp_run_config section.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

/* [0] frames, [1] bytes; one slot per CPU so that no atomic is needed. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} xdp_count_map SEC(".maps");

SEC("xdp")
int xdp_count(struct xdp_md *ctx)
{
	__u32 k_frames = 0, k_bytes = 1;
	__u64 *frames = bpf_map_lookup_elem(&xdp_count_map, &k_frames);
	__u64 *bytes = bpf_map_lookup_elem(&xdp_count_map, &k_bytes);

	if (frames)
		*frames += 1;
	if (bytes)
		*bytes += ctx->data_end - ctx->data;
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
