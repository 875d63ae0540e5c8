"""dlplan_config - the options of a training run, as one typed object.

dlplan_train.py's command line builds a TrainConfig once; everything
below the command line (the model helpers, the executor, the profiles)
takes it instead of argparse's namespace.  Standard library only.
"""

import dataclasses
import errno
import fcntl
import os
import random
import stat
import string

__all__ = ["TrainConfig", "TrainError", "atomic_write", "check_output",
           "sweep"]


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """What a run does besides the plan: steps, seed, optimizer,
    numerics and the files it writes (None: not written)."""

    steps: int = 3
    seed: int = 1
    optimizer: str = "adamw"        # "adamw" or "sgd"
    lr: float = 1e-3
    weight_decay: float = 0.01
    momentum: float = 0.0
    dtype: str = "float32"          # "float32" or "float64"
    threads: int = 1
    timeout: float = 300.0
    first_step: int = 0
    log: str = None
    trace: str = None
    dump_params: str = None

    @classmethod
    def from_namespace(cls, ns):
        """The fields of an argparse namespace that has them all."""
        return cls(**{f.name: getattr(ns, f.name)
                      for f in dataclasses.fields(cls)})


class TrainError(Exception):
    """The plan or the options cannot be run as asked (exit 2)."""


# Temporary files are named as dlplan names its own (dlplan(1), EXIT
# STATUS): NAME.tmp-XXXXXX, six letters or digits, held locked with
# flock() while they bear that name, so that dlplan's sweep and ours
# remove those of killed writers and never a live one.
_TEMP_CHARS = string.ascii_letters + string.digits
LOCK_NAME = ".dlplan.lock"
SET_NAME = ".dlplan-set"


def temp_name(name):
    """Is name (one path component) named like a temporary file of
    dlplan's (NAME.tmp-XXXXXX, or a backup NAME.old-XXXXXX)?"""
    return (len(name) >= 12 and "/" not in name and
            name[-11:-6] in (".tmp-", ".old-") and
            all(c in _TEMP_CHARS for c in name[-6:]))


def mkstemp_locked(d, base):
    """A new file d/base.tmp-XXXXXX, created exclusively (a link planted
    there is never followed) and locked with flock(): (fd, path).  A
    sweeper may remove the file between its creation and the lock; then
    another is made."""
    rnd = random.SystemRandom()
    for _ in range(64):
        tmp = os.path.join(d, "%s.tmp-%s" % (base, "".join(
            rnd.choice(_TEMP_CHARS) for _ in range(6))))
        try:
            fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL |
                         os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except FileExistsError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:
            return fd, tmp      # no flock() here: no sweeper locks it
        if os.fstat(fd).st_nlink > 0:
            return fd, tmp
        os.close(fd)
    raise FileExistsError(errno.EEXIST, "no free temporary name", tmp)


def _lock_create(path, replace):
    """A lock file linked (or, with replace, renamed) to path, locked
    before it appears: its descriptor, or None when path exists (link)."""
    d, base = os.path.split(path)
    fd, tmp = mkstemp_locked(d, base)
    try:
        os.fchmod(fd, 0o644)
        if replace:
            os.replace(tmp, path)
            tmp = None
        else:
            os.link(tmp, path)
        return fd
    except FileExistsError:
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise
    finally:
        if tmp is not None:
            os.unlink(tmp)


