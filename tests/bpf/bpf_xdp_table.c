// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The runner of the XDP fixtures: table-driven tests of the XDP program
 * xroce_xdp (bpf/xroce.bpf.c), run on crafted frames through
 * bpf_prog_test_run_opts, in the manner of katran's golden-packet tables
 * and the kernel's selftests/bpf.  It iterates every fixture file
 * (tests/bpf/fixtures/all.h: one file per feature, each a table of
 * scenarios; fixture.h the row format) and runs every scenario in each
 * family and from each start it names.
 *
 * The program is loaded once (tests/bpf/world.h).  A scenario is a list of
 * steps run in order against one freshly set-up world (xdp_env.h: two
 * domains with mmapped memory and event rings, memory regions, a
 * connection, its receive state, and the sender's side of the same
 * connection for the replies fed back).  Each step is one frame
 * (xdp_frame.h builds it) or an action (bind/close a control socket,
 * rewrite a domain's liveness settings, wait, fill the event ring), and
 * says what must come of it (xdp_check.h checks it):
 *   - the verdict (XDP_TX / XDP_DROP / XDP_PASS);
 *   - for XDP_TX, the reply, taken apart byte by byte: MACs, addresses and
 *     ports swapped, lengths, IPv4 header and UDP checksums (checked with an
 *     independent RFC 1071 sum, tests/bpf/frames.h), type, flags, reason,
 *     dst_conn, token, cack, ack_psn, ts_echo, SACK words, counters, csn_cum,
 *     nak_csn; for XDP_PASS, the frame byte-for-byte untouched;
 *   - the receive window of the packet's path afterwards (read from xr_rx),
 *     or, for a packet that must not touch it, the whole receive state
 *     unchanged;
 *   - memory: a shadow copy of every domain's memory is kept; a step that
 *     places writes its payload into the shadow at the position the test
 *     computes from the region table, and after every step each domain's
 *     whole mmapped memory must equal its shadow byte for byte;
 *   - the delta of every xr_stats counter (summed over CPUs); counters a row
 *     does not name must not move;
 *   - the ring-buffer events (RECV, ACK/NAK, PROBE_REPLY), exactly.
 * PSNs and CSNs in the tables are relative to the scenario's start, so most
 * scenarios run four times: IPv4 and IPv6, from PSN 1000 / CSN 5000 and from
 * PSN 0xfffffffe / CSN 0xfffffffc (32-bit wrap-around, and the CSN ring's
 * index wrap).  The liveness scenario runs in a private network namespace
 * (unshare) with our plane addresses configured, so that its control
 * sockets bind to real addresses.
 *
 * Also: a checksum sweep over every payload length 1..1600 (and a few near
 * the largest frame) with a good and a corrupted checksum (xdp_sweep.h);
 * the checks themselves shown to fail on wrong expectations; and figures
 * the team wants printed (xdp_figures.h): the verifier's
 * processed-instruction count and the cost per packet of the data path and
 * of the ACK path.
 *
 *   sudo build/tests/bpf_xdp_table          (skips unless root)
 *   XR_TEST_FILTER=sack build/tests/bpf_xdp_table   run matching tests only
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <bpf/libbpf.h>
#include "contract/abi.h"
#include "world.h"
#include "fixtures/all.h"
#include "xdp_env.h"
#include "xdp_frame.h"
#include "xdp_check.h"
#include "xdp_sweep.h"
#include "xdp_figures.h"

static void test_scenario(void **state)
{
	struct tcase *tc = *state;
	struct env *e = env_up(tc->w, tc->sc, tc->v6, tc->S, tc->C,
			       XR_CFG_VERIFY_CSUM);
	int errs = 0;
	size_t i;

	assert_non_null(e);
	for (i = 0; i < tc->sc->n; i++) {
		run_step(e, &tc->sc->steps[i], (int)i);
		errs += e->errs;
	}
	env_down(e);
	if (errs)
		fail_msg("%d mismatches in %s", errs, tc->name);
}

/* ---- the checks can fail ------------------------------------------------ */

/* One expectation of a row made wrong. */
struct wrong {
	const char *what;
	void (*bend)(struct step *st);
};

static void w_verdict(struct step *st) { st->v = XDP_DROP; }
static void w_reply(struct step *st) { st->rfl ^= XR_AF_DUP; }
static void w_window(struct step *st) { st->w.cack++; }
static void w_memory(struct step *st) { st->place = 0; }
static void w_counter(struct step *st) { st->st[XR_STAT_RX_BYTES]--; }
static void w_event(struct step *st) { st->ev = EV_NONE; }
static void w_recv(struct step *st) { st->recv_end++; }

/* The scenario "inorder" up to its third row (a WRITE_IMM's last packet:
 * reply, window, placement, counters and a RECV event), run once as
 * written and once per wrong expectation of that row: as written no
 * mismatch, each wrong one a mismatch in that row and in no other. */
static void test_wrong_expectations(void **state)
{
	static const struct wrong wrongs[] = {
		{ "verdict", w_verdict }, { "reply flags", w_reply },
		{ "window", w_window }, { "memory", w_memory },
		{ "counter", w_counter }, { "event", w_event },
		{ "event field", w_recv },
	};
	struct tcase *tc = *state;
	struct step steps[3];
	size_t k;
	int i;

	assert_non_null(tc->sc);
	assert_true(tc->sc->n >= 3);
	for (k = 0; k <= X(wrongs); k++) {
		struct env *e = env_up(tc->w, tc->sc, 0, 1000, 5000,
				       XR_CFG_VERIFY_CSUM);
		int errs[3];

		assert_non_null(e);
		e->quiet = 1;
		memcpy(steps, tc->sc->steps, sizeof(steps));
		if (k < X(wrongs))
			wrongs[k].bend(&steps[2]);
		for (i = 0; i < 3; i++) {
			run_step(e, &steps[i], i);
			errs[i] = e->errs;
		}
		env_down(e);
		if (errs[0] || errs[1])
			fail_msg("rows before the changed one: %d, %d mismatches",
				 errs[0], errs[1]);
		if (k == X(wrongs) && errs[2])
			fail_msg("the row as written: %d mismatches", errs[2]);
		if (k < X(wrongs) && !errs[2])
			fail_msg("a wrong %s passed", wrongs[k].what);
	}
}

/* ---- main ---------------------------------------------------------------- */

static const struct scen *find_scen(const char *name)
{
	size_t f, i;

	for (f = 0; f < X(fixtures); f++)
		for (i = 0; i < fixtures[f].n; i++)
			if (!strcmp(fixtures[f].scens[i].name, name))
				return &fixtures[f].scens[i];
	return NULL;
}

/* One test per scenario, family and start that the filter lets through,
 * then the sweep, the negative control and the figures. */
static size_t add_tests(struct xw *w, const char *filter, struct CMUnitTest *tests,
			struct tcase *tcs)
{
	static const struct scen sweep = { "csum_sweep", F4 | F6, ST_N, 0, 0,
					   NULL, 0, 0 };
	static const struct scen figs = { "figures", F4, ST_N, 0, 0, NULL, 0, 0 };
	static const struct scen wrong = { "wrong_expectations", F4, ST_N, 0, 0,
					   NULL, 0, 0 };
	const struct scen *extra[] = { &sweep, &wrong, &figs };
	size_t nt = 0, f, i, nsc = 0;
	int fam, st;

	for (f = 0; f < X(fixtures); f++)
		nsc += fixtures[f].n;
	for (i = 0; i < nsc + X(extra); i++) {
		const struct scen *sc = NULL;
		size_t j = i;

		for (f = 0; f < X(fixtures) && !sc; f++) {
			if (j < fixtures[f].n)
				sc = &fixtures[f].scens[j];
			else
				j -= fixtures[f].n;
		}
		if (!sc)
			sc = extra[i - nsc];
		for (fam = 0; fam < 2; fam++) {
			if (!(sc->fams & (fam ? F6 : F4)))
				continue;
			for (st = 0; st < 2; st++) {
				struct tcase *tc = &tcs[nt];

				if (!(sc->starts & (st ? ST_W : ST_N)))
					continue;
				tc->w = w;
				tc->sc = sc;
				tc->v6 = fam;
				tc->S = st ? 0xfffffffeu : 1000;
				tc->C = st ? 0xfffffffcu : 5000;
				snprintf(tc->name, sizeof(tc->name), "%s/v%d/%s",
					 sc->name, fam ? 6 : 4,
					 st ? "wrap" : "psn1000");
				if (filter && !strstr(tc->name, filter))
					continue;
				tests[nt].name = tc->name;
				tests[nt].test_func = sc == &sweep ? test_csum_sweep
						      : sc == &figs ? test_figures
						      : sc == &wrong ? test_wrong_expectations
						      : test_scenario;
				/* the negative control bends "inorder" */
				tc->sc = sc == &wrong ? find_scen("inorder") : sc;
				tests[nt].initial_state = tc;
				nt++;
			}
		}
	}
	return nt;
}

int main(void)
{
	static struct xw w;
	const char *filter = getenv("XR_TEST_FILTER");
	struct CMUnitTest *tests;
	struct tcase *tcs;
	size_t max = 4 * 3, nt, f;
	int rc;

	if (geteuid() != 0) {
		printf("bpf_xdp_table: SKIP (needs root for BPF)\n");
		return 0;
	}
	libbpf_set_strict_mode(LIBBPF_STRICT_ALL);
	rc = xw_load(&w, NULL, 1);
	if (rc == -EPERM) {
		printf("bpf_xdp_table: SKIP (BPF not permitted)\n");
		return 0;
	}
	if (rc) {
		fprintf(stderr, "bpf_xdp_table: cannot load xroce_xdp: %d\n", rc);
		return 1;
	}
	for (f = 0; f < X(fixtures); f++)
		max += 4 * fixtures[f].n;
	tests = calloc(max, sizeof(*tests));
	tcs = calloc(max, sizeof(*tcs));
	assert_non_null(tests);
	assert_non_null(tcs);
	nt = add_tests(&w, filter, tests, tcs);
	rc = _cmocka_run_group_tests("bpf_xdp_table", tests, nt, NULL, NULL);
	xw_unload(&w);
	free(tests);
	free(tcs);
	return rc;
}
