"""cheader.py: just enough of a C header parser for test_abi.py: #define
integer constants, struct layouts (fixed-width __uN / uintN_t fields,
arrays, nested structs, natural alignment as on x86_64 and BPF), enum
enumerators with their values, and _Static_assert(sizeof(struct X) == N)
claims.  It refuses what it does not understand (unions, bit-fields,
pointers) rather than guess."""
import re

SCALARS = {'__u8': 1, '__u16': 2, '__u32': 4, '__u64': 8, '__s8': 1, '__s16': 2,
           '__s32': 4, '__s64': 8, 'uint8_t': 1, 'uint16_t': 2, 'uint32_t': 4,
           'uint64_t': 8, 'int8_t': 1, 'int16_t': 2, 'int32_t': 4, 'int64_t': 8}


def strip_comments(text):
    text = re.sub(r'/\*.*?\*/', ' ', text, flags=re.S)
    return re.sub(r'//[^\n]*', '', text)


class Header:
    def __init__(self, *texts):
        self.text = '\n'.join(strip_comments(t) for t in texts)
        self.defines = {}
        for m in re.finditer(r'^\s*#\s*define\s+(\w+)\s+([^\n]+)$', self.text, re.M):
            self.defines.setdefault(m.group(1), m.group(2).strip())
        self._layouts = {}

    def const(self, expr):
        """The integer value of a constant expression of #defines."""
        seen = 0
        while True:
            new = re.sub(r'\b([A-Za-z_]\w*)\b',
                         lambda m: '(%s)' % self.defines[m.group(1)]
                         if m.group(1) in self.defines else m.group(1), expr)
            if new == expr:
                break
            expr, seen = new, seen + 1
            if seen > 20:
                raise ValueError('recursive macro in %r' % expr)
        expr = re.sub(r'\b(0[xX][0-9a-fA-F]+|\d+)[uUlL]+\b', r'\1', expr)
        expr = re.sub(r'\(\s*(unsigned\s+long|unsigned|__u\d+|uint\d+_t)\s*\)', '', expr)
        if not re.fullmatch(r'[\s\d xXa-fA-F()+\-*/<>|&~%]+', expr):
            raise ValueError('not a constant: %r' % expr)
        return int(eval(expr.replace('/', '//')))

    def struct_body(self, name):
        m = re.search(r'\bstruct\s+%s\s*\{(.*?)\}\s*;' % re.escape(name), self.text, re.S)
        if not m:
            raise KeyError('struct %s not found' % name)
        return m.group(1)

    def layout(self, name):
        """(size, align, [(field, offset, size)]) of struct name."""
        if name in self._layouts:
            return self._layouts[name]
        fields, off, align = [], 0, 1
        for decl in self.struct_body(name).split(';'):
            decl = ' '.join(decl.split())
            if not decl:
                continue
            if re.search(r'\b(union|struct\s*\{)|[*:]', decl):
                raise ValueError('struct %s: cannot lay out %r' % (name, decl))
            m = re.fullmatch(r'(struct\s+\w+|\w+)\s+(.+)', decl)
            if not m:
                raise ValueError('struct %s: cannot parse %r' % (name, decl))
            typ, names = m.groups()
            if typ.startswith('struct '):
                esize, ealign, _ = self.layout(typ.split()[1])
            elif typ in SCALARS:
                esize = ealign = SCALARS[typ]
            else:
                raise ValueError('struct %s: unknown type %s' % (name, typ))
            for one in names.split(','):
                one = one.strip()
                fm = re.fullmatch(r'(\w+)((?:\[[^\]]+\])*)', one)
                if not fm:
                    raise ValueError('struct %s: cannot parse %r' % (name, one))
                n = 1
                for dim in re.findall(r'\[([^\]]+)\]', fm.group(2)):
                    n *= self.const(dim)
                off = (off + ealign - 1) // ealign * ealign
                fields.append((fm.group(1), off, esize * n))
                off += esize * n
                align = max(align, ealign)
        size = (off + align - 1) // align * align
        self._layouts[name] = (size, align, fields)
        return self._layouts[name]

    def enum(self, name):
        """[(enumerator, value)] of enum name."""
        m = re.search(r'\benum\s+%s\s*\{(.*?)\}\s*;' % re.escape(name), self.text, re.S)
        if not m:
            raise KeyError('enum %s not found' % name)
        out, v = [], 0
        for item in m.group(1).split(','):
            item = item.strip()
            if not item:
                continue
            k, _, val = item.partition('=')
            if val:
                v = self.const(val)
            out.append((k.strip(), v))
            v += 1
        return out

    def size_asserts(self):
        """{struct name: size} claimed by _Static_assert(sizeof(...) == N)."""
        return {m.group(1): int(m.group(2)) for m in re.finditer(
            r'_Static_assert\s*\(\s*sizeof\s*\(\s*struct\s+(\w+)\s*\)\s*==\s*(\d+)', self.text)}
