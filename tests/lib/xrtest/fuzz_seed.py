"""fuzz_seed.py: a first corpus for the userspace fuzzers (tests/fuzz/run.sh):
ten random programs from a fixed seed.  Every byte string is a valid
input; longer ones reach deeper (connections with many packets in
flight).

  fuzz_seed.py DIR"""
import os
import random
import sys

random.seed(1)
for i, n in enumerate([64, 128, 256, 512, 1024, 1024, 2048, 2048, 4096, 4096]):
    with open(os.path.join(sys.argv[1], 'seed%02d' % i), 'wb') as f:
        f.write(bytes(random.getrandbits(8) for _ in range(n)))
