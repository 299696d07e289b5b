// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * kcheck.c: does the running kernel have what xroce needs?
 *
 * Every feature is probed by using it (creating the map, loading a program
 * that calls the helper, binding the socket), not by reading a kernel
 * config, which distributions do not always ship.  Each line says what is
 * missing, since which kernel version it exists and what in xroce needs
 * it.  The newest requirement is bpf_xdp_load_bytes (5.18), so that is
 * xroce's minimum kernel.
 *
 *   kcheck [-q] [--obj build/bpf/xroce.bpf.o]
 *
 * --obj also loads xroce's XDP object, so a verifier refusal shows up here
 * with the verifier's own message.  Exit status: 0 all present, 1 something
 * missing, 2 usage.  Needs root (CAP_BPF + CAP_NET_ADMIN + CAP_SYS_ADMIN).
 *
 * xr_kcheck() is self-contained so the loader can call it at start (build
 * with -DXR_KCHECK_NO_MAIN).
 */
#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#ifndef AF_XDP
#define AF_XDP 44
#endif
#ifndef SOL_XDP
#define SOL_XDP 283
#endif

struct xr_kfeature {
	const char *name;
	const char *since;   /* first mainline kernel that has it */
	const char *user;    /* what in xroce needs it */
	int (*probe)(char *why, size_t len);
};

/* Record why a probe failed; returns -1 for the probe to return. */
__attribute__((format(printf, 3, 4)))
static int why_fail(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return -1;
}

#define WHY(...) why_fail(why, len, __VA_ARGS__)

static int probe_bpf_syscall(char *why, size_t len)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "xrk_arr", 4, 8, 1, NULL);

	if (fd < 0)
		return WHY("bpf(BPF_MAP_CREATE): %s", strerror(errno));
	close(fd);
	return 0;
}

static int probe_xdp(char *why, size_t len)
{
	int rc = libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_XDP, NULL);

	return rc == 1 ? 0 : WHY("XDP programs refused (%d)", rc);
}

static int probe_ringbuf(char *why, size_t len)
{
	int rc = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL);

	return rc == 1 ? 0 : WHY("BPF_MAP_TYPE_RINGBUF refused (%d)", rc);
}

/* The helpers bpf/xroce.bpf.c calls, each probed from an XDP program. */
static const struct {
	enum bpf_func_id id;
	const char *name;
} xdp_helpers[] = {
	{ BPF_FUNC_xdp_load_bytes, "bpf_xdp_load_bytes" },
	{ BPF_FUNC_sk_lookup_udp, "bpf_sk_lookup_udp" },
	{ BPF_FUNC_sk_release, "bpf_sk_release" },
	{ BPF_FUNC_ringbuf_output, "bpf_ringbuf_output" },
	{ BPF_FUNC_ringbuf_query, "bpf_ringbuf_query" },
	{ BPF_FUNC_spin_lock, "bpf_spin_lock" },
	{ BPF_FUNC_xdp_adjust_tail, "bpf_xdp_adjust_tail" },
	{ BPF_FUNC_csum_diff, "bpf_csum_diff" },
	{ BPF_FUNC_ktime_get_ns, "bpf_ktime_get_ns" },
};

static int probe_helper(enum bpf_func_id id, const char *name, char *why,
			size_t len)
{
	int rc = libbpf_probe_bpf_helper(BPF_PROG_TYPE_XDP, id, NULL);

	if (rc == 1)
		return 0;
	return WHY("%s not allowed in XDP programs (%s)", name,
		   rc == 0 ? "unknown to this kernel" : strerror(-rc));
}

static int probe_xdp_load_bytes(char *why, size_t len)
{
	return probe_helper(BPF_FUNC_xdp_load_bytes, "bpf_xdp_load_bytes", why, len);
}

static int probe_sk_lookup_udp(char *why, size_t len)
{
	return probe_helper(BPF_FUNC_sk_lookup_udp, "bpf_sk_lookup_udp", why, len);
}

static int probe_other_helpers(char *why, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof(xdp_helpers) / sizeof(xdp_helpers[0]); i++)
		if (probe_helper(xdp_helpers[i].id, xdp_helpers[i].name, why, len))
			return -1;
	return 0;
}

static int mem_map(uint32_t pages, uint32_t flags)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = flags);

	return bpf_map_create(BPF_MAP_TYPE_ARRAY, "xrk_mem", 4, 4096, pages, &o);
}

/* Per-domain memory: inner arrays of different sizes in one hash of maps,
 * and per-domain event rings as inner maps. */
