// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * init.c: PID 1 of the vmtest guest, linked statically into the initramfs
 * that vmtest/run.sh builds.
 *
 *   1. load the kernel modules listed in /modules.order (dependencies
 *      first; run.sh resolved them), because the Debian kernel has virtio,
 *      9p, veth, clsact, ... as modules and the guest has no modprobe that
 *      could find them;
 *   2. mount the host's / (9p tag "xrroot", read-only) and make it the root;
 *   3. run XRVM_GUEST (vmtest/guest.sh) there and wait for it, reaping
 *      every orphan meanwhile (we are PID 1);
 *   4. print "XRVM-EXIT <status>" on the console and power the VM off.
 *
 * Run as "init --load-modules LIST" (not as PID 1) it only does step 1, for
 * a guest that some other init booted (virtme-ng).
 *
 * The kernel hands unknown "NAME=value" boot parameters to init as
 * environment variables: that is how run.sh passes XRVM_* settings.
 * Exiting would panic the kernel, so every error path prints why and powers
 * off with a failure status instead.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define NEWROOT "/newroot"

static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("xrvm-init: ", stdout);
	vprintf(fmt, ap);
	fputc('\n', stdout);
	fflush(stdout);
	va_end(ap);
}

static void power_off(int status)
{
	/* run.sh reads this marker; everything before it is the log. */
	printf("XRVM-EXIT %d\n", status);
	fflush(stdout);
	sync();
	reboot(RB_POWER_OFF);
	for (;;)
		pause();
}

/* The kernel gives init no console when /dev/console is missing from the
 * initramfs, so mount devtmpfs and open it ourselves. */
static void open_console(void)
{
	int fd;

	mkdir("/dev", 0755);
	mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
	fd = open("/dev/console", O_RDWR);
	if (fd < 0)
		return;
	dup2(fd, 0);
	dup2(fd, 1);
	dup2(fd, 2);
	if (fd > 2)
		close(fd);
	setvbuf(stdout, NULL, _IOLBF, 0);
}

static int load_modules(const char *order)
{
	char line[512];
	FILE *f = fopen(order, "r");
	int failed = 0;

	if (!f) {
		say("no %s: %s", order, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		int fd;

		line[strcspn(line, "\n")] = 0;
		if (!line[0])
			continue;
		fd = open(line, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			say("cannot open %s: %s", line, strerror(errno));
			failed++;
			continue;
		}
		if (syscall(SYS_finit_module, fd, "", 0) && errno != EEXIST) {
			say("cannot load %s: %s", line, strerror(errno));
			failed++;
		}
		close(fd);
	}
	fclose(f);
	return failed ? -1 : 0;
}

/* Like switch_root(8), minus freeing the initramfs (it is small). */
static int enter_root(void)
{
	const char *opts = getenv("XRVM_9P_OPTS");

	if (!opts)
		opts = "trans=virtio,version=9p2000.L,msize=512000,cache=loose";
	mkdir(NEWROOT, 0755);
	if (mount("xrroot", NEWROOT, "9p", MS_RDONLY, opts)) {
		say("cannot mount the host's / over 9p (%s): %s", opts,
		    strerror(errno));
		return -1;
	}
	/* The shell mounts its own /dev later; keep ours meanwhile. */
	if (mount("/dev", NEWROOT "/dev", NULL, MS_MOVE, NULL))
		say("note: cannot move /dev: %s", strerror(errno));
	if (chdir(NEWROOT) || mount(".", "/", NULL, MS_MOVE, NULL) ||
	    chroot(".") || chdir("/")) {
		say("cannot switch to the new root: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static int run_guest(void)
{
	const char *script = getenv("XRVM_GUEST");
	pid_t pid, w;
	int st;

	if (!script) {
		say("XRVM_GUEST is not set on the kernel command line");
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		say("fork: %s", strerror(errno));
		return 1;
	}
	if (pid == 0) {
		setsid();
		execl("/bin/bash", "bash", script, (char *)NULL);
		say("cannot run /bin/bash %s: %s", script, strerror(errno));
		_exit(127);
	}
	for (;;) {
		w = wait(&st);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			say("wait: %s", strerror(errno));
			return 1;
		}
		if (w != pid)
			continue; /* an orphan reparented to us */
		if (WIFEXITED(st))
			return WEXITSTATUS(st);
		say("guest script killed by signal %d", WTERMSIG(st));
		return 128 + WTERMSIG(st);
	}
}

int main(int argc, char **argv)
{
	/* Not PID 1: a module loader for guests booted by someone else's
	 * init (vng), given a list like /modules.order. */
	if (getpid() != 1) {
		if (argc != 3 || strcmp(argv[1], "--load-modules")) {
			fprintf(stderr, "usage: %s --load-modules LIST\n", argv[0]);
			return 2;
		}
		return load_modules(argv[2]) ? 1 : 0;
	}
	open_console();
	say("kernel up, loading modules");
	if (load_modules("/modules.order"))
		power_off(125);
	if (enter_root())
		power_off(125);
	power_off(run_guest());
	return 0;
}
