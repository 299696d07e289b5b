#!/usr/bin/env python3
"""mkinitramfs.py: the vmtest guest's initramfs (gzip'd newc cpio).

    mkinitramfs.py [--host-list FILE] OUT.cpio.gz INIT MODDIR MODULE...

Packs INIT (vmtest/init.c, static) as /init, the kernel modules named and
everything they depend on as /modules/*.ko, and /modules.order listing them
dependencies first, which init loads in that order.  MODDIR is the
extracted lib/modules/<version> of the guest kernel.  --host-list also
writes the same list with the modules' paths on the host, for a guest
booted by virtme-ng that sees the host's files (init --load-modules FILE).

Dependencies are read from each module's .modinfo section ("depends=")
because this host has no kmod (depmod/modprobe) and the Debian package
ships no modules.dep (its postinst generates it).  Built-in modules
(modules.builtin) need no loading and are skipped.
"""
import gzip
import os
import struct
import sys


def modinfo_depends(path):
    """The depends= list of one .ko (ELF64 little endian)."""
    with open(path, 'rb') as f:
        elf = f.read()
    if elf[:4] != b'\x7fELF' or elf[4] != 2:
        raise SystemExit(f'{path}: not an ELF64 object')
    shoff, = struct.unpack_from('<Q', elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', elf, 0x3a)

    def section(i):
        name, _, _, _, off, size = struct.unpack_from('<IIQQQQ', elf, shoff + i * shentsize)
        return name, off, size

    _, stroff, _ = section(shstrndx)
    for i in range(shnum):
        name, off, size = section(i)
        end = elf.index(b'\0', stroff + name)
        if elf[stroff + name:end] != b'.modinfo':
            continue
        for item in elf[off:off + size].split(b'\0'):
            if item.startswith(b'depends='):
                return [d for d in item[8:].decode().split(',') if d]
        return []
    return []


def index_modules(moddir):
    """module name (dashes as underscores) -> path of its .ko"""
    idx = {}
    for root, _, files in os.walk(os.path.join(moddir, 'kernel')):
        for fn in files:
            if fn.endswith('.ko'):
                idx[fn[:-3].replace('-', '_')] = os.path.join(root, fn)
    return idx


def builtin_modules(moddir):
    names = set()
    try:
        with open(os.path.join(moddir, 'modules.builtin')) as f:
            for line in f:
                names.add(os.path.basename(line.strip())[:-3].replace('-', '_'))
    except FileNotFoundError:
        pass
    return names


def resolve(wanted, idx, builtin, moddir):
    """Modules to load, each after its dependencies."""
    order, seen = [], set()

    def visit(name, chain):
        name = name.replace('-', '_')
        if name in seen or name in builtin:
            return
        if name in chain:
            raise SystemExit(f'dependency loop: {" -> ".join(chain + [name])}')
        if name not in idx:
            raise SystemExit(f'module {name} is neither built in nor in {moddir}')
        for dep in modinfo_depends(idx[name]):
            visit(dep, chain + [name])
        seen.add(name)
        order.append(name)

    for w in wanted:
        visit(w, [])
    return order


class Cpio:
    """Minimal newc ("070701") archive writer."""

    def __init__(self):
        self.out = bytearray()
        self.ino = 1

    def add(self, name, mode, data=b''):
        namez = name.encode() + b'\0'
        hdr = '070701' + ''.join(f'{v:08x}' for v in (
            self.ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(namez), 0))
        self.ino += 1
        self.out += hdr.encode() + namez
        self.out += b'\0' * (-len(self.out) % 4)
        self.out += data
        self.out += b'\0' * (-len(self.out) % 4)

    def finish(self):
        self.add('TRAILER!!!', 0)
        return bytes(self.out)


if __name__ == '__main__':
    args = sys.argv[1:]
    host_list = None
    if args[:1] == ['--host-list'] and len(args) > 1:
        host_list, args = args[1], args[2:]
    if len(args) < 3:
        raise SystemExit(__doc__)
    out, init, moddir, wanted = args[0], args[1], args[2], args[3:]
    idx = index_modules(moddir)
    order = resolve(wanted, idx, builtin_modules(moddir), moddir)
    c = Cpio()
    with open(init, 'rb') as f:
        c.add('init', 0o100755, f.read())
    c.add('modules', 0o040755)
    for name in order:
        with open(idx[name], 'rb') as f:
            c.add(f'modules/{name}.ko', 0o100644, f.read())
    c.add('modules.order', 0o100644,
          ''.join(f'/modules/{n}.ko\n' for n in order).encode())
    with gzip.open(out + '.tmp', 'wb', compresslevel=6) as f:
        f.write(c.finish())
    os.replace(out + '.tmp', out)
    if host_list:
        with open(host_list, 'w') as f:
            f.write(''.join(os.path.abspath(idx[n]) + '\n' for n in order))
    print(' '.join(order))
