"""relay toolset (see DESIGN section 4); its tools arrive with the issue that implements them."""

from __future__ import annotations

from toolsets.toolset import Toolset

relay_toolset = Toolset("relay")
