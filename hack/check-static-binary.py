#!/usr/bin/env python3
"""Checks that a Linux plugin binary is a stripped, statically linked ELF of at most 15 MiB.

Usage: hack/check-static-binary.py BINARY [MAX_MIB]

Static: no PT_INTERP program header (a dynamically linked executable names its loader there).
Stripped: no .symtab section. Exits 1 naming each problem; reads the ELF itself (no `file`).
"""
import struct
import sys

PT_INTERP = 3
SHT_SYMTAB = 2


def problems(path, max_mib):
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF":
        return [f"{path} is not an ELF file"]
    is64 = data[4] == 2
    endian = "<" if data[5] == 1 else ">"
    if is64:
        phoff, shoff = struct.unpack_from(endian + "QQ", data, 0x20)
        phentsize, phnum, shentsize, shnum = struct.unpack_from(endian + "HHHH", data, 0x36)
    else:
        phoff, shoff = struct.unpack_from(endian + "II", data, 0x1C)
        phentsize, phnum, shentsize, shnum = struct.unpack_from(endian + "HHHH", data, 0x2A)
    found = []
    for i in range(phnum):
        (p_type,) = struct.unpack_from(endian + "I", data, phoff + i * phentsize)
        if p_type == PT_INTERP:
            found.append(f"{path} is dynamically linked (it has a PT_INTERP program header)")
    for i in range(shnum):
        (sh_type,) = struct.unpack_from(endian + "I", data, shoff + i * shentsize + 4)
        if sh_type == SHT_SYMTAB:
            found.append(f"{path} is not stripped (it has a .symtab section)")
            break
    size = len(data)
    if size > max_mib * 1024 * 1024:
        found.append(f"{path} is {size / 1048576:.1f} MiB, over the {max_mib} MiB limit")
    return found


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    path = sys.argv[1]
    max_mib = float(sys.argv[2]) if len(sys.argv) == 3 else 15
    found = problems(path, max_mib)
    for p in found:
        print(f"check-static-binary: {p}", file=sys.stderr)
    if found:
        sys.exit(1)
    size = len(open(path, "rb").read()) / 1048576
    print(f"{path}: static, stripped, {size:.1f} MiB")


if __name__ == "__main__":
    main()
