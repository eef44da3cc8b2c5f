#!/usr/bin/env python3
"""The biggest functions of a wasm module that still has its name section (what `twiggy top` lists),
and the code grouped by the first two segments of each function's Rust path.

    scripts/wasm-top.py MODULE.wasm [N]

scripts/bench.sh runs it on the console's main module and its session part as wasm-split leaves
them (before wasm-bindgen and wasm-opt, which drop the names; sizes are of the unoptimized bodies).
"""
import collections
import re
import sys


def leb(b, i):
    r = s = 0
    while True:
        x = b[i]
        i += 1
        r |= (x & 0x7F) << s
        s += 7
        if x < 0x80:
            return r, i


def functions(path):
    """(body size, name) of every function defined in the module."""
    b = open(path, 'rb').read()
    i = 8
    imported = 0
    names = {}
    sizes = []
    while i < len(b):
        sid = b[i]
        size, i = leb(b, i + 1)
        end = i + size
        if sid == 2:  # imports: functions among them take the first indices
            n, j = leb(b, i)
            for _ in range(n):
                for _ in range(2):
                    ln, j = leb(b, j)
                    j += ln
                kind = b[j]
                j += 1
                if kind == 0:
                    _, j = leb(b, j)
                    imported += 1
                elif kind == 1:
                    j += 1
                    flags, j = leb(b, j)
                    _, j = leb(b, j)
                    if flags & 1:
                        _, j = leb(b, j)
                elif kind == 2:
                    flags, j = leb(b, j)
                    _, j = leb(b, j)
                    if flags & 1:
                        _, j = leb(b, j)
                elif kind == 3:
                    j += 2
                else:
                    _, j = leb(b, j)
                    _, j = leb(b, j)
        elif sid == 10:  # code
            n, j = leb(b, i)
            for _ in range(n):
                ln, j = leb(b, j)
                sizes.append(ln)
                j += ln
        elif sid == 0:  # custom: the name section's function names
            ln, j = leb(b, i)
            if b[j:j + ln] == b'name':
                j += ln
                while j < end:
                    sub = b[j]
                    sl, j = leb(b, j + 1)
                    if sub == 1:
                        n, k = leb(b, j)
                        for _ in range(n):
                            idx, k = leb(b, k)
                            ln2, k = leb(b, k)
                            names[idx] = b[k:k + ln2].decode('utf8', 'replace')
                            k += ln2
                    j += sl
        i = end
    return [(sz, names.get(imported + k, f'func[{imported + k}]')) for k, sz in enumerate(sizes)]


def demangle_path(name):
    """The path segments of a legacy-mangled Rust symbol (`_ZN…E`), else the name."""
    if not name.startswith('_ZN'):
        return [name]
    s, out = name[3:], []
    while s and s[0].isdigit():
        n = re.match(r'\d+', s).group(0)
        s = s[len(n):]
        out.append(s[:int(n)])
        s = s[int(n):]
    return out


def readable(seg):
    return (seg.replace('$LT$', '<').replace('$GT$', '>').replace('$u20$', ' ').replace('$RF$', '&')
            .replace('$u7b$', '{').replace('$u7d$', '}').replace('$C$', ',').replace('..', '::').lstrip('_'))


def group(name):
    segs = demangle_path(name)
    first = readable(segs[0])
    if first.startswith('<'):
        # An impl: the implementing type's path.
        t = re.sub(r'^<(impl |&mut |&)?', '', first)
        return '<' + '::'.join(re.split(r'[ <>,]', t)[0].split('::')[:2])
    if len(segs) == 1:
        # Unmangled (wasm-bindgen's glue, v0 symbols): without the numbers and hashes that vary.
        return re.sub(r'(_?[0-9a-f]{8,}|\d+)', '#', first)[:48]
    return '::'.join(readable(s) for s in segs[:2])


def main():
    path = sys.argv[1]
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    rows = sorted(functions(path), reverse=True)
    total = sum(sz for sz, _ in rows)
    print(f'{path}: {len(rows)} functions, {total} bytes of code')
    print(f'top {top} functions (bytes, share of the code):')
    for sz, name in rows[:top]:
        print(f'  {sz:7d} {100 * sz / total:5.1f}%  {"::".join(readable(s) for s in demangle_path(name))[:140]}')
    groups = collections.Counter()
    for sz, name in rows:
        groups[group(name)] += sz
    print('by path (first two segments):')
    for g, sz in groups.most_common(top):
        print(f'  {sz:7d} {100 * sz / total:5.1f}%  {g}')


if __name__ == '__main__':
    main()
