"""Workspace: list, read and write files in the operator's --workspace folder, and run commands there.

`workspace_toolset(root, strict=..., sandbox=...)` builds the toolset for one folder (the deployment plugs it
into the member profile where it is published: stdio, or HTTP with --workspace-http, and passes the sandbox
its settings describe). `run_shell` and `run_python` run inside that sandbox. `write_file`, `run_shell` and
`run_python` are destructive, so they are confirmed like every destructive tool.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Collection
from pathlib import Path, PurePosixPath
from typing import Annotated, Literal

import anyio.to_thread
from pydantic import BaseModel, Field

from toolsets.core.annotations import READ_ONLY, ToolHints
from toolsets.core.errors import ErrorCode, ToolError
from toolsets.core.toolset import Toolset
from toolsets.extensions.workspace import shell
from toolsets.extensions.workspace.paths import Workspace
from toolsets.extensions.workspace.questions import shell_question, write_question
from toolsets.infra.sandbox import SandboxConfig, WorkspaceSandbox

WORKSPACE_TOOLSET = "workspace"
WORKSPACE_TOOLS = frozenset({"list_files", "read_file", "write_file", "run_shell", "run_python"})
MAX_ENTRIES = 1000
DEFAULT_READ_BYTES = 200_000
MAX_READ_BYTES = 1024 * 1024
MAX_WRITE_BYTES = 10 * 1024 * 1024


class FileEntry(BaseModel):
    path: str = Field(description="Relative to the workspace folder")
    type: Literal["file", "dir", "symlink", "other"] = Field(description="What the entry is")
    size: int | None = Field(default=None, description="Bytes, for files")


class FileList(BaseModel):
    path: str = Field(description="The folder listed, relative to the workspace")
    entries: list[FileEntry] = Field(description="Sorted by path")
    truncated: bool = Field(description=f"True when there were more than {MAX_ENTRIES} entries")
    unlisted: int = Field(
        default=0,
        description="Entries left out because their names are not valid UTF-8 (they cannot be named in a tool "
        "call); rename them with a shell command to reach them",
    )


class FileContent(BaseModel):
    path: str = Field(description="The file read, relative to the workspace")
    content: str = Field(description="The text (UTF-8; undecodable bytes replaced)")
    size: int = Field(description="The file's size in bytes")
    truncated: bool = Field(description="True when only the first max_bytes were read")


class FileWritten(BaseModel):
    path: str = Field(description="The file written, relative to the workspace")
    bytes_written: int = Field(description="Bytes written")
    created: bool = Field(description="True when the file did not exist before")


class ShellOutput(BaseModel):
    exit_code: int | None = Field(description="The command's exit status (None when it was stopped at its time limit)")
    stdout: str = Field(description=f"Standard output (at most {shell.OUTPUT_CAP} bytes)")
    stderr: str = Field(description=f"Standard error (at most {shell.OUTPUT_CAP} bytes)")
    timed_out: bool = Field(description="True when the command was killed at its time limit")
    truncated: bool = Field(description="True when output beyond the cap was dropped")


def workspace_toolset(
    root: Path,
    *,
    strict: bool = False,
    sandbox: WorkspaceSandbox | None = None,
    allowed_programs: Collection[str] = (),
) -> Toolset:
    """The toolset for the folder `root`. `sandbox` runs the commands (by default a bubblewrap sandbox without
    network); `allowed_programs` is strict mode's allow-list (empty: the built-in one)."""
    workspace = Workspace(root, strict=strict)
    runner = sandbox if sandbox is not None else WorkspaceSandbox(SandboxConfig(workspace.root))
    allowed = frozenset(allowed_programs or shell.DEFAULT_ALLOWED_PROGRAMS)
    toolset = Toolset(WORKSPACE_TOOLSET)

    @toolset.tool(hints=READ_ONLY)
    async def list_files(
        path: Annotated[str, Field(description="A folder relative to the workspace ('.' is the workspace)")] = ".",
        recursive: Annotated[bool, Field(description="Also list the folders inside, all the way down")] = False,
    ) -> FileList:
        """List the files and folders in the workspace folder (or one of its folders)."""
        relative = workspace.inside(path)
        entries, truncated, unlisted = await anyio.to_thread.run_sync(_list, workspace, relative, recursive)
        return FileList(path=str(relative), entries=entries, truncated=truncated, unlisted=unlisted)

    @toolset.tool(hints=READ_ONLY)
    async def read_file(
        path: Annotated[str, Field(description="A file relative to the workspace, e.g. 'notes/todo.md'")],
        max_bytes: Annotated[
            int, Field(ge=1, le=MAX_READ_BYTES, description="Read at most this many bytes")
        ] = DEFAULT_READ_BYTES,
    ) -> FileContent:
        """Read a text file in the workspace folder."""
        relative = workspace.inside(path)
        data, size = await anyio.to_thread.run_sync(_read, workspace, relative, max_bytes)
        return FileContent(
            path=str(relative), content=data.decode(errors="replace"), size=size, truncated=size > len(data)
        )

    @toolset.tool(hints=ToolHints(destructive=True), question=write_question)
    async def write_file(
        path: Annotated[str, Field(description="A file relative to the workspace; missing folders are created")],
        content: Annotated[str, Field(description="The text to write (UTF-8)")],
        append: Annotated[bool, Field(description="Add to the end instead of replacing the file")] = False,
    ) -> FileWritten:
        """Write (or append to) a text file in the workspace folder. Replaces the file unless append is true."""
        data = content.encode()
        if len(data) > MAX_WRITE_BYTES:
            raise ToolError(f"The content is larger than {MAX_WRITE_BYTES} bytes.", code=ErrorCode.VALIDATION)
        relative = workspace.inside(path)
        created = await anyio.to_thread.run_sync(_write, workspace, relative, data, append)
        return FileWritten(path=str(relative), bytes_written=len(data), created=created)

    @toolset.tool(hints=ToolHints(destructive=True, open_world=True), question=shell_question)
    async def run_shell(
        command: Annotated[
            str, Field(description="One shell command, run in the workspace folder (/workspace), e.g. 'ls -la'")
        ],
        timeout_s: Annotated[
            float,
            Field(gt=0, le=shell.MAX_TIMEOUT_S, description="Seconds before the command is killed (at most 120)"),
        ] = shell.DEFAULT_TIMEOUT_S,
    ) -> ShellOutput:
        """Run a shell command in the workspace folder, inside a sandbox that sees only that folder, and return
        its exit code and output. Dangerous commands (rm -rf, sudo, shutdown, ...) are refused."""
        result = await shell.run(command, runner, strict=workspace.strict, timeout_s=timeout_s, allowed=allowed)
        return _shell_output(result)

    @toolset.tool(hints=ToolHints(destructive=True, open_world=True))
    async def run_python(
        code: Annotated[
            str,
            Field(
                description="Python 3 source, run with `python3 -I -c` in the workspace folder (/workspace); "
                "print what you want back"
            ),
        ],
        timeout_s: Annotated[
            float,
            Field(gt=0, le=shell.MAX_TIMEOUT_S, description="Seconds before the program is killed (at most 120)"),
        ] = shell.DEFAULT_TIMEOUT_S,
    ) -> ShellOutput:
        """Run a Python program in the workspace folder, inside a sandbox that sees only that folder, and return
        its exit code and output (the system's python3 and its standard library)."""
        result = await shell.run_python(code, runner, strict=workspace.strict, timeout_s=timeout_s, allowed=allowed)
        return _shell_output(result)

    return toolset