def lock_dir(d):
    """Take d's output lock as dlplan takes it (.dlplan.lock, held with
    flock(); a stale one, whose holder is gone, is taken over): its
    descriptor, or None when a live writer holds it.  Never waits."""
    path = os.path.join(d, LOCK_NAME)
    for _ in range(16):
        fd = _lock_create(path, False)
        if fd is not None:
            return fd
        try:
            old = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            continue
        try:
            try:
                fcntl.flock(old, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return None
            a, b = os.fstat(old), os.lstat(path)
            if (a.st_dev, a.st_ino) != (b.st_dev, b.st_ino):
                continue        # replaced meanwhile: again
            return _lock_create(path, True)
        finally:
            os.close(old)
    return None


def unlock_dir(d, fd):
    """Release lock_dir()'s lock: removed while still held."""
    try:
        os.unlink(os.path.join(d, LOCK_NAME))
    finally:
        os.close(fd)


def _unheld(d, name):
    """A descriptor of d/name, a regular file that no process holds
    locked, locked now; else None."""
    try:
        fd = os.open(os.path.join(d, name), os.O_RDONLY | os.O_NOFOLLOW |
                     os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def sweep(d):
    """Remove from directory d the temporary files (temp_name()) that no
    process holds locked, those of writers killed meanwhile, dlplan's
    and ours, under the rule dlplan follows: only while holding d's lock
    (a file of a dlplan output set is unlocked between its commit and
    the set's end, under that lock), and not while d holds the journal
    of a killed dlplan's renames (the next dlplan finishes them with
    those files).  When a live dlplan holds the lock, nothing is done:
    it sweeps itself.  A stale lock (its holder killed) is taken over and
    removed.  Returns how many files were removed."""
    if os.path.exists(os.path.join(d, SET_NAME)):
        return 0
    # The lock is taken only when there is something to remove, so that
    # a write never keeps a dlplan out of d for nothing.
    stray = [n for n in os.listdir(d) if temp_name(n) and _probe(d, n)]
    if not stray and not _probe(d, LOCK_NAME):
        return 0
    lk = lock_dir(d)
    if lk is None:
        return 0
    gone = 0
    try:
        if os.path.exists(os.path.join(d, SET_NAME)):
            return 0
        for n in stray:
            fd = _unheld(d, n)
            if fd is None:
                continue
            try:
                a = os.fstat(fd)
                b = os.lstat(os.path.join(d, n))
                if (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino):
                    os.unlink(os.path.join(d, n))
                    gone += 1
            except OSError:
                pass
            finally:
                os.close(fd)
    finally:
        unlock_dir(d, lk)
    return gone


def _probe(d, name):
    """Is d/name a regular file that no process holds locked now?"""
    fd = _unheld(d, name)
    if fd is None:
        return False
    os.close(fd)
    return True


def atomic_write(path, write, binary=False):
    """Write path as dlplan writes its outputs: write(f) fills a new
    temporary file beside it (mkstemp_locked(): an unpredictable name,
    created exclusively, so a link planted there is never followed, and
    locked while it bears that name), which is synced and renamed over
    path; on any failure it is removed and path is left as it was.  A
    link at path is replaced, not written through.  Then the temporary
    files of killed writers in that directory are removed (sweep())."""
    d, base = os.path.split(os.path.abspath(path))
    fd, tmp = mkstemp_locked(d, base)
    try:
        with os.fdopen(fd, "wb" if binary else "w",
                       **({} if binary else {"encoding": "utf-8"})) as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
            um = os.umask(0)
            os.umask(um)
            os.chmod(tmp, 0o666 & ~um)
            # Renamed while still locked: never an unlocked temporary.
            os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:
        sweep(d)
    except OSError:
        pass


def check_output(opt, path, kind="file"):
    """Refuse, before any work, an output path that cannot be written:
    TrainError naming the option.  kind "file": a file to replace or
    append to, in an existing directory; "dir": a directory, made when
    missing."""
    what = "--%s %s" % (opt, path)
    if kind == "dir":
        if os.path.exists(path) and not os.path.isdir(path):
            raise TrainError("%s: exists and is not a directory" % what)
        parent = os.path.dirname(os.path.abspath(path))
    else:
        if os.path.isdir(path):
            raise TrainError("%s: is a directory (expected a file)" % what)
        parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise TrainError("%s: no directory %s" % (what, parent))
    if not os.access(parent, os.W_OK | os.X_OK):
        raise TrainError("%s: cannot write in %s" % (what, parent))
