"""The examples in examples/ run as a newcomer runs them, against a real server: the Python clients over stdio
(a subprocess) and over HTTP (`--transport http --port 0` on 127.0.0.1, with a bearer token), the TypeScript
client over both via node, and the LangGraph agent in-process on `langchain.agents.create_agent`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.test_typescript_hosts import TS_DIR, _need, _node_env, node_home
from tests.support import SECRET, TRULOOP, child_env, spawn_http_server, token

pytestmark = pytest.mark.slow
__all__ = ["node_home"]  # a fixture used here, defined with the TypeScript host tests

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
RUN_TIMEOUT = 90
DAY = {"date": "2026-03-10", "day_of_week": "Tuesday", "iso_weekday": 2}


def _python(example: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "python" / example), *args],
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        env=child_env(**env),
    )
    assert "Deprecat" not in done.stderr, done.stderr  # the examples stay on current APIs
    return done


def _lines(stdout: str) -> dict[str, str]:
    """`step: rest` lines by step."""
    return dict(line.split(": ", 1) for line in stdout.splitlines() if ": " in line)


def _check_client_output(stdout: str, confirmed: bool) -> None:
    lines = _lines(stdout)
    assert "get_day_of_week" in lines["tools"] and "forget_memory" in lines["tools"]
    assert json.loads(lines["get_day_of_week"]) == DAY
    assert "YYYY-MM-DD" in lines["get_day_of_week (a bad date)"]
    assert lines["asked"].startswith("Forget the memory 'Prefers window seats on trains'? This cannot be undone.")
    if confirmed:
        assert json.loads(lines["forget_memory"]) == {"memory_id": lines["save_memory"], "forgotten": True}
    else:
        assert lines["forget_memory"].startswith("error: Cancelled")


@pytest.mark.parametrize("confirmed", [True, False])
def test_python_stdio_client(tmp_path: Path, confirmed: bool) -> None:
    flags = ["--server", TRULOOP, "--data-dir", str(tmp_path / "data")]
    done = _python("stdio_client.py", *flags, *([] if confirmed else ["--decline"]))
    assert done.returncode == 0, done.stderr
    _check_client_output(done.stdout, confirmed)


def test_python_http_client(tmp_path: Path) -> None:
    env = child_env(TRULOOP_JWT_SECRET=SECRET)
    with spawn_http_server("--data-dir", str(tmp_path / "data"), env=env) as base:
        done = _python("http_client.py", "--url", f"{base}/mcp", TRULOOP_TOKEN=token("alice"))
        assert done.returncode == 0, done.stderr
        lines = _lines(done.stdout)
        assert json.loads(lines["get_day_of_week"]) == DAY
        assert json.loads(lines["get_user_profile"])["id"] == "alice"

        refused = _python("http_client.py", "--url", f"{base}/mcp")  # no token: one line, no traceback
        assert refused.returncode == 1 and "TRULOOP_TOKEN" in refused.stderr
        assert "Traceback" not in refused.stderr


@pytest.mark.parametrize("confirmed", [True, False])
def test_langgraph_agent_on_create_agent(tmp_path: Path, confirmed: bool) -> None:
    done = _python("langgraph_agent.py", "--data-dir", str(tmp_path / "data"), *([] if confirmed else ["--decline"]))
    assert done.returncode == 0, done.stderr
    lines = _lines(done.stdout)
    assert lines["save_memory"].startswith("success: ") and lines["search_memories"].startswith("success: ")
    assert lines["asked"].startswith("Forget the memory 'Prefers window seats on trains'?")
    assert lines["forget_memory"].startswith("success: " if confirmed else "error: Cancelled")
    assert "create_agent" in (EXAMPLES / "python" / "langgraph_agent.py").read_text()


@pytest.mark.parametrize("confirmed", [True, False])
def test_pydantic_ai_agent_over_stdio(tmp_path: Path, confirmed: bool) -> None:
    flags = ["--server", TRULOOP, "--data-dir", str(tmp_path / "data"), *([] if confirmed else ["--decline"])]
    done = _python("pydantic_ai_agent.py", *flags)
    assert done.returncode == 0, done.stderr
    lines = _lines(done.stdout)
    assert json.loads(lines["search_knowledge_base"])["documents_indexed"] >= 3  # the --demo documents
    memory_id = json.loads(lines["save_memory"])["id"]
    assert lines["asked"].startswith("Forget the memory '한강 회의실을 좋아한다'? This cannot be undone.")
    if confirmed:
        assert json.loads(lines["forget_memory"]) == {"memory_id": memory_id, "forgotten": True}
    else:
        assert json.loads(lines["forget_memory"])["error"].startswith("Cancelled")
    assert lines["agent"].startswith("Done: ")


def test_pydantic_ai_agent_names_the_missing_provider_package(tmp_path: Path) -> None:
    done = _python("pydantic_ai_agent.py", "--data-dir", str(tmp_path / "data"), "--model", "openai:gpt-5-mini")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "openai" in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_langgraph_agent_names_the_missing_provider_package(tmp_path: Path) -> None:
    """A model whose provider package is not installed: one line naming the package, no traceback."""
    done = _python("langgraph_agent.py", "--data-dir", str(tmp_path / "data"), "--model", "openai:gpt-4.1-mini")
    assert done.returncode == 2 and "langchain-openai" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


def _typescript_example(tmp_path: Path) -> Path:
    """The example beside the SDK tests/ts installed (the versions are checked to be the same)."""
    ours = json.loads((EXAMPLES / "typescript" / "package.json").read_text())["dependencies"]
    installed = json.loads((TS_DIR / "package.json").read_text())["dependencies"]
    assert ours["@modelcontextprotocol/sdk"] == installed["@modelcontextprotocol/sdk"]
    folder = tmp_path / "example"
    folder.mkdir()
    (folder / "client.mjs").write_text((EXAMPLES / "typescript" / "client.mjs").read_text())
    (folder / "node_modules").symlink_to(TS_DIR / "node_modules")
    return folder


def _node(folder: Path, home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [_need("node"), "client.mjs", *args],
        cwd=folder,
        env=_node_env(home, **env),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )


@pytest.mark.parametrize("confirmed", [True, False])
def test_typescript_client_over_stdio(node_home: Path, tmp_path: Path, confirmed: bool) -> None:
    folder = _typescript_example(tmp_path)
    decline = {} if confirmed else {"TRULOOP_DECLINE": "1"}
    done = _node(folder, node_home, "stdio", TRULOOP, "--data-dir", str(tmp_path / "data"), **decline)
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    _check_client_output(done.stdout, confirmed)


def test_typescript_client_over_http(node_home: Path, tmp_path: Path) -> None:
    folder = _typescript_example(tmp_path)
    with spawn_http_server("--data-dir", str(tmp_path / "data"), env=child_env(TRULOOP_JWT_SECRET=SECRET)) as base:
        done = _node(folder, node_home, "http", f"{base}/mcp", TRULOOP_TOKEN=token("alice"))
        assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
        _check_client_output(done.stdout, confirmed=True)
        refused = _node(folder, node_home, "http", f"{base}/mcp")
        assert refused.returncode == 1 and "invalid_token" in refused.stderr


def test_the_documented_langgraph_block_runs_on_create_agent(tmp_path: Path) -> None:
    """docs/agent-frameworks.md's LangGraph block, run as written (its store under a scratch HOME) with the
    example's stand-in model."""
    page = (EXAMPLES.parent / "docs" / "agent-frameworks.md").read_text(encoding="utf-8")
    section = page.split("\n## LangGraph / LangChain\n", 1)[1]
    block = section.split("```python\n", 1)[1].split("```", 1)[0]
    assert "from langchain.agents import create_agent" in block and "create_react_agent" not in block
    driver = tmp_path / "driver.py"
    driver.write_text(
        f"{block}\n"
        "import sys\n"
        f"sys.path.insert(0, {str(EXAMPLES / 'python')!r})\n"
        "from langgraph_agent import ScriptedModel\n"
        "asyncio.run(main(ScriptedModel()))\n"
    )
    done = subprocess.run(
        [sys.executable, str(driver)],
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        env=child_env(HOME=str(tmp_path / "home")),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "Deprecat" not in done.stderr, done.stderr
    assert done.stdout.startswith("Done: ") and '"forgotten":true' in done.stdout  # confirmed, then run
    assert (tmp_path / "home" / ".local" / "share" / "truloop").is_dir()