def _shell_output(result: shell.RunResult) -> ShellOutput:
    return ShellOutput(
        exit_code=result.exit_code,
        stdout=result.stdout,
        stderr=result.stderr,
        timed_out=result.timed_out,
        truncated=result.truncated,
    )


def _kind(mode: int) -> Literal["file", "dir", "symlink", "other"]:
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISDIR(mode):
        return "dir"
    return "file" if stat.S_ISREG(mode) else "other"


def _list(workspace: Workspace, relative: PurePosixPath, recursive: bool) -> tuple[list[FileEntry], bool, int]:
    entries: list[FileEntry] = []
    unlisted = 0
    with _os_errors(relative), workspace.directory(relative) as fd:
        walk = os.fwalk(".", dir_fd=fd, follow_symlinks=False) if recursive else [(".", [], [], fd)]
        for folder, _, _, folder_fd in walk:
            if not _utf8(folder):
                continue  # its own entry was counted where it was found
            for entry in os.scandir(folder_fd):
                if not _utf8(entry.name):  # undecodable bytes (surrogate escapes) would break the JSON reply
                    unlisted += 1
                    continue
                info = entry.stat(follow_symlinks=False)
                kind = _kind(info.st_mode)
                shown = relative / folder / entry.name if folder != "." else relative / entry.name
                entries.append(FileEntry(path=str(shown), type=kind, size=info.st_size if kind == "file" else None))
                if len(entries) > MAX_ENTRIES:
                    return sorted(entries[:MAX_ENTRIES], key=lambda e: e.path), True, unlisted
    return sorted(entries, key=lambda e: e.path), False, unlisted


def _utf8(name: str) -> bool:
    """A file name the OS gave as text: false when it held bytes that are not UTF-8 (decoded as lone surrogates)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _read(workspace: Workspace, relative: PurePosixPath, max_bytes: int) -> tuple[bytes, int]:
    with _os_errors(relative), workspace.file(relative, os.O_RDONLY | os.O_NONBLOCK) as fd:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ToolError(f"'{relative}' is not a regular file.", code=ErrorCode.VALIDATION)
        chunks: list[bytes] = []
        remaining = max_bytes
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks), info.st_size


def _write(workspace: Workspace, relative: PurePosixPath, data: bytes, append: bool) -> bool:
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC)
    with _os_errors(relative), workspace.directory(relative.parent, create=True) as parent:
        existed = _exists(relative.name, parent)
    with _os_errors(relative), workspace.file(relative, flags, create_parents=True) as fd:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ToolError(f"'{relative}' is not a regular file.", code=ErrorCode.VALIDATION)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    return not existed


def _exists(name: str, dir_fd: int) -> bool:
    try:
        os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


class _os_errors:  # noqa: N801 - used as a context manager, read like one
    """OS errors as refusals the model can act on."""

    def __init__(self, relative: PurePosixPath) -> None:
        self.relative = relative

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        if exc is None or not isinstance(exc, OSError):
            return
        where = f"'{self.relative}'"
        if isinstance(exc, FileNotFoundError):
            raise ToolError(
                f"{where} does not exist in the workspace; list_files shows what does.", code=ErrorCode.NOT_FOUND
            ) from None
        if isinstance(exc, NotADirectoryError):
            raise ToolError(f"A part of {where} is a file, not a folder.", code=ErrorCode.VALIDATION) from None
        if isinstance(exc, IsADirectoryError):
            raise ToolError(f"{where} is a folder, not a file.", code=ErrorCode.VALIDATION) from None
        if isinstance(exc, PermissionError):
            raise ToolError(f"{where}: permission denied.", code=ErrorCode.FORBIDDEN) from None
        raise ToolError(f"{where}: {exc.strerror or exc}.") from None
