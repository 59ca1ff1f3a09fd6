// The seccomp filter of the OS sandbox, as the classic-BPF program bwrap loads (`--seccomp FD`).
// Namespaces leave one door open: a Unix socket on the (read-only) real file system can still be
// connected to (a database's socket, another program's control socket). The filter closes it by
// refusing socket(AF_UNIX, …) to the whole tree (socketpair, which pipes between a parent and
// its children use, still works), refuses io_uring (its own socket/connect operations bypass
// seccomp), and refuses every system call of a foreign ABI (x32, 32-bit) where the checks below
// would not apply.
import { arch } from 'node:os';

const BPF_LD_W_ABS = 0x20;
const BPF_JEQ_K = 0x15;
const BPF_JGE_K = 0x35;
const BPF_RET_K = 0x06;
const RET_ALLOW = 0x7fff0000;
const RET_ERRNO = 0x00050000;
const EACCES = 13;
const AF_UNIX = 1;
/** Offsets in struct seccomp_data: nr, arch, then args[0] (low 32 bits on little-endian). */
const OFF_NR = 0;
const OFF_ARCH = 4;
const OFF_ARG0 = 16;

const ABIS: Record<string, { audit: number; socket: number; ioUringSetup: number; x32?: boolean }> = {
  x64: { audit: 0xc000003e, socket: 41, ioUringSetup: 425, x32: true },
  arm64: { audit: 0xc00000b7, socket: 198, ioUringSetup: 425 },
};

/** True when this machine's ABI has a filter (the sandbox runs without one elsewhere and says so). */
export function seccompSupported(): boolean {
  return ABIS[arch()] !== undefined;
}

function insn(code: number, jt: number, jf: number, k: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeUInt16LE(code, 0);
  b.writeUInt8(jt, 2);
  b.writeUInt8(jf, 3);
  b.writeUInt32LE(k >>> 0, 4);
  return b;
}

/** The filter program for this machine's ABI (8 bytes per instruction), or undefined. */
export function seccompProgram(): Buffer | undefined {
  const abi = ABIS[arch()];
  if (!abi) return undefined;
  const deny = RET_ERRNO | EACCES;
  // Indices: 0 ld arch; 1 jeq native; 2 ret deny (foreign ABI); 3 ld nr; 4 x32 check; 5 socket?;
  // 6 io_uring_setup?; 7 allow; 8 ld arg0; 9 AF_UNIX?; 10 allow; 11 deny.
  const program = [
    insn(BPF_LD_W_ABS, 0, 0, OFF_ARCH),
    insn(BPF_JEQ_K, 1, 0, abi.audit),
    insn(BPF_RET_K, 0, 0, deny),
    insn(BPF_LD_W_ABS, 0, 0, OFF_NR),
    // x32 system calls carry bit 30 in the number: refused (jump to the final deny).
    abi.x32 ? insn(BPF_JGE_K, 6, 0, 0x40000000) : insn(BPF_JEQ_K, 6, 0, 0xffffffff),
    insn(BPF_JEQ_K, 2, 0, abi.socket),
    insn(BPF_JEQ_K, 4, 0, abi.ioUringSetup),
    insn(BPF_RET_K, 0, 0, RET_ALLOW),
    insn(BPF_LD_W_ABS, 0, 0, OFF_ARG0),
    insn(BPF_JEQ_K, 1, 0, AF_UNIX),
    insn(BPF_RET_K, 0, 0, RET_ALLOW),
    insn(BPF_RET_K, 0, 0, deny),
  ];
  return Buffer.concat(program);
}
