"""The seccomp filter of every process that runs a program or a test, built with libseccomp.

Default: allow. Refused with ``EPERM`` (``ENOSYS`` for ``clone3``, whose flags a filter cannot
read, so that the C library falls back to ``clone``): what no test needs and what would let a
cell leave its sandbox or touch the host: new namespaces (``unshare``, ``setns``, ``clone`` with a
``CLONE_NEW*`` flag: a user namespace would give it the capabilities to mount a tmpfs outside its
memory limit), mounting, the kernel keyrings (they outlive a cell), tracing and reading other
processes' memory, BPF, performance counters, ``userfaultfd``, ``io_uring`` (whose operations
bypass this filter), modules, ``kexec``, reboot, swap, clocks, raw I/O ports, handle-based opens,
stealing another process's file descriptors, and typing into a terminal (``TIOCSTI``).

The filter is installed by the worker in the process that then ``exec``\\ s the zygote (it needs
``no_new_privs``, which the worker sets), so every process the zygote forks has it from birth.
Bindings: libseccomp's own Python module when installed, else ``pyseccomp`` (the same API over
``ctypes``). Where neither or the library is missing, :func:`install` raises and the sandbox
runs without a filter, with a warning.
"""

from __future__ import annotations

import errno

__all__ = ["DENIED", "install", "available"]

DENIED = (
    "unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "fsopen", "fsmount", "fsconfig",
    "fspick", "move_mount", "open_tree", "mount_setattr",
    "keyctl", "add_key", "request_key",
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd", "process_madvise",
    "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load", "reboot",
    "swapon", "swapoff", "acct", "syslog", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
    "iopl", "ioperm", "quotactl", "open_by_handle_at", "name_to_handle_at", "lookup_dcookie",
    "fanotify_init", "personality", "vhangup", "sethostname", "setdomainname",
    "mbind", "migrate_pages", "move_pages", "set_mempolicy",
)
CLONE_NEW_FLAGS = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000,
                   0x00000080)  # NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET, NEWTIME
TIOCSTI = 0x5412


def _bindings():
    try:
        import seccomp  # libseccomp's own bindings (Debian: python3-seccomp)

        return seccomp
    except ImportError:
        import pyseccomp  # the same API over ctypes

        return pyseccomp


def available() -> str | None:
    """None when a filter can be built here, else why not."""
    try:
        _bindings()
    except Exception as exc:  # ImportError, or RuntimeError: libseccomp.so not found
        return f"seccomp unavailable ({type(exc).__name__}: {exc})"
    return None


def install() -> int:
    """Load the filter into the calling process (and its future children); returns the number of
    rules. Raises on any failure (the caller decides what to degrade to)."""
    sc = _bindings()
    f = sc.SyscallFilter(sc.ALLOW)
    n = 0
    for name in DENIED:
        try:
            f.add_rule(sc.ERRNO(errno.EPERM), name)
            n += 1
        except (RuntimeError, OSError, ValueError):
            pass  # not a system call of this architecture / kernel headers
    for flag in CLONE_NEW_FLAGS:
        f.add_rule(sc.ERRNO(errno.EPERM), "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
        n += 1
    try:
        f.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
        n += 1
    except (RuntimeError, OSError, ValueError):
        pass
    f.add_rule(sc.ERRNO(errno.EPERM), "ioctl", sc.Arg(1, sc.EQ, TIOCSTI))
    n += 1
    f.load()
    return n
