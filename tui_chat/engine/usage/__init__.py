"""What was spent: the usage report (``usage.py``) and its words and figures (``usage_text.py``)."""

from tui_chat.engine.usage.usage import Period, UsageReport, UsageRow
from tui_chat.engine.usage.usage_text import (
    bars,
    columns,
    imported_lines,
    miss_line,
    report_lines,
    row_cells,
    usd,
)

__all__ = [
    "Period",
    "UsageReport",
    "UsageRow",
    "bars",
    "columns",
    "imported_lines",
    "miss_line",
    "report_lines",
    "row_cells",
    "usd",
]