static int probe_inner_map(char *why, size_t len)
{
	LIBBPF_OPTS(bpf_map_create_opts, o);
	int inner, other, outer = -1, rb = -1, rbo = -1, rc = -1;
	uint32_t key = 1;

	inner = mem_map(1, BPF_F_MMAPABLE | BPF_F_INNER_MAP);
	other = mem_map(4, BPF_F_MMAPABLE | BPF_F_INNER_MAP);
	if (inner < 0 || other < 0) {
		WHY("array with BPF_F_INNER_MAP: %s", strerror(errno));
		goto out;
	}
	o.inner_map_fd = inner;
	outer = bpf_map_create(BPF_MAP_TYPE_HASH_OF_MAPS, "xrk_outer", 4, 4, 4, &o);
	if (outer < 0) {
		WHY("hash of maps: %s", strerror(errno));
		goto out;
	}
	if (bpf_map_update_elem(outer, &key, &other, BPF_ANY)) {
		WHY("inner map of another size refused: %s", strerror(errno));
		goto out;
	}
	rb = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "xrk_rb", 0, 0, 4096, NULL);
	o.inner_map_fd = rb;
	rbo = rb < 0 ? -1 :
		bpf_map_create(BPF_MAP_TYPE_HASH_OF_MAPS, "xrk_rbo", 4, 4, 4, &o);
	if (rbo < 0 || bpf_map_update_elem(rbo, &key, &rb, BPF_ANY)) {
		WHY("ring buffer as inner map: %s", strerror(errno));
		goto out;
	}
	rc = 0;
out:
	for (int *fd = (int[]){ inner, other, outer, rb, rbo, -2 }; *fd != -2; fd++)
		if (*fd >= 0)
			close(*fd);
	return rc;
}

/* Registered memory: a BPF_F_MMAPABLE array, mmapped by the process and
 * registered as the AF_XDP UMEM. */
static int probe_mmap_umem(char *why, size_t len)
{
	const uint32_t pages = 16;
	struct xdp_umem_reg reg;
	uint32_t key = 3, page[1024];
	int fd, sk = -1, rc = -1;
	void *p;

	fd = mem_map(pages, BPF_F_MMAPABLE);
	if (fd < 0)
		return WHY("array with BPF_F_MMAPABLE: %s", strerror(errno));
	p = mmap(NULL, pages * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		WHY("mmap of the array: %s", strerror(errno));
		goto out;
	}
	((volatile uint32_t *)p)[3 * 1024] = 0x78726f63;
	if (bpf_map_lookup_elem(fd, &key, page) || page[0] != 0x78726f63) {
		WHY("a store through the mapping is not seen in the map");
		goto out_unmap;
	}
	sk = socket(AF_XDP, SOCK_RAW, 0);
	if (sk < 0) {
		WHY("socket(AF_XDP): %s (CONFIG_XDP_SOCKETS)", strerror(errno));
		goto out_unmap;
	}
	memset(&reg, 0, sizeof(reg));
	reg.addr = (uint64_t)(unsigned long)p;
	reg.len = pages * 4096;
	reg.chunk_size = 4096;
	if (setsockopt(sk, SOL_XDP, XDP_UMEM_REG, &reg, sizeof(reg))) {
		WHY("XDP_UMEM_REG over the mapped array: %s", strerror(errno));
		goto out_unmap;
	}
	rc = 0;
out_unmap:
	if (sk >= 0)
		close(sk);
	munmap(p, pages * 4096);
out:
	close(fd);
	return rc;
}

