// The seccomp filter of sandboxed runs: a classic BPF program, assembled here (no libseccomp), that
// bubblewrap loads (`--seccomp FD`) just before it starts the command, with no_new_privs set.
//
// Why: the namespaces keep a script away from the host's files and network, but the kernel's own
// attack surface stays. Creating a user namespace hands a script every capability inside it, which
// opens mount, netfilter and friends, the source of most container escapes; ptrace and
// process_vm_* reach other processes of the same uid; keyctl, bpf, perf_event_open and
// userfaultfd are kernel surfaces no training script needs. These fail with EPERM:
//
// - namespaces and mounts: unshare, setns, clone with any CLONE_NEW* flag, mount and the new mount
//   API (fsopen, fsconfig, fsmount, fspick, move_mount, open_tree, mount_setattr), umount2,
//   pivot_root, chroot;
// - other processes: ptrace, process_vm_readv/writev;
// - kernel surfaces: keyctl, add_key, request_key, bpf, perf_event_open, userfaultfd,
//   open_by_handle_at / name_to_handle_at (the "shocker" escape), kexec_*, *_module, iopl,
//   ioperm, swapon/off, reboot, syslog, acct, quotactl(_fd), lookup_dcookie, uselib, _sysctl,
//   nfsservctl, vhangup;
// - personality() except the query (0xffffffff) and PER_LINUX (it can turn off ASLR for an exec).
//
// clone3 fails with ENOSYS instead: its flags live in memory the filter cannot read, and glibc
// falls back to clone() on ENOSYS, whose flags it can. Another architecture's calling convention
// (i386 on x86_64, int 0x80) kills the process; x32 system calls (nr ≥ 0x40000000) fail with EPERM.
// Threads, fork, subprocess, mmap, sockets (the network namespace decides) are untouched.

type Arch = { audit: number; x32: boolean; nr: Record<string, number> };

// Numbers from the kernel's uapi headers (asm/unistd_64.h; asm-generic/unistd.h for arm64).
const X86_64: Arch = {
  audit: 0xc000003e,
  x32: true,
  nr: {
    mount: 165,
    umount2: 166,
    pivot_root: 155,
    unshare: 272,
    setns: 308,
    clone: 56,
    clone3: 435,
    ptrace: 101,
    process_vm_readv: 310,
    process_vm_writev: 311,
    keyctl: 250,
    add_key: 248,
    request_key: 249,
    bpf: 321,
    perf_event_open: 298,
    userfaultfd: 323,
    kexec_load: 246,
    kexec_file_load: 320,
    init_module: 175,
    finit_module: 313,
    delete_module: 176,
    open_by_handle_at: 304,
    name_to_handle_at: 303,
    iopl: 172,
    ioperm: 173,
    swapon: 167,
    swapoff: 168,
    reboot: 169,
    syslog: 103,
    acct: 163,
    quotactl: 179,
    quotactl_fd: 443,
    fsopen: 430,
    fsmount: 432,
    fsconfig: 431,
    fspick: 433,
    move_mount: 429,
    open_tree: 428,
    mount_setattr: 442,
    chroot: 161,
    personality: 135,
    lookup_dcookie: 212,
    uselib: 134,
    _sysctl: 156,
    nfsservctl: 180,
    vhangup: 153,
  },
};
const AARCH64: Arch = {
  audit: 0xc00000b7,
  x32: false,
  nr: {
    mount: 40,
    umount2: 39,
    pivot_root: 41,
    unshare: 97,
    setns: 268,
    clone: 220,
    clone3: 435,
    ptrace: 117,
    process_vm_readv: 270,
    process_vm_writev: 271,
    keyctl: 219,
    add_key: 217,
    request_key: 218,
    bpf: 280,
    perf_event_open: 241,
    userfaultfd: 282,
    kexec_load: 104,
    kexec_file_load: 294,
    init_module: 105,
    finit_module: 273,
    delete_module: 106,
    open_by_handle_at: 265,
    name_to_handle_at: 264,
    swapon: 224,
    swapoff: 225,
    reboot: 142,
    syslog: 116,
    acct: 89,
    quotactl: 60,
    quotactl_fd: 443,
    fsopen: 430,
    fsmount: 432,
    fsconfig: 431,
    fspick: 433,
    move_mount: 429,
    open_tree: 428,
    mount_setattr: 442,
    chroot: 51,
    personality: 92,
    lookup_dcookie: 18,
    nfsservctl: 42,
    vhangup: 58,
  },
};

