/**
 * The seccomp filter a sandbox without network runs its commands under: no
 * unix-domain socket can be made, so none can connect to a socket of the
 * host (a Docker or D-Bus socket, an SSH agent) through the read-only file
 * system, where connecting is not a write and the mounts do not stop it.
 * `socketpair` of stream and sequenced-packet sockets stays allowed: their
 * two ends reach nothing else.
 *
 * The program is classic BPF, assembled here: bubblewrap loads a compiled
 * program from a descriptor (`--seccomp`; its standard input here, so no
 * program of the host's runs between), and libseccomp, which compiles
 * them, has no JavaScript binding that runs on both runtimes without native
 * code. The program is short enough to read whole (see
 * {@link unixSocketFilter}).
 *
 * @module
 */

/** What the filter needs of an architecture: its audit tag and syscall numbers. */
interface Architecture {
  /** `AUDIT_ARCH_*`, which the kernel puts in `seccomp_data.arch`. */
  readonly audit: number;
  /** The number of `socket(2)`. */
  readonly socket: number;
  /** The number of `socketpair(2)`. */
  readonly socketpair: number;
  /** Syscall numbers at or past this are another ABI on the same architecture (x32); none: no such ABI. */
  readonly foreignFrom: number | null;
}

/** The architectures the filter is written for, by `process.arch`. */
const ARCHITECTURES: Readonly<Record<string, Architecture>> = {
  x64: { audit: 0xc000003e, socket: 41, socketpair: 53, foreignFrom: 0x40000000 },
  arm64: { audit: 0xc00000b7, socket: 198, socketpair: 199, foreignFrom: null },
};

/** `io_uring_setup`, `io_uring_enter`, `io_uring_register`: one number on every architecture. */
const IO_URING = [425, 426, 427] as const;
/** `AF_UNIX`. */
const AF_UNIX = 1;
/** `AF_VSOCK`: the host's and the hypervisor's services in a virtual machine; no network namespace separates them. */
const AF_VSOCK = 40;
/** Socket types (the low bits of `type`; `SOCK_NONBLOCK` and `SOCK_CLOEXEC` are flags above them). */
const SOCK_TYPE_MASK = 0xf;
const SOCK_STREAM = 1;
const SOCK_SEQPACKET = 5;
/** `EACCES`: what `socket(2)` returns when the socket's type is not permitted. */
const EACCES = 13;
/** `ENOSYS`: io_uring is not there (programs fall back to plain system calls). */
const ENOSYS = 38;

/** BPF opcodes and seccomp return values used below (linux/filter.h, linux/seccomp.h). */
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const AND_K = 0x54;
const RET_K = 0x06;
const RET_ALLOW = 0x7fff0000;
const RET_KILL_PROCESS = 0x80000000;
const RET_ERRNO = 0x00050000;
/** Offsets in `struct seccomp_data`: the syscall number, the architecture, the first two arguments' low words (little-endian). */
const NR = 0;
const ARCH = 4;
const ARG0_LOW = 16;
const ARG1_LOW = 24;

/** Whether {@link unixSocketFilter} has a program for `arch` (a `process.arch` value). */
export function filterSupports(arch: string): boolean {
  return Object.hasOwn(ARCHITECTURES, arch);
}

/**
 * The compiled filter for `arch` (a `process.arch` value), as bubblewrap
 * reads it: `struct sock_filter` entries, native byte order (both
 * architectures are little-endian). It
 * - kills a process that makes a system call of another ABI (a 32-bit
 *   program on x86-64, the x32 ABI): those have other numbers, and `socketcall`;
 * - fails `socket(AF_UNIX, …)` and `socket(AF_VSOCK, …)` with `EACCES`, and `socketpair` of datagram
 *   sockets (which can be connected again, or sent to, at any path);
 * - fails the io_uring calls with `ENOSYS` (io_uring can make sockets
 *   without the `socket` system call);
 * - allows everything else.
 *
 * @throws {RangeError} for an architecture it has no program for.
 */
export function unixSocketFilter(arch: string): Uint8Array {
  const target = ARCHITECTURES[arch];
  if (target === undefined) throw new RangeError(`no seccomp filter for the ${arch} architecture`);
  // Instructions with jumps to labels, resolved below into the offsets BPF counts (instructions
  // skipped).
  type Step = [code: number, k: number, ifTrue?: string, ifFalse?: string] | string;
  const steps: Step[] = [
    [LD_W_ABS, ARCH],
    [JEQ_K, target.audit, undefined, "kill"],
    [LD_W_ABS, NR],
    ...(target.foreignFrom === null ? [] : [[JGE_K, target.foreignFrom, "kill"] as Step]),
    ...IO_URING.map((call): Step => [JEQ_K, call, "nosys"]),
    // A socket pair's two ends reach nothing else, unless its sockets are datagram ones: those
    // can be connected again, or sent to, at any path.
    [JEQ_K, target.socketpair, undefined, "socket"],
    [LD_W_ABS, ARG1_LOW],
    [AND_K, SOCK_TYPE_MASK],
    [JEQ_K, SOCK_STREAM, "allow"],
    [JEQ_K, SOCK_SEQPACKET, "allow", "deny"],
    "socket",
    [JEQ_K, target.socket, undefined, "allow"],
    [LD_W_ABS, ARG0_LOW],
    [JEQ_K, AF_UNIX, "deny"],
    [JEQ_K, AF_VSOCK, "deny", "allow"],
    "deny",
    [RET_K, RET_ERRNO | EACCES],
    "nosys",
    [RET_K, RET_ERRNO | ENOSYS],
    "kill",
    [RET_K, RET_KILL_PROCESS],
    "allow",
    [RET_K, RET_ALLOW],
  ];
  const at = new Map<string, number>();
  const program: [number, number, string | undefined, string | undefined][] = [];
  for (const step of steps) {
    if (typeof step === "string") at.set(step, program.length);
    else program.push([step[0], step[1], step[2], step[3]]);
  }
  const bytes = new Uint8Array(program.length * 8);
  const view = new DataView(bytes.buffer);
  program.forEach(([code, k, ifTrue, ifFalse], i) => {
    // A jump not given goes to the next instruction.
    const offset = (label: string | undefined) => label === undefined ? 0 : at.get(label)! - i - 1;
    view.setUint16(i * 8, code, true);
    view.setUint8(i * 8 + 2, offset(ifTrue));
    view.setUint8(i * 8 + 3, offset(ifFalse));
    view.setUint32(i * 8 + 4, k, true);
  });
  return bytes;
}
