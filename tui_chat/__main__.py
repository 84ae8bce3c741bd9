"""Allow ``python -m tui_chat``."""

from tui_chat.cli import main

raise SystemExit(main())
