#!/usr/bin/env python3
"""Run a program under an OCI seccomp profile (the JSON a pod's seccompProfile names), without a
container runtime: the profile is compiled with the machine's libseccomp (through ctypes) and
loaded into this process (no_new_privs set), then the program is exec'd and inherits the filter,
as a container's process does. Test support for containment.test.ts: Chromium started under
k8s/seccomp/wdr-chromium.json must still start sandboxed.

usage: seccomp-exec.py PROFILE.json PROGRAM [ARGS...]
"""
import ctypes
import json
import os
import sys

OPS = {
    'SCMP_CMP_NE': 1,
    'SCMP_CMP_LT': 2,
    'SCMP_CMP_LE': 3,
    'SCMP_CMP_EQ': 4,
    'SCMP_CMP_GE': 5,
    'SCMP_CMP_GT': 6,
    'SCMP_CMP_MASKED_EQ': 7,
}
ARCHES = {
    'SCMP_ARCH_X86_64': b'x86_64',
    'SCMP_ARCH_X86': b'x86',
    'SCMP_ARCH_X32': b'x32',
    'SCMP_ARCH_AARCH64': b'aarch64',
    'SCMP_ARCH_ARM': b'arm',
}
EPERM = 1


class ArgCmp(ctypes.Structure):
    _fields_ = [('arg', ctypes.c_uint), ('op', ctypes.c_int), ('datum_a', ctypes.c_uint64), ('datum_b', ctypes.c_uint64)]


def action(name, errno_ret):
    if name == 'SCMP_ACT_ALLOW':
        return 0x7FFF0000
    if name == 'SCMP_ACT_ERRNO':
        return 0x00050000 | ((EPERM if errno_ret is None else errno_ret) & 0xFFFF)
    if name == 'SCMP_ACT_KILL_PROCESS':
        return 0x80000000
    if name in ('SCMP_ACT_KILL', 'SCMP_ACT_KILL_THREAD'):
        return 0x00000000
    if name == 'SCMP_ACT_TRAP':
        return 0x00030000
    if name == 'SCMP_ACT_LOG':
        return 0x7FFC0000
    raise SystemExit(f'seccomp-exec: unsupported action {name}')


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    with open(sys.argv[1]) as f:
        profile = json.load(f)
    lib = ctypes.CDLL('libseccomp.so.2', use_errno=True)
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_arch_resolve_name.restype = ctypes.c_uint32
    lib.seccomp_arch_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_arch_add.argtypes = [ctypes.c_void_p, ctypes.c_uint32]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint, ctypes.POINTER(ArgCmp)]
    lib.seccomp_load.argtypes = [ctypes.c_void_p]

    ctx = lib.seccomp_init(action(profile['defaultAction'], profile.get('defaultErrnoRet')))
    if not ctx:
        raise SystemExit('seccomp-exec: seccomp_init failed')
    for arch in profile.get('architectures', []):
        token = lib.seccomp_arch_resolve_name(ARCHES[arch])
        lib.seccomp_arch_add(ctx, token)  # -EEXIST for the native one: fine
    rules = 0
    for entry in profile.get('syscalls', []):
        act = action(entry['action'], entry.get('errnoRet'))
        args = entry.get('args') or []
        cmps = (ArgCmp * max(len(args), 1))()
        for i, a in enumerate(args):
            cmps[i] = ArgCmp(a['index'], OPS[a['op']], a['value'], a.get('valueTwo', 0))
        for name in entry['names']:
            nr = lib.seccomp_syscall_resolve_name(name.encode())
            if nr == -1:
                raise SystemExit(f'seccomp-exec: libseccomp does not know the syscall {name}')
            rc = lib.seccomp_rule_add_array(ctx, act, nr, len(args), cmps)
            # A call that does not exist on one of the profile's architectures (vm86 on x86_64) is skipped there.
            if rc == 0:
                rules += 1
            elif nr >= 0:
                raise SystemExit(f'seccomp-exec: rule for {name} refused ({rc})')
    if rules == 0 and profile.get('syscalls'):
        raise SystemExit('seccomp-exec: no rule was added')
    rc = lib.seccomp_load(ctx)
    if rc != 0:
        raise SystemExit(f'seccomp-exec: seccomp_load failed ({rc})')
    os.execv(sys.argv[2], sys.argv[2:])


main()
