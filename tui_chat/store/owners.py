"""Who holds a lease: an owner string naming the host and process, and whether it is gone.

Send leases and compaction leases both name their owner ``host:pid:random``, so a lease left
by a process that died on this machine can be taken at once instead of after it expires.
"""

from __future__ import annotations

import os
import socket
import uuid


def new_owner() -> str:
    """A lease owner for this process: ``host:pid:random``."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def owner_is_dead(owner: str) -> bool:
    """True when ``owner`` names a process of this host that no longer exists."""
    host, _, rest = owner.partition(":")
    pid_text = rest.partition(":")[0]
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # someone else's live process
        return False
    return False
