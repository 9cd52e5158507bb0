"""Fetching a data set's files with the standard library, checking them, and unpacking archives safely.

Offline (or when every mirror fails) the caller gets one line that says
which file was wanted and in which folder to put it by hand.
"""
from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import tarfile
import urllib.error
import urllib.request
from typing import Optional, Sequence

__all__ = ["md5_of", "download_file", "gunzip", "extract_tar_folder"]

#: seconds to wait for a mirror before trying the next
TIMEOUT = 30


def md5_of(path: str) -> str:
    """The hex MD5 digest of a file (the checksums torchvision publishes are MD5)."""
    digest = hashlib.md5()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def download_file(urls: Sequence[str], dest: str, md5: Optional[str], where_to_put: str) -> None:
    """Save the first of ``urls`` that answers to ``dest`` (checked against ``md5``); else one RuntimeError line."""
    os.makedirs(os.path.dirname(dest) or ".", exist_ok=True)
    reasons = []
    for url in urls:
        partial = dest + ".part"
        try:
            with urllib.request.urlopen(url, timeout=TIMEOUT) as response, open(partial, "wb") as out:
                shutil.copyfileobj(response, out)
        except (urllib.error.URLError, OSError, ValueError) as err:
            reasons.append(f"{url}: {getattr(err, 'reason', err)}")
            if os.path.exists(partial):
                os.remove(partial)
            continue
        if md5 is not None and md5_of(partial) != md5:
            os.remove(partial)
            reasons.append(f"{url}: checksum mismatch")
            continue
        os.replace(partial, dest)
        return
    raise RuntimeError(f"could not download {os.path.basename(dest)} ({'; '.join(reasons)}); "
                       f"put the files by hand in {where_to_put}")


def gunzip(src: str, dest: str) -> None:
    """Decompress ``src`` (a .gz file) to ``dest``."""
    with gzip.open(src, "rb") as f_in, open(dest + ".part", "wb") as f_out:
        shutil.copyfileobj(f_in, f_out)
    os.replace(dest + ".part", dest)


def extract_tar_folder(archive: str, folder: str, dest_root: str) -> None:
    """Write the regular files under ``folder/`` in a tar archive into ``dest_root``, nothing else.

    Members are read and written one by one rather than with ``extractall``,
    so a member named ``../x``, an absolute path, a link or a device file in a
    downloaded archive is skipped and can never land outside ``dest_root``.
    """
    with tarfile.open(archive, "r:*") as tar:
        for member in tar.getmembers():
            name = os.path.normpath(member.name)
            parts = name.split(os.sep)
            if not member.isfile() or os.path.isabs(name) or parts[0] != folder or ".." in parts:
                continue
            target = os.path.join(dest_root, name)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            source = tar.extractfile(member)
            with source, open(target, "wb") as out:
                shutil.copyfileobj(source, out)