/** Denied outright (EPERM); clone, clone3 and personality have their own rules. */
export const DENIED_SYSCALLS = [
  'mount',
  'umount2',
  'pivot_root',
  'unshare',
  'setns',
  'ptrace',
  'process_vm_readv',
  'process_vm_writev',
  'keyctl',
  'add_key',
  'request_key',
  'bpf',
  'perf_event_open',
  'userfaultfd',
  'kexec_load',
  'kexec_file_load',
  'init_module',
  'finit_module',
  'delete_module',
  'open_by_handle_at',
  'name_to_handle_at',
  'iopl',
  'ioperm',
  'swapon',
  'swapoff',
  'reboot',
  'syslog',
  'acct',
  'quotactl',
  'quotactl_fd',
  'fsopen',
  'fsmount',
  'fsconfig',
  'fspick',
  'move_mount',
  'open_tree',
  'mount_setattr',
  'chroot',
  'lookup_dcookie',
  'uselib',
  '_sysctl',
  'nfsservctl',
  'vhangup',
] as const;

/** CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET (CLONE_NEWTIME's bit is part of the exit signal in clone()). */
export const CLONE_NEW_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000;

const EPERM = 1;
const ENOSYS = 38;
const RET_ALLOW = 0x7fff0000;
const RET_ERRNO = 0x00050000;
const RET_KILL_PROCESS = 0x80000000;
// Classic BPF opcodes.
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const JSET_K = 0x45;
const RET_K = 0x06;
// struct seccomp_data: nr at 0, arch at 4, args[i] at 16 + 8i (the low 32 bits first: little endian).
const OFF_NR = 0;
const OFF_ARCH = 4;
const OFF_ARG0 = 16;

type Target = number | string; // a relative skip, or a label
interface Insn {
  code: number;
  k: number;
  jt?: Target;
  jf?: Target;
  label?: string;
}

/** The architecture the filter is for, or undefined where we have no syscall table (no filter then). */
export function seccompArch(arch: string = process.arch): Arch | undefined {
  return arch === 'x64' ? X86_64 : arch === 'arm64' ? AARCH64 : undefined;
}

/** The filter as bwrap reads it: an array of `struct sock_filter` (8 bytes each, little endian). */
export function seccompProgram(arch: Arch): Buffer {
  const p: Insn[] = [];
  const jeq = (k: number, jt: Target, jf: Target = 0) => p.push({ code: JEQ_K, k, jt, jf });
  p.push({ code: LD_W_ABS, k: OFF_ARCH });
  jeq(arch.audit, 0, 'kill');
  p.push({ code: LD_W_ABS, k: OFF_NR });
  if (arch.x32) p.push({ code: JGE_K, k: 0x40000000, jt: 'eperm', jf: 0 });
  jeq(arch.nr.clone, 'clone');
  jeq(arch.nr.clone3, 'enosys');
  jeq(arch.nr.personality, 'personality');
  for (const name of DENIED_SYSCALLS) {
    const nr = arch.nr[name];
    if (nr !== undefined) jeq(nr, 'eperm');
  }
  p.push({ code: RET_K, k: RET_ALLOW });
  p.push({ code: LD_W_ABS, k: OFF_ARG0, label: 'clone' });
  p.push({ code: JSET_K, k: CLONE_NEW_FLAGS, jt: 'eperm', jf: 'allow' });
  p.push({ code: LD_W_ABS, k: OFF_ARG0, label: 'personality' });
  jeq(0xffffffff, 'allow');
  jeq(0, 'allow', 'eperm');
  p.push({ code: RET_K, k: RET_ALLOW, label: 'allow' });
  p.push({ code: RET_K, k: RET_ERRNO | EPERM, label: 'eperm' });
  p.push({ code: RET_K, k: RET_ERRNO | ENOSYS, label: 'enosys' });
  p.push({ code: RET_K, k: RET_KILL_PROCESS, label: 'kill' });

  const at = new Map(p.flatMap((insn, i) => (insn.label ? [[insn.label, i] as const] : [])));
  const skip = (t: Target | undefined, i: number): number => {
    if (t === undefined) return 0;
    if (typeof t === 'number') return t;
    const target = at.get(t);
    const off = target === undefined ? -1 : target - i - 1;
    // Classic BPF jumps only forward, at most 255 instructions.
    if (off < 0 || off > 255) throw new Error(`seccomp filter: jump to ${t} out of range`);
    return off;
  };
  const out = Buffer.alloc(p.length * 8);
  p.forEach((insn, i) => {
    out.writeUInt16LE(insn.code, i * 8);
    out.writeUInt8(skip(insn.jt, i), i * 8 + 2);
    out.writeUInt8(skip(insn.jf, i), i * 8 + 3);
    out.writeUInt32LE(insn.k >>> 0, i * 8 + 4);
  });
  return out;
}

let cached: Buffer | null | undefined;
/** This machine's filter (built once), or undefined on an architecture without a table. */
export function hostSeccompProgram(): Buffer | undefined {
  if (cached === undefined) {
    const arch = seccompArch();
    cached = arch ? seccompProgram(arch) : null;
  }
  return cached ?? undefined;
}