static int run_ip(char *const argv[])
{
	int st;
	pid_t pid = fork();

	if (pid == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* In a child with its own network namespace (gone when the child exits):
 * a veth pair, and a native XDP program on it. */
static int netns_child(char *why, size_t len)
{
	char *add[] = { "ip", "link", "add", "xrk0", "type", "veth", "peer",
			"name", "xrk1", NULL };
	struct bpf_insn pass[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0,
		  .imm = XDP_PASS },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int rc, fd, ifindex;

	if (unshare(CLONE_NEWNET))
		return WHY("unshare(CLONE_NEWNET): %s (CONFIG_NET_NS)", strerror(errno));
	rc = run_ip(add);
	if (rc)
		return WHY("`ip link add type veth` failed (%d): no veth (CONFIG_VETH)", rc);
	ifindex = (int)if_nametoindex("xrk0");
	fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "xrk_pass", "GPL", pass, 2, NULL);
	if (fd < 0)
		return WHY("loading an XDP_PASS program: %s", strerror(errno));
	if (bpf_xdp_attach(ifindex, fd, XDP_FLAGS_DRV_MODE, NULL))
		return WHY("native XDP on veth: %s", strerror(errno));
	return 0;
}

static int probe_veth_netns(char *why, size_t len)
{
	int pfd[2], st;
	ssize_t n;
	pid_t pid;

	if (pipe(pfd))
		return WHY("pipe: %s", strerror(errno));
	pid = fork();
	if (pid == 0) {
		char msg[256] = "";
		int rc;

		close(pfd[0]);
		rc = netns_child(msg, sizeof(msg));
		if (write(pfd[1], msg, strlen(msg)) < 0)
			rc = -1;
		_exit(rc ? 1 : 0);
	}
	close(pfd[1]);
	if (pid < 0) {
		close(pfd[0]);
		return WHY("fork: %s", strerror(errno));
	}
	n = read(pfd[0], why, len - 1);
	why[n > 0 ? n : 0] = 0;
	close(pfd[0]);
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		return why[0] ? -1 : WHY("probe process failed");
	return 0;
}

static const struct xr_kfeature features[] = {
	{ "bpf() syscall", "3.18", "everything (CONFIG_BPF_SYSCALL)", probe_bpf_syscall },
	{ "XDP programs", "4.8", "the datapath", probe_xdp },
	{ "BPF ring buffer", "5.8", "events to libxroce", probe_ringbuf },
	{ "bpf_xdp_load_bytes", "5.18", "placement of payload into memory", probe_xdp_load_bytes },
	{ "bpf_sk_lookup_udp in XDP", "5.1", "the control port check", probe_sk_lookup_udp },
	{ "other XDP helpers", "5.8", "ringbuf_query, spin_lock, adjust_tail, csum_diff", probe_other_helpers },
	{ "map-in-map, BPF_F_INNER_MAP", "5.10", "per-domain memory and event rings", probe_inner_map },
	{ "mmapable array as AF_XDP UMEM", "5.5", "registered memory / transmit", probe_mmap_umem },
	{ "netns + veth + native XDP", "4.19", "tests, the fabric emulator", probe_veth_netns },
};

#define XR_KCHECK_MIN "5.18"

/* Probe every feature; report each on out (NULL: only the missing ones on
 * stderr).  Returns the number missing. */
int xr_kcheck(FILE *out)
{
	int missing = 0;
	size_t i;

	for (i = 0; i < sizeof(features) / sizeof(features[0]); i++) {
		const struct xr_kfeature *f = &features[i];
		char why[256] = "";

		if (!f->probe(why, sizeof(why))) {
			if (out)
				fprintf(out, "  ok       %-32s (since %s)\n", f->name, f->since);
			continue;
		}
		missing++;
		fprintf(out ? out : stderr,
			"  MISSING  %-32s (since %s, needed for %s): %s\n",
			f->name, f->since, f->user, why);
	}
	if (missing)
		fprintf(out ? out : stderr,
			"xroce needs Linux " XR_KCHECK_MIN " or newer with BPF, XDP and AF_XDP "
			"enabled; %d feature(s) missing\n", missing);
	return missing;
}

#ifndef XR_KCHECK_NO_MAIN
/* Instructions the verifier processed for the object's programs (0 when
 * the kernel does not say: before 5.16).  How close a change brings the
 * program to the verifier's limits shows first on older kernels. */
static unsigned long long verified_insns(struct bpf_object *obj)
{
	unsigned long long n = 0;
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, obj) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);

		memset(&info, 0, sizeof(info));
		if (bpf_program__fd(prog) >= 0 &&
		    !bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
			n += info.verified_insns;
	}
	return n;
}

/* Load (not attach) the object, so that the verifier judges it here. */
static int load_obj(const char *path)
{
	struct bpf_object *obj = bpf_object__open_file(path, NULL);
	unsigned long long n;
	int rc;

	if (!obj) {
		fprintf(stderr, "kcheck: cannot open %s: %s\n", path, strerror(errno));
		return -1;
	}
	rc = bpf_object__load(obj);
	n = rc ? 0 : verified_insns(obj);
	bpf_object__close(obj);
	if (rc) {
		fprintf(stderr, "kcheck: the kernel refuses %s: %s (verifier log above)\n",
			path, strerror(-rc));
		return -1;
	}
	printf("  ok       %-32s %llu instructions verified\n",
	       "load of the XDP object", n);
	return 0;
}

int main(int argc, char **argv)
{
	const char *obj = NULL;
	bool quiet = false;
	int i, missing;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-q")) {
			quiet = true;
		} else if (!strcmp(argv[i], "--obj") && i + 1 < argc) {
			obj = argv[++i];
		} else {
			fprintf(stderr, "usage: kcheck [-q] [--obj XDP_OBJECT]\n");
			return 2;
		}
	}
	if (!quiet)
		printf("kernel features for xroce (minimum Linux " XR_KCHECK_MIN "):\n");
	missing = xr_kcheck(quiet ? NULL : stdout);
	if (obj && load_obj(obj))
		missing++;
	return missing ? 1 : 0;
}
#endif
