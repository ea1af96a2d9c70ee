"""docs/development.md gives the test services' setup: every Debian package `.ci/run` installs is in its Debian
recipe, and the container recipe starts Redis and PostgreSQL where the tests look for them."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _section(page: str, heading: str) -> str:
    return page.split(f"\n{heading}\n", 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]


def test_the_debian_recipe_installs_what_ci_installs() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    installed = {package for line in re.findall(r"apt-get install -y -qq ([^>]+)", ci) for package in line.split()}
    assert {"redis-server", "bubblewrap", "haproxy", "postgresql", "chromium"} <= installed
    page = (ROOT / "docs" / "development.md").read_text()
    recipe = _section(page, "### On Debian or Ubuntu")
    apt = next(line for line in recipe.splitlines() if "apt-get install" in line).split()
    assert installed <= set(apt), sorted(installed - set(apt))
    assert "createdb test" in recipe


def test_the_container_recipe_serves_the_default_urls() -> None:
    recipe = _section((ROOT / "docs" / "development.md").read_text(), "### With containers")
    assert "127.0.0.1:6379:6379" in recipe and "127.0.0.1:5432:5432" in recipe and "POSTGRES_DB=test" in recipe
    assert "POSTGRES_HOST_AUTH_METHOD=trust" in recipe  # the default TEST_DATABASE_URL has no password
