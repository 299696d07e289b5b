"""procstat.py: how busy this host is, from /proc/stat: the tests and
benchmarks that measure rates (incast) need to know whether other work
competed with them for the CPUs.

  procstat.py busy SECS        share of all CPUs busy over SECS ("%.3f")
  procstat.py steal LINE0 LINE1
                               share of the CPU time between two `cpu`
                               lines of /proc/stat that the hypervisor
                               took (steal; "%.3f")

As a module: busy(secs) -> (share busy, mean runnable tasks besides us)."""
import sys
import time


def _snap():
    with open('/proc/stat') as f:
        t = f.read().split('\n')
    v = [int(x) for x in t[0].split()[1:]]
    run = next(int(l.split()[1]) for l in t if l.startswith('procs_running'))
    return sum(v), v[3] + v[4], run  # total, idle + iowait, runnable


def busy(secs, samples=10):
    """Other work on the host over secs: the share of all CPUs busy, and
    the mean number of runnable tasks besides this one."""
    t0, i0, _ = _snap()
    runs = []
    for _ in range(samples):
        time.sleep(secs / samples)
        runs.append(_snap()[2] - 1)
    t1, i1, _ = _snap()
    return (1 - (i1 - i0) / (t1 - t0) if t1 > t0 else 0.0), sum(runs) / len(runs)


def steal(line0, line1):
    a, b = ([int(x) for x in l.split()[1:]] for l in (line0, line1))
    d = [y - x for x, y in zip(a, b)]
    return d[7] / sum(d) if sum(d) > 0 else 0


if __name__ == '__main__':
    if sys.argv[1] == 'busy':
        print('%.3f' % busy(float(sys.argv[2]), 1)[0])
    elif sys.argv[1] == 'steal':
        print('%.3f' % steal(sys.argv[2], sys.argv[3]))
    else:
        sys.exit(__doc__)
